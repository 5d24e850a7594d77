"""Throughput of graph construction, training and inference, and the models' cost ratios.

Training runs :func:`~docgraph.training.loop.training_step` (forward, backward, Adam);
inference runs :meth:`~docgraph.model.GCDoc.predict`, GCDoc's ``T`` Monte-Carlo passes
included. The passes of both models are timed interleaved (:func:`~docgraph_dev.timing.
time_interleaved`), so their ratios hold on a shared machine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch_geometric.data import Batch

from docgraph.data.document import Document
from docgraph.data.vocab import Vocabularies
from docgraph.graph import DocumentGraph, GraphConfig, documents_to_graphs
from docgraph.model import GCDoc
from docgraph.training.loop import training_step
from docgraph_dev.flops import model_flops, train_step_flops
from docgraph_dev.timing import median_seconds

#: How the times of a speed record are taken (its ``timing_note``).
TIMING_NOTE = (
    "ratios use wall-clock medians; the models' repeats are interleaved; the *_cpu_*"
    " fields use process CPU time, less sensitive to other jobs on a loaded machine"
)


def time_graph_build(documents: Sequence[Document], vocabs: Vocabularies,
                     config: GraphConfig, repeats: int) -> tuple[list[DocumentGraph], float]:
    """The graphs of ``documents`` and the median seconds of building them
    (:func:`~docgraph.graph.documents_to_graphs`) over ``repeats`` builds."""
    graphs: list[DocumentGraph] = []

    def build() -> None:
        graphs[:] = documents_to_graphs(documents, vocabs, config)

    return graphs, median_seconds(build, repeats)


def training_pass(model: GCDoc, batches: Sequence[Batch], warmup: int) -> Callable[[], object]:
    """A closure running one training step per batch (:func:`~docgraph.training.loop.
    training_step`: loss per sentence, Adam, no clipping), after ``warmup`` warm-up steps."""
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for k in range(warmup):
        training_step(model, optimizer, batches[k % len(batches)])

    def run() -> None:
        model.train()
        for b in batches:
            training_step(model, optimizer, b)

    return run


def inference_pass(model: GCDoc, batches: Sequence[Batch], warmup: int) -> Callable[[], object]:
    """A closure running :meth:`GCDoc.predict` on every batch, after ``warmup`` calls."""
    for k in range(warmup):
        model.predict(batches[k % len(batches)])
    return lambda: [model.predict(b) for b in batches]


def throughput_record(
    model: GCDoc,
    batches: Sequence[Batch],
    tokens: int,
    train: tuple[float, float],
    infer: tuple[float, float],
) -> dict[str, Any]:
    """One model's entry of a speed record: its size, tokens/s and GFLOP/s.

    Args:
        model: The model timed.
        batches: The batches of one pass.
        tokens: The tokens of ``batches``.
        train: ``(wall, CPU)`` seconds of one training pass (:func:`training_pass`).
        infer: ``(wall, CPU)`` seconds of one inference pass (:func:`inference_pass`).
    """
    (train_s, train_cpu), (infer_s, infer_cpu) = train, infer
    flops_train = sum(model_flops(model, b, training=True)["total"] for b in batches)
    flops_infer = sum(model_flops(model, b, training=False)["total"] for b in batches)
    fwd_bwd = sum(train_step_flops(model, b) for b in batches)
    return {
        "config": model.config.to_dict(),
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_seconds_per_pass": train_s,
        "train_cpu_seconds_per_pass": train_cpu,
        "train_ms_per_batch": 1000 * train_s / len(batches),
        "train_tokens_per_s": tokens / train_s,
        "train_tokens_per_cpu_s": tokens / train_cpu,
        "infer_seconds_per_pass": infer_s,
        "infer_cpu_seconds_per_pass": infer_cpu,
        "infer_tokens_per_s": tokens / infer_s,
        "infer_tokens_per_cpu_s": tokens / infer_cpu,
        "forward_flops_per_token": flops_train / tokens,
        "infer_flops_per_token": flops_infer / tokens,
        "train_gflops_per_s": fwd_bwd / train_s / 1e9,
        "infer_gflops_per_s": flops_infer / infer_s / 1e9,
    }


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("inf")


def cost_ratios(baseline: dict[str, Any], gcdoc: dict[str, Any]) -> dict[str, float]:
    """How many times slower GCDoc trains and tags than the baseline, by wall clock and by
    CPU time (baseline tokens/s over GCDoc tokens/s of two :func:`throughput_record`)."""
    return {
        "train_cost_ratio": _ratio(baseline["train_tokens_per_s"], gcdoc["train_tokens_per_s"]),
        "infer_cost_ratio": _ratio(baseline["infer_tokens_per_s"], gcdoc["infer_tokens_per_s"]),
        **{
            f"{kind}_cost_ratio_cpu_time": _ratio(
                baseline[f"{kind}_tokens_per_cpu_s"], gcdoc[f"{kind}_tokens_per_cpu_s"]
            )
            for kind in ("train", "infer")
        },
    }
