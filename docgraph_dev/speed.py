"""Speed of GCDoc against the BiLSTM-CRF baseline, every measurement on the same batches.

One record holds the read and graph-construction times, both models' training and inference
throughput (:mod:`docgraph_dev.throughput`) and cost ratios (targets: train <= 3x,
inference <= 4x), the per-component breakdown of GCDoc's training step
(:mod:`docgraph_dev.breakdown`), and the analytic FLOPs, achieved GFLOP/s and the machine's
matmul GFLOP/s on the same thread count (:mod:`docgraph_dev.flops`).
"""

from __future__ import annotations

import datetime as _dt
import platform
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from docgraph.data.registry import load_dataset
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig
from docgraph.model import GCDoc, GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.runtime.machine import cpu_model, peak_rss_mib
from docgraph_dev.batches import select_batches
from docgraph_dev.breakdown import time_components
from docgraph_dev.core_scaling import format_scaling
from docgraph_dev.flops import (
    FLOPS_NOTE,
    MATMUL_FRACTION_TARGET,
    flops_per_token_by_component,
    matmul_gflops,
)
from docgraph_dev.throughput import (
    TIMING_NOTE,
    cost_ratios,
    inference_pass,
    throughput_record,
    time_graph_build,
    training_pass,
)
from docgraph_dev.timing import time_interleaved


@dataclass
class SpeedOptions:
    """What to measure and how often.

    Args:
        dataset: Registry name (``conll03``, ``ontonotes``, ``sample``, ...).
        data_dir: Directory of the split files (``None`` for ``sample``).
        quick: Fewer batches and repeats, graph build timed once.
        threads: Torch intra-op threads (``0`` keeps torch's current setting).
        batch_tokens: Token budget per batch (the CoNLL-2003 and OntoNotes presets').
        num_batches: Batches timed per repeat (``None``: 2 quick, 8 full).
        repeats: Repeats of the batch list (``None``: 1 quick, 3 full).
        warmup: Warm-up steps before timing.
        graph_repeats: Repeats of the graph build (``None``: 1 quick, 3 full).
        matmul_size: Side of the square float32 matmul of the hardware reference.
        seed: Seed of the batch sampling and model initialisation.
        model_overrides: Extra :class:`~docgraph.model.GCDocConfig` fields applied to both
            models (e.g. tiny sizes in tests).
    """

    dataset: str = "conll03"
    data_dir: str | None = None
    quick: bool = False
    threads: int = 0
    batch_tokens: int = 4000
    num_batches: int | None = None
    repeats: int | None = None
    warmup: int = 2
    graph_repeats: int | None = None
    matmul_size: int = 1024
    seed: int = 0
    model_overrides: dict[str, Any] = field(default_factory=dict)

    def resolved(self) -> tuple[int, int, int]:
        """``(num_batches, repeats, graph_repeats)`` after applying the quick defaults."""
        return (
            self.num_batches or (2 if self.quick else 8),
            self.repeats or (1 if self.quick else 3),
            self.graph_repeats or (1 if self.quick else 3),
        )


