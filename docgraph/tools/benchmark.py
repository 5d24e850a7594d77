"""Speed benchmark of GCDoc against the BiLSTM-CRF baseline on real documents.

Everything is measured in one process on the same list of batches:

* graph construction (:func:`~docgraph.graph.documents_to_graphs` over the training split);
* training throughput (forward + backward + Adam step) and inference throughput
  (:meth:`~docgraph.model.GCDoc.predict`, including GCDoc's ``T`` Monte-Carlo passes) of both
  models, and their cost ratios against the targets (train <= 3x, inference <= 4x);
* a per-component breakdown of the GCDoc training step (each submodule's forward + backward
  timed in isolation on the batch's real inputs);
* the analytic forward FLOPs per token, the achieved GFLOP/s of the training step and the
  machine's dense float32 matmul GFLOP/s on the same thread count.

The FLOP counter is analytic (see :func:`lstm_flops`, :func:`linear_flops` and
:func:`model_flops`); backward is counted as twice the forward.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor
from torch.profiler import ProfilerActivity, profile
from torch_geometric.data import Batch

from docgraph.batching.loader import collate
from docgraph.cli.arguments import SWITCHES
from docgraph.config import TrainConfig
from docgraph.data.errors import CorpusFormatError
from docgraph.data.registry import load_dataset
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDoc, GCDocConfig
from docgraph.nn.cross_sentence import sentence_windows
from docgraph.nn.gather import gather_rows
from docgraph.nn.relation import relation_loss
from docgraph.persistence.model_dir import build_model
from docgraph.runtime.atomic import atomic_write_json
from docgraph.runtime.determinism import set_deterministic
from docgraph.runtime.machine import cpu_model, peak_rss_mib, resolve_device
from docgraph.tagging.inference import predict_graphs
from docgraph.tools.batches import select_batch_indices, select_batches
from docgraph.tools.core_scaling import SETTINGS, ScalingOptions, format_scaling, run_scaling
from docgraph.tools.operator_counts import (
    OperatorCountOptions,
    format_counts,
    run_operator_counts,
)
from docgraph.training.loop import clip_groups, make_optimizer, training_step

BACKWARD_FACTOR = 2.0
#: GCDoc's training GFLOP/s at one thread over the machine's one-thread matmul GFLOP/s
MATMUL_FRACTION_TARGET = 0.5


@dataclass
class BenchmarkOptions:
    """What to measure and how often.

    Args:
        dataset: Registry name (``conll03``, ``ontonotes``, ``sample``, ...).
        data_dir: Directory of the split files (``None`` for ``sample``).
        quick: Fewer batches and repeats, graph build timed once.
        threads: Torch intra-op threads (``0`` keeps torch's current setting).
        batch_tokens: Token budget per batch (4000, the CoNLL-2003 and OntoNotes presets').
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


# ---------------------------------------------------------------------------- FLOP counting
def lstm_flops(in_dim: int, hidden: int, steps: int, directions: int = 2) -> int:
    """Forward FLOPs of an LSTM layer: ``directions * 4 gates * (in + hidden) * hidden * 2``
    per token step (multiply-add = 2 FLOPs; element-wise gate arithmetic is not counted).

    Args:
        in_dim: Input size.
        hidden: Hidden size per direction.
        steps: Total number of token steps (sum of sequence lengths).
        directions: 2 for a BiLSTM.
    """
    return directions * 4 * (in_dim + hidden) * hidden * 2 * steps


def linear_flops(in_dim: int, out_dim: int, rows: int) -> int:
    """Forward FLOPs of a linear layer applied to ``rows`` vectors (``2 * in * out`` each)."""
    return 2 * in_dim * out_dim * rows


def _unique_char_steps(batch: Batch) -> int:
    """Character steps the :class:`~docgraph.nn.CharEncoder` runs (once per distinct word)."""
    chars = batch.chars
    char_len = batch.char_len.clamp(min=1, max=chars.size(1))
    key = torch.cat([chars, char_len.view(-1, 1).to(chars.dtype)], dim=1)
    uniq = torch.unique(key, dim=0)
    return int(uniq[:, -1].sum())


def _sentence_doc(batch: Batch) -> Tensor:
    """The document of every sentence of ``batch``."""
    starts = torch.cumsum(batch.sent_len, 0) - batch.sent_len
    doc_of_token = getattr(batch, "batch", None)
    return torch.zeros_like(batch.sent_len) if doc_of_token is None else doc_of_token[starts]


def model_flops(model: GCDoc, batch: Batch, training: bool = True) -> dict[str, int]:
    """Analytic forward FLOPs of ``model`` on ``batch``, per component.

    BiLSTMs count their real number of token steps on the batch (the cross-sentence windows
    by their total length, the character LSTM once per distinct word as the encoder runs it);
    linear layers ``2 * in * out`` per row; the graph layer per node (its 7 ``d x d`` blocks)
    and per edge (``2 d`` for scaling and summing a message); the CRF ``3 C^2`` per token.

    Args:
        model: The model.
        batch: A batch of document graphs.
        training: Count the uncertainty tagger's training pass (only run with a loss).

    Returns:
        Component name -> FLOPs; ``"total"`` is their sum.
    """
    cfg = model.config
    n = int(batch.num_nodes)
    sent_len = batch.sent_len
    num_sents = int(sent_len.numel())
    num_edges = int(batch.edge_index.size(1))
    C = model.num_labels
    token_dim = cfg.word_dim + 2 * cfg.char_hidden
    out: dict[str, int] = {
        "char_encoder": lstm_flops(cfg.char_dim, cfg.char_hidden, _unique_char_steps(batch))
    }
    context_in = token_dim
    if model.cross_sentence is not None:
        cs = model.cross_sentence
        _, prev_len, _, next_len = sentence_windows(sent_len, _sentence_doc(batch), cs.window)
        steps = n
        if cs.window_encoding == "per_sentence":  # every sentence once per enabled side
            steps += n * ((cs.enc_previous is not None) + (cs.enc_next is not None))
        else:
            steps += int(prev_len.sum()) if cs.enc_previous is not None else 0
            steps += int(next_len.sum()) if cs.enc_next is not None else 0
        d = cfg.sent_dim
        fuse = 2 * (2 * linear_flops(d, d, 1) + linear_flops(d, 1, 1)) + 3 * linear_flops(d, d, 1)
        out["cross_sentence"] = lstm_flops(token_dim, d // 2, steps) + fuse * num_sents
        context_in += d
    out["context_bilstm"] = lstm_flops(context_in, cfg.hidden, n)
    d = 2 * cfg.hidden
    graph_module = model.document_graph
    if graph_module is not None and graph_module.uncertainty is not None:
        u = graph_module.uncertainty
        bilstm = lstm_flops(token_dim, u.hidden_channels, n)
        classifier = linear_flops(2 * u.hidden_channels, C, n)
        one_pass = bilstm + classifier
        if u.mc_dropout == "output":  # one BiLSTM pass, T dropout masks on its output
            out["uncertainty_mc"] = bilstm + u.num_samples * classifier
        else:
            out["uncertainty_mc"] = u.num_samples * one_pass
        if training:
            out["uncertainty_train"] = one_pass
    if graph_module is not None:
        # lin_a transforms every node; the gate's six d x d blocks run only on the nodes that
        # receive an edge unless isolated nodes are gated too
        gated = n if graph_module.graph_conv.isolated == "gate" else int(
            torch.unique(batch.edge_index[1]).numel())
        graph = linear_flops(d, d, n) + 6 * linear_flops(d, d, gated) + 2 * d * num_edges
        if graph_module.relation is not None:
            graph += 2 * linear_flops(d, 1, n) + 2 * num_edges
        out["relation_graph"] = graph
    out["emission_crf"] = linear_flops(d, C, n) + 3 * C * C * n
    out["total"] = sum(out.values())
    return out


NO_GRAD_COMPONENTS = ("uncertainty_mc",)


def train_step_flops(model: GCDoc, batch: Batch) -> int:
    """FLOPs of one training step: forward, plus a backward of twice the forward for every
    component that takes gradients (the Monte-Carlo passes run under ``no_grad``)."""
    parts = model_flops(model, batch, training=True)
    no_grad = sum(parts.get(name, 0) for name in NO_GRAD_COMPONENTS)
    return int((1 + BACKWARD_FACTOR) * (parts["total"] - no_grad) + no_grad)


# ---------------------------------------------------------------------------- timing helpers
def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def matmul_gflops(size: int = 1024, repeats: int = 5) -> float:
    """Measured dense float32 ``size x size`` matmul GFLOP/s on the current thread count."""
    a = torch.randn(size, size)
    b = torch.randn(size, size)
    torch.mm(a, b)
    seconds = _median_seconds(lambda: torch.mm(a, b), repeats)
    return 2 * size**3 / seconds / 1e9


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """``(wall seconds, process CPU seconds)`` of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def time_interleaved(
    passes: dict[str, Callable[[], object]], repeats: int
) -> dict[str, tuple[float, float]]:
    """Median ``(wall, CPU)`` seconds of each pass, the passes interleaved repeat by repeat.

    Interleaving (A B A B ...) exposes every pass to the same drift of the machine's load, so
    ratios between passes stay meaningful on a shared machine.
    """
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in passes}
    for _ in range(repeats):
        for name, fn in passes.items():
            samples[name].append(_timed(fn))
    return {
        name: (statistics.median(w for w, _ in s), statistics.median(c for _, c in s))
        for name, s in samples.items()
    }


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


def _fwd_bwd(fn: Callable[[], Tensor]) -> Callable[[], None]:
    def run() -> None:
        fn().sum().backward()

    return run


def component_parts(model: GCDoc, batch: Batch) -> dict[str, Callable[[], None]]:
    """Closures running each GCDoc submodule's forward (+ backward) on ``batch``'s real inputs.

    The inputs of each submodule are computed once with the full model and detached (with
    ``requires_grad``), so every closure times its submodule alone. The uncertainty MC passes
    run without gradient, as in the model.
    """
    model.train()
    sent_len = batch.sent_len
    plan = model.plan(batch)
    sentences = plan.sentences
    windows = (plan.previous, plan.next)
    with torch.no_grad():
        token_x = model._token_features(batch, plan)
        x = token_x
        if model.cross_sentence is not None:
            s_prime = model.cross_sentence(x, sent_len, plan.sentence_doc, layout=sentences,
                                           windows=windows)
            x = torch.cat([x, gather_rows(s_prime, batch.token_sentence)], dim=-1)
        h = model.context_encoder(x, sent_len, sentences)

    def leaf(t: Tensor) -> Tensor:
        return t.detach().clone().requires_grad_(True)

    parts: dict[str, Callable[[], None]] = {
        "char_encoder": _fwd_bwd(lambda: model.char_encoder(batch.chars, batch.char_len,
                                                            plan.chars)),
    }
    if model.cross_sentence is not None:
        cs, tx, doc = model.cross_sentence, leaf(token_x), plan.sentence_doc
        parts["cross_sentence"] = _fwd_bwd(
            lambda: cs(tx, sent_len, doc, layout=sentences, windows=windows))
    cx = leaf(x)
    parts["context_bilstm"] = _fwd_bwd(lambda: model.context_encoder(cx, sent_len, sentences))
    graph_module = model.document_graph
    unc = None if graph_module is None else graph_module.uncertainty
    if unc is not None:
        ux = token_x.detach()
        mc = plan.monte_carlo
        parts["uncertainty_mc"] = lambda: unc.uncertainty(ux, sent_len, sentences, mc)
        parts["uncertainty_train"] = lambda: unc.loss(
            unc(ux, sent_len, sentences), batch.y, "sum").backward()
    hh = leaf(h)
    if graph_module is not None:
        graph_conv, relation = graph_module.graph_conv, graph_module.relation
        edge_index = batch.edge_index
        source_mask = None
        if unc is not None:
            source_mask = ~unc.drop_mask(
                unc.uncertainty(token_x.detach(), sent_len, sentences, plan.monte_carlo)[0])
        types = model.label_to_type[batch.y]
        same = (types[edge_index[0]] == types[edge_index[1]]).to(h.dtype)

        def relation_graph() -> None:
            loss = hh.new_zeros(())
            weight = None
            if relation is not None:
                logits = relation(hh, edge_index, return_logits=True)
                weight = torch.sigmoid(logits)
                loss = loss + relation_loss(logits, same)
            out = graph_conv(hh, edge_index, edge_weight=weight, source_mask=source_mask,
                             gated_nodes=plan.gated_nodes, ptr=plan.edge_ptr)
            (loss + out.sum()).backward()

        parts["relation_graph"] = relation_graph
    parts["emission_crf"] = lambda: model.crf.nll(
        model.emission(hh), sent_len, batch.y, reduction="sum", layout=sentences
    ).backward()
    return parts


def time_components(model: GCDoc, batches: Sequence[Batch], repeats: int) -> dict[str, float]:
    """Median ms per batch of each component's forward + backward (see :func:`component_parts`)."""
    totals: dict[str, list[float]] = {}
    for batch in batches:
        for name, fn in component_parts(model, batch).items():
            fn()  # warm-up
            totals.setdefault(name, []).append(_median_seconds(fn, repeats))
            model.zero_grad(set_to_none=True)
    return {name: 1000 * statistics.fmean(values) for name, values in totals.items()}


# ---------------------------------------------------------------------------- environment
# ---------------------------------------------------------------------------- the benchmark
def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("inf")


def _model_result(
    model: GCDoc,
    batches: Sequence[Batch],
    tokens: int,
    train: tuple[float, float],
    infer: tuple[float, float],
) -> dict[str, Any]:
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


def run_benchmark(options: BenchmarkOptions, command: str = "") -> dict[str, Any]:
    """Run the whole benchmark and return the JSON-serialisable result.

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
    graph_config = GraphConfig()
    graphs: list = []

    def build() -> None:
        graphs[:] = documents_to_graphs(train_docs, vocabs, graph_config)

    graph_seconds = _median_seconds(build, graph_repeats)
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
    results = {n: _model_result(m, batches, tokens, train[n], infer[n]) for n, m in models.items()}

    gcdoc = models["gcdoc"]
    components = time_components(gcdoc, batches, repeats)
    flops_parts = {
        k: v / tokens for k, v in _sum_dicts([model_flops(gcdoc, b) for b in batches]).items()
    }
    # Residual of the whole step (embeddings, dropout, Adam, glue); negative = timing noise.
    components["other (step - sum of parts)"] = results["gcdoc"]["train_ms_per_batch"] - sum(
        components.values()
    )
    train_ratio = _ratio(
        results["baseline"]["train_tokens_per_s"], results["gcdoc"]["train_tokens_per_s"]
    )
    infer_ratio = _ratio(
        results["baseline"]["infer_tokens_per_s"], results["gcdoc"]["infer_tokens_per_s"]
    )
    cpu_ratios = {
        f"{kind}_cost_ratio_cpu_time": _ratio(
            results["baseline"][f"{kind}_tokens_per_cpu_s"],
            results["gcdoc"][f"{kind}_tokens_per_cpu_s"],
        )
        for kind in ("train", "infer")
    }
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
        "train_cost_ratio": train_ratio,
        "infer_cost_ratio": infer_ratio,
        **cpu_ratios,
        "timing_note": (
            "ratios use wall-clock medians; the models' repeats are interleaved; the *_cpu_*"
            " fields use process CPU time, less sensitive to other jobs on a loaded machine"
        ),
        "gcdoc_components_ms_per_batch": components,
        "gcdoc_forward_flops_per_token_by_component": flops_parts,
        "flops_note": (
            "analytic forward FLOPs (multiply-add = 2); LSTMs 2 dirs x 4 gates x (in + hidden)"
            " x hidden x 2 per real token step; the graph gate only on nodes that receive an"
            " edge; a training step counts a backward of 2x the forward for every component"
            " except the Monte-Carlo passes, which run without gradient"
        ),
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


def _sum_dicts(items: Sequence[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        for key, value in item.items():
            out[key] = out.get(key, 0) + value
    return out


def format_speed_table(result: dict[str, Any]) -> str:
    """A readable plain-text summary of a :func:`run_benchmark` result."""
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


MEASUREMENTS = Path("benchmarks/results/measurements")
"""Where the measurements of ``scripts/benchmark.py`` go by default: ``benchmark-speed/``,
``benchmark-ops/`` and ``benchmark-step-speed/`` (see ``benchmarks/results/README.md``)."""


def default_output(today: _dt.date | None = None) -> Path:
    """``benchmarks/results/measurements/benchmark-speed/speed-<YYYY-MM-DD>.json``."""
    today = today or _dt.date.today()
    return MEASUREMENTS / "benchmark-speed" / f"speed-{today.isoformat()}.json"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options of ``scripts/benchmark.py``."""
    parser = argparse.ArgumentParser(
        description="Speed of GCDoc vs the BiLSTM-CRF baseline on the same real batches."
    )
    parser.add_argument("--dataset", default="conll03")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--quick", action="store_true", help="2 batches, 1 repeat, graph build once (< 60 s)"
    )
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--batch-tokens", type=int, default=BenchmarkOptions.batch_tokens,
                        help="token budget per batch (default: the presets' 4000)")
    parser.add_argument("--batches", type=int, default=None, help="batches timed per repeat")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--fast",
        action="store_true",
        help="benchmark GCDoc with the --fast approximations "
        "(window_encoding=per_sentence, mc_dropout=output)",
    )
    parser.add_argument(
        "--out", default=None,
        help=f"JSON output (default {MEASUREMENTS}/benchmark-speed/speed-<date>.json)"
    )
    parser.add_argument("--settings", nargs="*", default=None,
                        help="core settings to compare ('1 thread', '2 threads', 'DDP x2'; "
                             "default all; none to skip)")
    parser.add_argument("--ops", action="store_true",
                        help="count the operators of one training and one tagging step of "
                             "every training mode on real batches (BiLSTM-CRF and GCDoc at "
                             "4000 and 16000 tokens, the other modes at 4000) instead of "
                             "timing, one JSON per mode (default output directory "
                             f"{MEASUREMENTS}/benchmark-ops/<dataset>/); exit status 1 when "
                             "a target is missed (any accumulating index write or documented "
                             "non-deterministic operator in a training step)")
    parser.add_argument("--modes", nargs="+", default=None, metavar="MODE",
                        help="with --ops: the modes counted (default: every training mode)")
    parser.add_argument("--step-speed", action="store_true",
                        help="time training steps of both models at each --budgets token "
                             "budget on --device, and dev tagging (the GPU kit's speed table)")
    parser.add_argument("--device", default="cpu", help="device of --step-speed (default: cpu)")
    parser.add_argument("--profile", action="store_true",
                        help="with --step-speed: profile one more step per model and budget "
                             "(kernels, busy fraction, top kernels, each component's time)")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                        help="with --step-speed: both models' precision (default fp32)")
    parser.add_argument("--deterministic", action="store_true",
                        help="with --step-speed: run with deterministic kernels "
                             "(train.py --deterministic), to measure what they cost")
    parser.add_argument("--budgets", type=int, nargs="+", default=[4000, 16000, 32000],
                        help="token budgets of --step-speed (default: 4000 16000 32000)")
    parser.add_argument("--steps", type=int, default=8,
                        help="timed steps per budget and model of --step-speed (default: 8)")
    parser.add_argument("--scaling-batches", type=int, default=None,
                        help="batches of the core-settings comparison (default 6, quick 2)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark from the command line, print the table and write the JSON."""
    args = parse_args(argv)
    argv_list = list(sys.argv[1:] if argv is None else argv)
    command = " ".join(["python scripts/benchmark.py", *argv_list])
    if args.ops:
        return _operator_counts_main(args, command)
    if args.step_speed:
        return _step_speed_main(args, command)
    options = BenchmarkOptions(
        dataset=args.dataset,
        data_dir=args.data_dir,
        quick=args.quick,
        threads=args.threads,
        batch_tokens=args.batch_tokens,
        num_batches=args.batches,
        repeats=args.repeats,
        model_overrides=dict(SWITCHES["--fast"]["model"]) if args.fast else {},
    )
    try:
        result = run_benchmark(options, command=command)
        settings = tuple(args.settings) if args.settings is not None else tuple(SETTINGS)
        unknown = [s for s in settings if s not in SETTINGS]
        if unknown:
            raise ValueError(f"--settings: unknown {unknown}; expected some of {list(SETTINGS)}")
        if settings:
            scaling = ScalingOptions(
                dataset=args.dataset, data_dir=args.data_dir, batch_tokens=args.batch_tokens,
                num_batches=args.scaling_batches or (2 if args.quick else 6),
                repeats=1 if args.quick else 2, model_overrides=options.model_overrides,
                settings=settings)
            result["scaling"] = run_scaling(scaling)
            dev = load_dataset(args.dataset, args.data_dir, splits=("dev",))["dev"]
            result["dev_tokens"] = sum(len(doc.tokens) for doc in dev)
            result["epoch_minutes_estimate"] = epoch_minutes(
                result["scaling"], result["train_tokens"], result["dev_tokens"])
    except (ValueError, FileNotFoundError, CorpusFormatError) as exc:
        print(f"benchmark.py: error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else default_output()
    atomic_write_json(out, result)
    print(format_speed_table(result))
    print(f"wrote {out}")
    return 0


def _operator_counts_main(args: argparse.Namespace, command: str) -> int:
    options = OperatorCountOptions(dataset=args.dataset, data_dir=args.data_dir,
                                   modes=tuple(args.modes) if args.modes else None)
    try:
        result = run_operator_counts(options, command=command)
    except (ValueError, FileNotFoundError, CorpusFormatError) as exc:
        print(f"benchmark.py: error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else MEASUREMENTS / "benchmark-ops" / args.dataset
    common = {k: v for k, v in result.items() if k != "modes"}
    for name, mode in result["modes"].items():
        atomic_write_json(out / f"{name}.json", {**common, "mode": name, **mode})
    print(format_counts(result))
    print(f"wrote {len(result['modes'])} modes to {out}/")
    return 0 if result["met"] else 1


# ---------------------------------------------------------------------------- step speed
def profile_step(model: GCDoc, optimizer: torch.optim.Optimizer, groups: list, batch: Batch,
                 clip_norm: float, device: torch.device, top: int = 12) -> dict[str, Any]:
    """Where one training step's time goes (``--step-speed --profile``).

    One profiled :func:`~docgraph.training.loop.training_step` on ``batch`` (after the timed
    steps, so warm): on CUDA the kernels it launched, their summed device time against the
    step's wall time (the fraction of the step the GPU is busy) and the ``top`` kernels by
    time; on a CPU the ``top`` operators by self CPU time. Then each component's forward +
    backward alone (:func:`component_parts`), synchronised, mean of three calls.
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
    Tagging: :func:`~docgraph.tagging.inference.predict_graphs` over the whole dev split (8000-token
    batches), timed end to end. With ``profiled``, each row also holds
    :func:`profile_step` of one more batch; with ``deterministic``, everything runs under
    :func:`~docgraph.runtime.determinism.set_deterministic` (its cost on a GPU); ``precision``
    is both models' :attr:`~docgraph.model.GCDocConfig.precision`.
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
        predict_graphs(model, dev, vocabs, 8000, dev_)
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


def _step_speed_main(args: argparse.Namespace, command: str) -> int:
    try:
        result = run_step_speed(args.dataset, args.data_dir, args.device,
                                tuple(args.budgets), args.steps, command=command,
                                profiled=args.profile, deterministic=args.deterministic,
                                precision=args.precision)
    except (ValueError, FileNotFoundError, CorpusFormatError) as exc:
        print(f"benchmark.py: error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else MEASUREMENTS / "benchmark-step-speed" / (
        f"{args.dataset}-{result['device'].split(':')[0]}.json")
    atomic_write_json(out, result)
    print(format_step_speed(result))
    print(f"wrote {out}")
    return 0
