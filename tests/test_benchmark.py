"""Tests of the speed benchmark: the analytic FLOP counter and a tiny quick run."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from torch_geometric.data import Batch

from docgraph.benchmark import (
    BenchmarkOptions,
    component_parts,
    default_output,
    format_table,
    linear_flops,
    lstm_flops,
    model_flops,
    run_benchmark,
)
from docgraph.data.document import make_document
from docgraph.data.vocab import Vocabularies
from docgraph.graph import documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.training import build_model

TINY = {
    "word_dim": 8,
    "char_dim": 4,
    "char_hidden": 4,
    "hidden": 6,
    "sent_dim": 8,
    "uncertainty_hidden": 4,
    "num_samples": 2,
}


def test_lstm_flops_matches_hand_computation() -> None:
    # One direction, one step: 4 gates, each W_ih (4 x 3) and W_hh (4 x 4) mat-vec,
    # 2 FLOPs per multiply-add: 4 * (3*4 + 4*4) * 2 = 224.
    assert lstm_flops(3, 4, 1, directions=1) == 224
    # Bidirectional over 5 token steps.
    assert lstm_flops(3, 4, 5) == 2 * 5 * 224
    assert linear_flops(3, 4, 5) == 2 * 3 * 4 * 5


def _tiny_batch():
    words = ["Peter", "went", "to", "Paris", "again", "."]
    doc = make_document(
        "d",
        [
            (words[:2], ["B-PER", "O"]),
            (words[2:5], ["O", "B-LOC", "O"]),
            (["Peter", "in", "Paris", "."], ["B-PER", "O", "B-LOC", "O"]),
        ],
    )
    vocabs = Vocabularies.build([doc])
    return vocabs, Batch.from_data_list(documents_to_graphs([doc], vocabs))


def test_model_flops_counts_real_window_lengths() -> None:
    vocabs, batch = _tiny_batch()
    model = build_model(GCDocConfig(**TINY), vocabs)
    flops = model_flops(model, batch)
    n, token_dim = 9, 8 + 2 * 4
    # Sentence lengths [2, 3, 4], k = 2: previous windows [0, 2, 5], next [7, 4, 0].
    steps = n + (0 + 2 + 5) + (7 + 4 + 0)
    d_s = 8
    fuse = 2 * (2 * 2 * d_s * d_s + 2 * d_s) + 3 * 2 * d_s * d_s
    assert flops["cross_sentence"] == lstm_flops(token_dim, d_s // 2, steps) + 3 * fuse
    assert flops["context_bilstm"] == lstm_flops(token_dim + d_s, 6, n)
    C = len(vocabs.labels)
    one = lstm_flops(token_dim, 4, n) + linear_flops(8, C, n)
    assert flops["uncertainty_mc"] == 2 * one
    assert flops["uncertainty_train"] == one
    assert "uncertainty_train" not in model_flops(model, batch, training=False)
    assert flops["total"] == sum(v for k, v in flops.items() if k != "total")
    baseline = model_flops(build_model(GCDocConfig.baseline(**TINY), vocabs), batch)
    assert set(baseline) == {"char_encoder", "context_bilstm", "emission_crf", "total"}



def test_model_flops_counts_the_fast_approximations() -> None:
    vocabs, batch = _tiny_batch()
    fast = GCDocConfig(**TINY, window_encoding="per_sentence", mc_dropout="output")
    flops = model_flops(build_model(fast, vocabs), batch)
    n, token_dim, d_s = 9, 8 + 2 * 4, 8
    fuse = 2 * (2 * 2 * d_s * d_s + 2 * d_s) + 3 * 2 * d_s * d_s
    # Each sentence runs once through each of the three sentence encoders.
    assert flops["cross_sentence"] == lstm_flops(token_dim, d_s // 2, 3 * n) + 3 * fuse
    C = len(vocabs.labels)
    # One BiLSTM pass; only the classifier runs once per Monte-Carlo sample (T = 2).
    assert flops["uncertainty_mc"] == lstm_flops(token_dim, 4, n) + 2 * linear_flops(8, C, n)
    assert flops["uncertainty_train"] == lstm_flops(token_dim, 4, n) + linear_flops(8, C, n)

def test_component_parts_run() -> None:
    vocabs, batch = _tiny_batch()
    model = build_model(GCDocConfig(**TINY), vocabs)
    parts = component_parts(model, batch)
    assert set(parts) == {
        "char_encoder",
        "cross_sentence",
        "context_bilstm",
        "uncertainty_mc",
        "uncertainty_train",
        "relation_graph",
        "emission_crf",
    }
    for fn in parts.values():
        fn()


@pytest.fixture(scope="module")
def quick_result() -> dict:
    options = BenchmarkOptions(
        dataset="sample",
        quick=True,
        threads=1,
        batch_tokens=300,
        num_batches=2,
        repeats=1,
        warmup=1,
        graph_repeats=1,
        matmul_size=64,
        model_overrides=TINY,
    )
    return run_benchmark(options, command="test")


def test_quick_run_on_sample(quick_result: dict) -> None:
    r = quick_result
    for key in (
        "read_seconds",
        "graph_build_seconds",
        "train_cost_ratio",
        "infer_cost_ratio",
        "train_cost_ratio_target",
        "train_cost_ratio_met",
        "infer_cost_ratio_met",
        "gcdoc_components_ms_per_batch",
        "gcdoc_forward_flops_per_token_by_component",
        "matmul_gflops_per_s",
        "peak_rss_mib",
        "torch",
        "threads",
        "cpu",
        "date",
        "command",
        "flops_note",
    ):
        assert key in r, key
    for model in ("baseline", "gcdoc"):
        for key in (
            "train_tokens_per_s",
            "infer_tokens_per_s",
            "forward_flops_per_token",
            "train_gflops_per_s",
        ):
            assert r[model][key] > 0
    assert r["train_cost_ratio"] > 0 and r["infer_cost_ratio"] > 0
    assert r["train_cost_ratio_target"] == 3.0 and r["infer_cost_ratio_target"] == 4.0
    assert r["gcdoc"]["forward_flops_per_token"] > r["baseline"]["forward_flops_per_token"]
    assert r["threads"] == 1 and r["num_batches"] == 2
    json.dumps(r)  # serialisable
    table = format_table(r)
    assert "train tokens/s" in table and "cross_sentence" in table


def test_default_output() -> None:
    path = default_output(dt.date(2024, 1, 2))
    assert str(path) == "benchmarks/results/speed-2024-01-02.json"
