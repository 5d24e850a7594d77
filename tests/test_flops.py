"""Tests of the analytic FLOP counter and the matmul reference (docgraph_dev/flops.py)."""

from __future__ import annotations

from conftest import HAND_COUNT_MODEL, three_sentence_batch
from torch_geometric.data import Batch

from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph_dev.flops import (
    flops_per_token_by_component,
    linear_flops,
    lstm_flops,
    matmul_gflops,
    model_flops,
    train_step_flops,
)


def test_lstm_flops_matches_hand_computation() -> None:
    # One direction, one step: 4 gates, each W_ih (4 x 3) and W_hh (4 x 4) mat-vec,
    # 2 FLOPs per multiply-add: 4 * (3*4 + 4*4) * 2 = 224.
    assert lstm_flops(3, 4, 1, directions=1) == 224
    # Bidirectional over 5 token steps.
    assert lstm_flops(3, 4, 5) == 2 * 5 * 224
    assert linear_flops(3, 4, 5) == 2 * 3 * 4 * 5


def test_lstm_and_linear_flops_of_other_sizes() -> None:
    # BiLSTM 10 -> 2 x 5 over 7 steps: 2 directions x 4 gates x (10 + 5) x 5 x 2 = 1,200 per
    # step, 8,400 in all; a 10 -> 3 linear layer on one row: 30 multiply-adds, 60 FLOPs.
    assert lstm_flops(10, 5, 7) == 8400
    assert linear_flops(10, 3, 1) == 60
    assert lstm_flops(10, 5, 0) == linear_flops(10, 3, 0) == 0


def test_model_flops_counts_real_window_lengths() -> None:
    vocabs, batch = three_sentence_batch()
    model = build_model(GCDocConfig(**HAND_COUNT_MODEL), vocabs)
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
    baseline = model_flops(build_model(GCDocConfig.baseline(**HAND_COUNT_MODEL), vocabs), batch)
    assert set(baseline) == {"char_encoder", "context_bilstm", "emission_crf", "total"}


def test_model_flops_counts_the_fast_approximations() -> None:
    vocabs, batch = three_sentence_batch()
    fast = GCDocConfig(**HAND_COUNT_MODEL, window_encoding="per_sentence", mc_dropout="output")
    flops = model_flops(build_model(fast, vocabs), batch)
    n, token_dim, d_s = 9, 8 + 2 * 4, 8
    fuse = 2 * (2 * 2 * d_s * d_s + 2 * d_s) + 3 * 2 * d_s * d_s
    # Each sentence runs once through each of the three sentence encoders.
    assert flops["cross_sentence"] == lstm_flops(token_dim, d_s // 2, 3 * n) + 3 * fuse
    C = len(vocabs.labels)
    # One BiLSTM pass; only the classifier runs once per Monte-Carlo sample (T = 2).
    assert flops["uncertainty_mc"] == lstm_flops(token_dim, 4, n) + 2 * linear_flops(8, C, n)
    assert flops["uncertainty_train"] == lstm_flops(token_dim, 4, n) + linear_flops(8, C, n)


def test_flops_per_token_sums_the_batches_before_dividing() -> None:
    vocabs, batch = three_sentence_batch()
    model = build_model(GCDocConfig.baseline(**HAND_COUNT_MODEL), vocabs)
    one = model_flops(model, batch)
    # The same 9-token document twice in one list: twice the FLOPs over twice the tokens.
    assert flops_per_token_by_component(model, [batch, batch]) == {
        name: flops / 9 for name, flops in one.items()}
    # The character LSTM runs once per distinct word: Peter, went, to, Paris, again, ., in
    # are 24 character steps in one copy of the document or in two.
    assert one["char_encoder"] == lstm_flops(4, 4, 24)
    pair = Batch.from_data_list([*batch.to_data_list(), *batch.to_data_list()])
    per_token = flops_per_token_by_component(model, [batch, pair])
    assert per_token["char_encoder"] == 2 * lstm_flops(4, 4, 24) / 27
    assert per_token["emission_crf"] == 3 * one["emission_crf"] / 27
    assert list(per_token) == list(one)


def test_matmul_gflops_is_a_positive_rate() -> None:
    assert matmul_gflops(size=32, repeats=1) > 0
    import torch

    assert matmul_gflops(size=32, repeats=1, dtype=torch.bfloat16) > 0
