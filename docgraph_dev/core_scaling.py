"""Do both cores pay? Training and tagging throughput per core setting, side by side.

Three settings are measured, each in fresh processes, on the *same* list of batches:

* ``1 thread``: one process, one intra-op thread;
* ``2 threads``: one process, two intra-op threads;
* ``DDP x2``: two single-threaded processes (gloo). For training, every batch of the list is
  split into two halves of whole documents, one per process, and the gradients are averaged
  by :class:`~torch.nn.parallel.DistributedDataParallel` -- exactly what
  ``scripts/train.py`` does with ``--processes 2`` (the global batch keeps its token budget).
  For tagging, each process tags its half of the documents (as
  :func:`~docgraph.tagging.inference.evaluate_sharded` does).

The speed-up of a setting is its tokens/s over the ``1 thread`` tokens/s of the same model,
on the same tokens. The target is a speed-up of at least :data:`SPEEDUP_TARGET` for training
and tagging with two cores.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch_geometric.data import Batch

from docgraph.data.registry import load_dataset
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig, GCDocOutput
from docgraph.persistence.model_dir import build_model
from docgraph.runtime.machine import peak_rss_mib
from docgraph.runtime.processes import spawn
from docgraph.training.loop import training_step
from docgraph_dev.batches import select_batch_indices, split_batch

SPEEDUP_TARGET = 1.8

#: name -> (processes, threads per process)
SETTINGS: dict[str, tuple[int, int]] = {
    "1 thread": (1, 1),
    "2 threads": (1, 2),
    "DDP x2": (2, 1),
}


@dataclass
class ScalingOptions:
    """What the core-scaling benchmark measures.

    Args:
        dataset: Registry name of the corpus.
        data_dir: Its directory (``None`` for ``sample``).
        batch_tokens: Global token budget of a batch.
        num_batches: Batches of the list.
        repeats: Timed passes over the list (the median is kept).
        warmup: Untimed steps first.
        seed: Seed of the batch selection and of the models.
        model_overrides: :class:`~docgraph.model.GCDocConfig` fields for both models.
        settings: Which of :data:`SETTINGS` to run.
    """

    dataset: str = "conll03"
    data_dir: str | None = None
    batch_tokens: int = 4000
    num_batches: int = 6
    repeats: int = 2
    warmup: int = 2
    seed: int = 0
    model_overrides: dict[str, Any] = field(default_factory=dict)
    settings: tuple[str, ...] = tuple(SETTINGS)


def _prepare(options: ScalingOptions, world: int, rank: int):
    """Graphs, this process's share of each batch of the list, vocabularies."""
    docs = load_dataset(options.dataset, options.data_dir, splits=("train",))["train"]
    vocabs = Vocabularies.build(docs)
    graphs = documents_to_graphs(docs, vocabs, GraphConfig())
    lengths = [int(g.num_nodes) for g in graphs]
    chosen = select_batch_indices(lengths, options.batch_tokens, options.num_batches,
                                  options.seed)
    mine = [split_batch(idx, lengths, world)[rank] for idx in chosen]
    batches = [Batch.from_data_list([graphs[i] for i in idx]) if idx else None for idx in mine]
    return batches, vocabs, sum(lengths[i] for idx in chosen for i in idx)


