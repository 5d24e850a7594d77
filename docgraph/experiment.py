"""Experiments: a training run from a configuration to its run directory, and runs over seeds.

:func:`run_experiment` loads the corpus, builds the vocabularies, the pretrained vectors and
(with ``--lm``) the contextual features, trains with :class:`~docgraph.training.Trainer`,
selects on dev, scores dev and test once, and writes ``metrics.json`` and
``learning_curve.png`` beside the model directory the trainer keeps.
"""

from __future__ import annotations

import datetime as _dt
import logging
import statistics
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from docgraph.atomic import atomic_write
from docgraph.checkpoint import atomic_write_json
from docgraph.config import ExperimentConfig
from docgraph.data.contextual import ContextualEncoder, cached_features, lm_record
from docgraph.data.registry import load_dataset
from docgraph.distributed import is_main_process
from docgraph.inference import evaluate, split_consistency
from docgraph.machine import cpu_model, resolve_device
from docgraph.model_dir import build_model, load_model_weights
from docgraph.splits import build_vocabularies, prepare_split
from docgraph.training import Trainer, seed_everything, stop_reason, training_threads

log = logging.getLogger("docgraph")


def _command_line() -> str:
    return " ".join([Path(sys.argv[0]).name if sys.argv else "python", *sys.argv[1:]])


def learning_curve(history: list[dict[str, Any]], path: Path) -> None:
    """Plot training loss and dev F1 per epoch to a PNG (atomically).

    Uses a bare :class:`matplotlib.figure.Figure`, so the caller's pyplot backend is untouched.
    """
    epochs = [r["epoch"] for r in history]
    fig = Figure(figsize=(6, 3.5))
    FigureCanvasAgg(fig)
    ax1 = fig.add_subplot()
    ax1.plot(epochs, [r["loss"] for r in history], color="tab:gray", label="train loss")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("train loss")
    ax2 = ax1.twinx()
    ax2.plot(epochs, [r["dev_f1"] for r in history], color="tab:blue", marker="o", ms=3,
             label="dev F1")
    ax2.set_ylabel("dev F1 (%)")
    fig.legend(loc="lower center", ncol=2, frameon=False)
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=100))


def run_experiment(config: ExperimentConfig, resume: bool = False, progress: bool = False
                   ) -> dict[str, Any]:
    """Train, select on dev, evaluate once on test, and write the run directory.

    Returns:
        The content of ``metrics.json``.
    """
    threads = training_threads(config.train.threads, resolve_device(config.device),
                               distributed=dist.is_initialized())
    if threads > 0:
        torch.set_num_threads(threads)
    output_dir = Path(config.output_dir)
    if resume and not (output_dir / "last.pt").is_file():
        raise ValueError(f"--resume {output_dir}: no checkpoint last.pt to resume from")
    seed_everything(config.seed)
    splits = load_dataset(config.dataset, config.data_dir)
    vocabs, pretrained, coverage = build_vocabularies(splits, config.embeddings)
    if coverage is not None and is_main_process():
        log.info("pretrained vector coverage: %s", coverage)
    if pretrained is not None and pretrained.size(1) != config.model.word_dim:
        config = replace(config, model=replace(config.model, word_dim=int(pretrained.size(1))))
    lm_features: dict[str, Any] = {}
    if config.lm is not None:
        encoder = ContextualEncoder.from_config(config, device=str(resolve_device(config.device)))
        # In a multi-process run the first process computes and caches the features while the
        # others wait, then read the cache (instead of every process computing them).
        if not is_main_process():
            dist.barrier()
        show = progress and is_main_process()
        lm_features = {
            name: cached_features(docs, encoder, config.lm_cache_dir,
                                  f"{config.dataset}-{name}", progress=show)
            for name, docs in splits.items()
        }
        if is_main_process() and dist.is_initialized():
            dist.barrier()
        config = replace(config, model=replace(config.model, lm_dim=encoder.dim))
        if is_main_process():
            atomic_write_json(output_dir / "lm.json", lm_record(encoder))
        del encoder
    elif config.model.lm_dim:
        raise ValueError(f"model.lm_dim is {config.model.lm_dim} but no language model is "
                         "given (--lm PATH)")
    prepared = {name: prepare_split(docs, vocabs, config, lm_features.get(name))
                for name, docs in splits.items()}
    seed_everything(config.seed)
    model = build_model(config.model, vocabs, pretrained)
    trainer = Trainer(model, vocabs, config, prepared["train"], prepared["dev"], output_dir,
                      progress=progress)
    state = trainer.fit(resume=resume)
    if not is_main_process():
        return {}
    # the trainer saved this config and vocabulary beside the weights: read only the weights
    best = load_model_weights(output_dir, config, vocabs, trainer.device)
    best.set_epoch(state.best_epoch)  # as it was when selected (pruning warm-up)
    results: dict[str, Any] = {}
    consistency: dict[str, Any] = {}
    for name in ("dev", "test"):
        if name in prepared:
            scores, predictions = evaluate(best, prepared[name], vocabs,
                                           config.train.eval_batch_tokens, trainer.device)
            results[name] = scores.to_dict()
            consistency[name] = split_consistency(prepared[name], predictions).to_dict()
    metrics = {
        **results,
        "epochs": state.epoch,
        "best_epoch": state.best_epoch,
        "train_seconds": round(state.train_seconds, 2),
        "seed": config.seed,
        "config": config.to_dict(),
        "command": _command_line(),
        "embedding_coverage": coverage,
        "consistency": consistency,
        "torch": torch.__version__,
        "device": str(trainer.device),
        "stop_reason": stop_reason(state, config.train),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M"),
        "processes": trainer.world,
        "threads": torch.get_num_threads(),
        "cpu": cpu_model(),
        **({"hardware": torch.cuda.get_device_name(trainer.device)}
           if trainer.device.type == "cuda" else {}),
    }
    atomic_write_json(output_dir / "metrics.json", metrics)
    learning_curve(state.history, output_dir / "learning_curve.png")
    return metrics


def run_seeds(config: ExperimentConfig, seeds: Sequence[int], progress: bool = False
              ) -> dict[str, Any]:
    """Run the same configuration with several seeds; write ``summary.json`` (mean ± std)."""
    base = Path(config.output_dir)
    runs = []
    for seed in seeds:
        cfg = replace(config, seed=seed, output_dir=str(base / f"seed-{seed}"))
        runs.append(run_experiment(cfg, progress=progress))
    if not is_main_process():  # the other processes of a data-parallel run hold no results
        return {}
    summary: dict[str, Any] = {
        "seeds": list(seeds), "runs": [str(base / f"seed-{s}") for s in seeds]
    }
    for split in ("dev", "test"):
        for key in ("precision", "recall", "f1"):
            values = [r[split][key] for r in runs if split in r]
            if values:
                summary[f"{split}_{key}_mean"] = statistics.fmean(values)
                summary[f"{split}_{key}_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    summary["command"] = _command_line()
    atomic_write_json(base / "summary.json", summary)
    return summary
