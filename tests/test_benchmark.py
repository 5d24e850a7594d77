"""Tests of the speed benchmark: the analytic FLOP counter and a tiny quick run."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import torch
from torch_geometric.data import Batch

from docgraph.data.document import make_document
from docgraph.data.vocab import Vocabularies
from docgraph.graph import documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.tools.batches import split_batch
from docgraph.tools.benchmark import (
    BenchmarkOptions,
    component_parts,
    default_output,
    format_speed_table,
    linear_flops,
    lstm_flops,
    model_flops,
    run_benchmark,
    train_step_flops,
)
from docgraph.tools.core_scaling import LossScaled, ScalingOptions, run_scaling
from docgraph.training.loop import training_step

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
    # Graph layer: lin_a on all 9 nodes, the gate's six d x d blocks only on the 4 nodes that
    # have a neighbour ("Peter" and "Paris" twice each; punctuation is not linked), 2d per
    # edge for the messages; the relation classifier 2 x (d -> 1) per node and 2 per edge.
    d, edges = 12, int(batch.edge_index.size(1))
    assert edges == 4
    expected = (linear_flops(d, d, 9) + 6 * linear_flops(d, d, 4) + 2 * d * edges
                + 2 * linear_flops(d, 1, 9) + 2 * edges)
    assert flops["relation_graph"] == expected
    # A training step: backward (2x forward) for everything but the no-grad MC passes.
    assert train_step_flops(model, batch) == 3 * (flops["total"] - flops["uncertainty_mc"]) \
        + flops["uncertainty_mc"]
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
        "gcdoc_train_fraction_of_matmul_peak",
        "gcdoc_train_fraction_met",
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
    # the ratios are the two models' throughputs on the same batches, not inverted
    for kind in ("train", "infer"):
        expected = r["baseline"][f"{kind}_tokens_per_s"] / r["gcdoc"][f"{kind}_tokens_per_s"]
        assert r[f"{kind}_cost_ratio"] == pytest.approx(expected)
        for model in ("baseline", "gcdoc"):
            seconds = r[model][f"{kind}_seconds_per_pass"]
            assert r[model][f"{kind}_tokens_per_s"] == pytest.approx(
                r["timed_tokens_per_pass"] / seconds)
    assert r["timed_tokens_per_pass"] == sum(r["batch_token_counts"])
    fraction = r["gcdoc"]["train_gflops_per_s"] / r["matmul_gflops_per_s"]
    assert r["gcdoc_train_fraction_of_matmul_peak"] == pytest.approx(fraction)
    assert r["gcdoc_train_fraction_met"] == (fraction >= 0.5)
    assert r["gcdoc"]["forward_flops_per_token"] > r["baseline"]["forward_flops_per_token"]
    assert r["threads"] == 1 and r["num_batches"] == 2
    json.dumps(r)  # serialisable
    table = format_speed_table(r)
    assert "train tokens/s" in table and "cross_sentence" in table


def test_default_output() -> None:
    path = default_output(dt.date(2024, 1, 2))
    assert str(path) == "benchmarks/results/measurements/benchmark-speed/speed-2024-01-02.json"


def test_split_batch_balances_tokens_and_keeps_order() -> None:
    lengths = [10, 1, 7, 3, 3]
    parts = split_batch([0, 1, 2, 3, 4], lengths, 2)
    assert sorted(i for p in parts for i in p) == [0, 1, 2, 3, 4]
    assert all(p == sorted(p) for p in parts)
    loads = [sum(lengths[i] for i in p) for p in parts]
    assert sorted(loads) == [11, 13]  # greedy longest-first: 10+3 | 7+3+1
    assert split_batch([3], lengths, 2) == [[3], []]


def test_loss_scaled_step_of_a_process_without_a_share_changes_nothing() -> None:
    # A DDP process without graphs in a batch steps with LossScaled(network, 0.0) on a real
    # batch: the library's training step, its loss scaled, so its gradients are zero.
    vocabs, batch = _tiny_batch()
    model = build_model(GCDocConfig.baseline(**TINY), vocabs)
    model.train()
    torch.manual_seed(1)
    loss = model(batch).loss
    torch.manual_seed(1)
    assert LossScaled(model, 0.5)(batch).loss.item() == pytest.approx(0.5 * loss.item())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    training_step(LossScaled(model, 0.0), optimizer, batch)
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
    training_step(model, optimizer, batch)
    assert not all(torch.equal(a, p) for a, p in zip(before, model.parameters()))


@pytest.mark.slow
def test_core_scaling_runs_ddp_on_the_same_tokens() -> None:
    options = ScalingOptions(dataset="sample", batch_tokens=600, num_batches=2, repeats=1,
                             warmup=1, model_overrides=TINY, settings=("1 thread", "DDP x2"))
    result = run_scaling(options)
    one, ddp = result["settings"]["1 thread"], result["settings"]["DDP x2"]
    assert one["processes"] == 1 and ddp["processes"] == 2 and ddp["threads"] == 1
    assert one["tokens_per_pass"] == ddp["tokens_per_pass"] > 0
    up = result["speedup_over_1_thread"]["DDP x2"]
    assert up["gcdoc_train"] == pytest.approx(
        ddp["gcdoc"]["train_tokens_per_s"] / one["gcdoc"]["train_tokens_per_s"])