def _timed_passes(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        if dist.is_initialized():
            dist.barrier()
        start = time.perf_counter()
        run()
        if dist.is_initialized():
            dist.barrier()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class LossScaled(nn.Module):
    """``network`` with the loss of its output multiplied by ``weight``.

    A DDP process without a share of a batch steps through
    :func:`~docgraph.training.loop.training_step` with ``LossScaled(network, 0.0)`` on a real batch:
    it joins the gradient all-reduce with zero gradients, so DDP's collective calls stay
    matched and the other processes' gradients are averaged as in training.
    """

    def __init__(self, network: nn.Module, weight: float) -> None:
        super().__init__()
        self.network = network
        self.weight = weight

    def forward(self, batch: Batch) -> GCDocOutput:
        out = self.network(batch)
        return replace(out, loss=out.loss * self.weight)


def _measure_model(name: str, options: ScalingOptions, batches: list, vocabs,
                   tokens: int) -> dict[str, float]:
    cfg = (GCDocConfig.baseline(**options.model_overrides) if name == "baseline"
           else GCDocConfig(**options.model_overrides))
    torch.manual_seed(options.seed)
    model = build_model(cfg, vocabs)
    network: nn.Module = model
    if dist.is_initialized() and dist.get_world_size() > 1:
        network = nn.parallel.DistributedDataParallel(model)
    idle = LossScaled(network, 0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    present = [b for b in batches if b is not None]

    def step(batch: Batch | None) -> None:
        # A process without graphs in this batch still joins the gradient all-reduce with a
        # zero loss over a real batch, so DDP's collective calls stay matched.
        if batch is None:
            training_step(idle, optimizer, present[0])
        else:
            training_step(network, optimizer, batch)

    model.train()
    for k in range(options.warmup):
        step(batches[k % len(batches)])
    train_s = _timed_passes(lambda: [step(b) for b in batches], options.repeats)
    for k in range(options.warmup):
        model.predict(present[k % len(present)])
    infer_s = _timed_passes(lambda: [model.predict(b) for b in present], options.repeats)
    return {"train_tokens_per_s": tokens / train_s, "infer_tokens_per_s": tokens / infer_s,
            "train_seconds_per_pass": train_s, "infer_seconds_per_pass": infer_s}


def _setting_worker(options: ScalingOptions, out_path: str) -> None:
    world = dist.get_world_size() if dist.is_initialized() else 1
    rank = dist.get_rank() if dist.is_initialized() else 0
    batches, vocabs, tokens = _prepare(options, world, rank)
    result: dict[str, Any] = {
        name: _measure_model(name, options, batches, vocabs, tokens)
        for name in ("baseline", "gcdoc")
    }
    rss = torch.tensor([peak_rss_mib()], dtype=torch.float64)
    if dist.is_initialized():
        dist.all_reduce(rss)  # all processes' peaks together
    result.update(tokens_per_pass=tokens, threads=torch.get_num_threads(), processes=world,
                  peak_rss_mib_all_processes=float(rss))
    if rank == 0:
        Path(out_path).write_text(json.dumps(result))


def measure_setting(options: ScalingOptions, setting: str) -> dict[str, Any]:
    """Measure one of :data:`SETTINGS` in fresh processes; returns its result dictionary."""
    processes, threads = SETTINGS[setting]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        spawn(_setting_worker, processes, options, str(out), threads=threads)
        return json.loads(out.read_text())


def speedups(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Tokens/s of every setting over the ``1 thread`` tokens/s, per model and kind.

    Raises:
        ValueError: If the settings did not time the same number of tokens.
    """
    reference = results["1 thread"]
    counts = {name: r["tokens_per_pass"] for name, r in results.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"settings timed different batches: {counts}")
    out: dict[str, dict[str, float]] = {}
    for name, result in results.items():
        if name == "1 thread":
            continue
        out[name] = {
            f"{model}_{kind}": result[model][f"{kind}_tokens_per_s"]
            / reference[model][f"{kind}_tokens_per_s"]
            for model in ("baseline", "gcdoc")
            for kind in ("train", "infer")
        }
    return out


def run_scaling(options: ScalingOptions) -> dict[str, Any]:
    """Measure every setting of ``options.settings`` and the speed-ups over one thread."""
    results = {name: measure_setting(options, name) for name in options.settings}
    out: dict[str, Any] = {"options": asdict(options), "settings": results}
    if "1 thread" in results and len(results) > 1:
        ups = speedups(results)
        out["speedup_over_1_thread"] = ups
        out["speedup_target"] = SPEEDUP_TARGET
        out["speedup_target_met"] = {
            name: {key: value >= SPEEDUP_TARGET for key, value in values.items()}
            for name, values in ups.items()
        }
    return out


def format_scaling(result: dict[str, Any]) -> str:
    """A plain-text table of :func:`run_scaling`'s result."""
    lines = [f"{'setting':12}{'model':>10}{'train tok/s':>14}{'speed-up':>10}"
             f"{'infer tok/s':>14}{'speed-up':>10}"]
    ups = result.get("speedup_over_1_thread", {})
    for name, r in result["settings"].items():
        for model in ("baseline", "gcdoc"):
            up = ups.get(name, {})
            train_up = f"{up[f'{model}_train']:.2f}" if up else "1.00"
            infer_up = f"{up[f'{model}_infer']:.2f}" if up else "1.00"
            lines.append(f"{name:12}{model:>10}{r[model]['train_tokens_per_s']:14.0f}"
                         f"{train_up:>10}{r[model]['infer_tokens_per_s']:14.0f}{infer_up:>10}")
    if ups:
        lines.append(f"target: speed-up >= {result['speedup_target']} with two cores")
    return "\n".join(lines)