def measure_speed(options: SpeedOptions, command: str = "") -> dict[str, Any]:
    """Run every measurement of the speed comparison and return its JSON-serialisable record.

    Args:
        options: What to measure.
        command: The command line to record.
    """
    if options.threads > 0:
        torch.set_num_threads(options.threads)
    num_batches, repeats, graph_repeats = options.resolved()
    start = time.perf_counter()
    splits = load_dataset(options.dataset, options.data_dir, splits=("train",))
    read_seconds = time.perf_counter() - start
    train_docs = splits["train"]
    vocabs = Vocabularies.build(train_docs)
    graphs, graph_seconds = time_graph_build(train_docs, vocabs, GraphConfig(), graph_repeats)
    num_tokens = sum(int(g.num_nodes) for g in graphs)

    start = time.perf_counter()
    batches = select_batches(graphs, options.batch_tokens, num_batches, options.seed)
    collate_ms = 1000 * (time.perf_counter() - start) / len(batches)
    tokens = sum(int(b.num_nodes) for b in batches)

    models: dict[str, GCDoc] = {}
    for name, cfg in (
        ("baseline", GCDocConfig.baseline(**options.model_overrides)),
        ("gcdoc", GCDocConfig(**options.model_overrides)),
    ):
        torch.manual_seed(options.seed)
        models[name] = build_model(cfg, vocabs)
    warm = options.warmup
    train = time_interleaved(
        {n: training_pass(m, batches, warm) for n, m in models.items()}, repeats
    )
    infer = time_interleaved(
        {n: inference_pass(m, batches, warm) for n, m in models.items()}, repeats
    )
    results = {
        n: throughput_record(m, batches, tokens, train[n], infer[n]) for n, m in models.items()
    }

    gcdoc = models["gcdoc"]
    components = time_components(gcdoc, batches, repeats)
    flops_parts = flops_per_token_by_component(gcdoc, batches)
    # Residual of the whole step (embeddings, dropout, Adam, glue); negative = timing noise.
    components["other (step - sum of parts)"] = results["gcdoc"]["train_ms_per_batch"] - sum(
        components.values()
    )
    hardware = matmul_gflops(options.matmul_size)
    return {
        "dataset": options.dataset,
        "data_dir": options.data_dir,
        "quick": options.quick,
        "read_seconds": read_seconds,
        "graph_build_seconds": graph_seconds,
        "graph_build_repeats": graph_repeats,
        "train_documents": len(train_docs),
        "train_graphs": len(graphs),
        "train_tokens": num_tokens,
        "graph_build_tokens_per_s": num_tokens / graph_seconds,
        "batch_tokens": options.batch_tokens,
        "num_batches": len(batches),
        "batch_token_counts": [int(b.num_nodes) for b in batches],
        "timed_tokens_per_pass": tokens,
        "repeats": repeats,
        "warmup_batches": options.warmup,
        "collate_ms_per_batch": collate_ms,
        "optimizer": "Adam",
        "model_overrides": dict(options.model_overrides),
        "baseline": results["baseline"],
        "gcdoc": results["gcdoc"],
        **cost_ratios(results["baseline"], results["gcdoc"]),
        "timing_note": TIMING_NOTE,
        "gcdoc_components_ms_per_batch": components,
        "gcdoc_forward_flops_per_token_by_component": flops_parts,
        "flops_note": FLOPS_NOTE,
        "matmul_size": options.matmul_size,
        "matmul_gflops_per_s": hardware,
        "gcdoc_train_fraction_of_matmul_peak": results["gcdoc"]["train_gflops_per_s"] / hardware,
        "gcdoc_train_fraction_target": MATMUL_FRACTION_TARGET,
        "gcdoc_train_fraction_met": (
            results["gcdoc"]["train_gflops_per_s"] / hardware >= MATMUL_FRACTION_TARGET
        ),
        "baseline_train_fraction_of_matmul_peak": (
            results["baseline"]["train_gflops_per_s"] / hardware
        ),
        "peak_rss_mib": peak_rss_mib(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "command": command,
    }


def format_speed_table(result: dict[str, Any]) -> str:
    """A readable plain-text summary of a :func:`measure_speed` result."""
    b, g = result["baseline"], result["gcdoc"]
    lines = [
        f"dataset {result['dataset']}  threads {result['threads']}  torch {result['torch']}  "
        f"cpu {result['cpu']}",
        f"read {result['read_seconds']:.2f}s  graph build {result['graph_build_seconds']:.2f}s "
        f"({result['train_graphs']} graphs, {result['train_tokens']} tokens, "
        f"median of {result['graph_build_repeats']})",
        f"{result['num_batches']} batches x {result['repeats']} repeats, "
        f"{result['timed_tokens_per_pass']} tokens per pass (budget {result['batch_tokens']})",
        "",
        f"{'':24}{'baseline':>14}{'gcdoc':>14}{'ratio':>9}",
        f"{'train tokens/s':24}{b['train_tokens_per_s']:14.1f}{g['train_tokens_per_s']:14.1f}"
        f"{result['train_cost_ratio']:9.2f}",
        f"{'infer tokens/s':24}{b['infer_tokens_per_s']:14.1f}{g['infer_tokens_per_s']:14.1f}"
        f"{result['infer_cost_ratio']:9.2f}",
        f"{'ratio by CPU time':24}{'':28}{result['train_cost_ratio_cpu_time']:9.2f}"
        f"  (train)  {result['infer_cost_ratio_cpu_time']:.2f} (infer)",
        f"{'fwd MFLOP/token':24}{b['forward_flops_per_token'] / 1e6:14.2f}"
        f"{g['forward_flops_per_token'] / 1e6:14.2f}",
        f"{'train GFLOP/s':24}{b['train_gflops_per_s']:14.2f}{g['train_gflops_per_s']:14.2f}",
        f"{'matmul GFLOP/s':24}{result['matmul_gflops_per_s']:14.2f}"
        f"  ({result['matmul_size']}x{result['matmul_size']} float32)",
        f"GCDoc train GFLOP/s / matmul GFLOP/s: "
        f"{result['gcdoc_train_fraction_of_matmul_peak']:.2f} (target >= "
        f"{result['gcdoc_train_fraction_target']}: "
        f"{'met' if result['gcdoc_train_fraction_met'] else 'NOT met'})",
        "",
        "GCDoc train step by component (fwd+bwd, ms/batch; fwd MFLOP/token):",
    ]
    flops = result["gcdoc_forward_flops_per_token_by_component"]
    for name, ms in result["gcdoc_components_ms_per_batch"].items():
        extra = f"{flops[name] / 1e6:10.2f}" if name in flops else ""
        lines.append(f"  {name:40}{ms:10.1f}{extra}")
    lines.append(f"  {'total train step':40}{g['train_ms_per_batch']:10.1f}")
    lines.append(f"peak RSS {result['peak_rss_mib']:.0f} MiB")
    if "scaling" in result:
        lines += ["", "Core settings (same batches; fresh processes each):",
                  format_scaling(result["scaling"])]
        for setting, models in result["epoch_minutes_estimate"].items():
            lines.append(f"  estimated epoch (train + dev tagging) with {setting}: " + ", ".join(
                f"{m} {v:.1f} min" for m, v in models.items()))
    return "\n".join(lines)


def epoch_minutes(scaling: dict[str, Any], train_tokens: int, dev_tokens: int
                  ) -> dict[str, dict[str, float]]:
    """Epoch wall time implied by each setting's throughput: training on ``train_tokens`` plus
    tagging ``dev_tokens`` for model selection (minutes; graph building and checkpoints are
    not included)."""
    return {
        setting: {
            model: (train_tokens / r[model]["train_tokens_per_s"]
                    + dev_tokens / r[model]["infer_tokens_per_s"]) / 60
            for model in ("baseline", "gcdoc")
        }
        for setting, r in scaling["settings"].items()
    }
