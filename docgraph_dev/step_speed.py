"""Training-step and tagging speed of both models on one device, CUDA included.

Each model runs timed :func:`~docgraph.training.loop.training_step` calls (forward, backward,
clipping, fused Adam) at several token budgets, the device synchronised around them, then
tags the dev split; :func:`profile_step` says where one step's time goes.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Sequence
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile
from torch_geometric.data import Batch

from docgraph.batching.loader import collate
from docgraph.config import TrainConfig
from docgraph.config.tagging import DEFAULT_BATCH_TOKENS
from docgraph.data.registry import load_dataset
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDoc, GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.runtime.determinism import set_deterministic
from docgraph.runtime.machine import cpu_model, resolve_device
from docgraph.tagging.inference import predict_graphs
from docgraph.training.loop import clip_groups, make_optimizer, training_step
from docgraph_dev.batches import select_batch_indices
from docgraph_dev.breakdown import component_parts


def profile_step(model: GCDoc, optimizer: torch.optim.Optimizer, groups: list, batch: Batch,
                 clip_norm: float, device: torch.device, top: int = 12) -> dict[str, Any]:
    """Where one training step's time goes (``--step-speed --profile``).

    One profiled :func:`~docgraph.training.loop.training_step` on ``batch`` (after the timed
    steps, so warm): on CUDA the kernels it launched, their summed device time against the
    step's wall time (the fraction of the step the GPU is busy) and the ``top`` kernels by
    time; on a CPU the ``top`` operators by self CPU time. Then each component's forward +
    backward alone (:func:`~docgraph_dev.breakdown.component_parts`), synchronised, mean of
    three calls.
    """
    cuda = device.type == "cuda"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(device)

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    sync()
    start = time.perf_counter()
    with profile(activities=activities) as prof:
        training_step(model, optimizer, batch, groups, clip_norm)
        sync()
    wall_ms = 1000 * (time.perf_counter() - start)
    per_name: dict[str, list[float]] = {}
    kernels, kernel_us = 0, 0.0
    for event in prof.events():
        if cuda and event.device_type == torch.autograd.DeviceType.CUDA:
            kernels += 1
            kernel_us += event.device_time
            entry = per_name.setdefault(event.name, [0, 0.0])
            entry[0] += 1
            entry[1] += event.device_time
        elif not cuda and event.name.startswith("aten::"):
            entry = per_name.setdefault(event.name, [0, 0.0])
            entry[0] += 1
            entry[1] += event.self_cpu_time_total
    ranked = sorted(per_name.items(), key=lambda kv: -kv[1][1])[:top]
    components: dict[str, float] = {}
    for name, fn in component_parts(model, batch).items():
        fn()
        sync()
        start = time.perf_counter()
        for _ in range(3):
            fn()
        sync()
        components[name] = 1000 * (time.perf_counter() - start) / 3
        model.zero_grad(set_to_none=True)
    model.train()
    return {
        "profiled_wall_ms": wall_ms,
        "kernels": kernels if cuda else None,
        "kernel_ms": kernel_us / 1000 if cuda else None,
        "kernel_busy_fraction": kernel_us / 1000 / wall_ms if cuda and wall_ms else None,
        "top": [{"name": name[:120], "calls": int(calls), "ms": us / 1000}
                for name, (calls, us) in ranked],
        "top_by": "CUDA kernel time" if cuda else "self CPU time of aten operators",
        "components_ms": components,
    }


def run_step_speed(dataset: str, data_dir: str | None, device: str = "cpu",
                   budgets: Sequence[int] = (4000, 16000, 32000), steps: int = 8,
                   warmup: int = 2, seed: int = 0, command: str = "",
                   profiled: bool = False, deterministic: bool = False,
                   precision: str = "fp32") -> dict[str, Any]:
    """Training-step and tagging speed of both models on one device (``--step-speed``).

    For every token budget, the first ``warmup + steps`` batches of the training sampler's
    shuffled epoch are collated once, with their plans, onto ``device``; each model then runs
    ``warmup`` untimed and ``steps`` timed training steps (:func:`~docgraph.training.loop.
    training_step`: forward, backward, clipping, fused Adam), the device synchronised before
    and after. The epoch estimate is the training split's tokens over the measured tokens/s.
    Tagging: :func:`~docgraph.tagging.inference.predict_graphs` over the whole dev split
    (batches of :data:`~docgraph.config.tagging.DEFAULT_BATCH_TOKENS`), timed end to end. With
    ``profiled``, each row also holds :func:`profile_step` of one more batch; with
    ``deterministic``, everything runs under :func:`~docgraph.runtime.determinism.
    set_deterministic` (its cost on a GPU); ``precision`` is both models'
    :attr:`~docgraph.model.GCDocConfig.precision`.
    """
    if deterministic:
        set_deterministic()
    dev_ = resolve_device(device)

    def sync() -> None:
        if dev_.type == "cuda":
            torch.cuda.synchronize(dev_)

    splits = load_dataset(dataset, data_dir, splits=("train", "dev"))
    vocabs = Vocabularies.build(splits["train"])
    train = documents_to_graphs(splits["train"], vocabs, GraphConfig())
    dev = documents_to_graphs(splits["dev"], vocabs, GraphConfig())
    lengths = [int(g.num_nodes) for g in train]
    train_tokens, dev_tokens = sum(lengths), sum(int(g.num_nodes) for g in dev)
    config = TrainConfig(optimizer="adam", lr=0.002, clip_norm=5.0)
    rows: list[dict[str, Any]] = []
    tagging: dict[str, float] = {}
    for name, model_config in (("baseline", GCDocConfig.baseline(precision=precision)),
                               ("gcdoc", GCDocConfig(precision=precision))):
        torch.manual_seed(seed)
        model = build_model(model_config, vocabs).to(dev_)
        optimizer = make_optimizer(model, config)
        groups = clip_groups(model)
        for budget in budgets:
            chosen = select_batch_indices(lengths, budget, warmup + steps + profiled, seed)
            batches = [collate(train, b, dev_, model) for b in chosen]
            model.train()
            for batch in batches[:warmup]:
                training_step(model, optimizer, batch, groups, config.clip_norm)
            timed = batches[warmup:warmup + steps]
            sync()
            start = time.perf_counter()
            for batch in timed:
                training_step(model, optimizer, batch, groups, config.clip_norm)
            sync()
            seconds = time.perf_counter() - start
            tokens = sum(int(b.num_nodes) for b in timed)
            rows.append({
                "model": name, "batch_tokens": budget, "steps": len(timed), "tokens": tokens,
                "ms_per_step": 1000 * seconds / max(len(timed), 1),
                "tokens_per_s": tokens / seconds,
                "epoch_seconds_estimate": train_tokens / (tokens / seconds),
            })
            if profiled:
                rows[-1]["profile"] = profile_step(model, optimizer, groups, batches[-1],
                                                   config.clip_norm, dev_)
        sync()
        start = time.perf_counter()
        predict_graphs(model, dev, vocabs, DEFAULT_BATCH_TOKENS, dev_)
        sync()
        tagging[name] = time.perf_counter() - start
    return {
        "dataset": dataset, "device": str(dev_),
        "hardware": torch.cuda.get_device_name(dev_) if dev_.type == "cuda" else cpu_model(),
        "threads": torch.get_num_threads(), "train_tokens": train_tokens,
        "dev_tokens": dev_tokens, "rows": rows, "dev_tagging_seconds": tagging,
        "deterministic": deterministic, "precision": precision,
        "torch": torch.__version__, "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "command": command,
    }


def format_step_speed(result: dict[str, Any]) -> str:
    """A plain-text table of a :func:`run_step_speed` result."""
    mode = result.get("precision", "fp32") + (", deterministic"
                                               if result.get("deterministic") else "")
    lines = [f"{result['dataset']} on {result['hardware']} ({result['device']}, {mode})",
             f"{'model':<9} {'budget':>6} {'ms/step':>8} {'tokens/s':>9} {'epoch s (est.)':>15}"]
    for r in result["rows"]:
        lines.append(f"{r['model']:<9} {r['batch_tokens']:>6} {r['ms_per_step']:>8.1f} "
                     f"{r['tokens_per_s']:>9.0f} {r['epoch_seconds_estimate']:>15.1f}")
    for name, seconds in result["dev_tagging_seconds"].items():
        lines.append(f"dev tagging ({result['dev_tokens']} tokens), {name}: {seconds:.1f} s")
    for r in result["rows"]:
        prof = r.get("profile")
        if not prof:
            continue
        head = f"profile {r['model']} {r['batch_tokens']}: wall {prof['profiled_wall_ms']:.1f} ms"
        if prof["kernels"] is not None:
            head += (f", {prof['kernels']} kernels, {prof['kernel_ms']:.1f} ms busy "
                     f"({prof['kernel_busy_fraction']:.2f} of the step)")
        lines.append(head)
        lines.append("  components (ms): " + ", ".join(
            f"{k} {v:.1f}" for k, v in prof["components_ms"].items()))
        lines.append(f"  top by {prof['top_by']}:")
        lines.extend(f"    {t['ms']:9.2f} ms {t['calls']:6d}x  {t['name'][:90]}"
                     for t in prof["top"])
    return "\n".join(lines)
