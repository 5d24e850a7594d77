"""Tests of graph-construction, training and inference throughput and the cost ratios
(docgraph_dev/throughput.py)."""

from __future__ import annotations

import math

import pytest
from conftest import HAND_COUNT_MODEL, three_sentence_batch

from docgraph.data.document import make_document
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph_dev.flops import model_flops, train_step_flops
from docgraph_dev.throughput import (
    cost_ratios,
    throughput_record,
    time_graph_build,
)


def test_time_graph_build_returns_the_graphs_and_their_time() -> None:
    docs = [make_document(f"d{i}", [(["Peter", "went", "home"], ["B-PER", "O", "O"])])
            for i in range(3)]
    vocabs = Vocabularies.build(docs)
    graphs, seconds = time_graph_build(docs, vocabs, GraphConfig(), repeats=2)
    assert len(graphs) == 3 and sum(int(g.num_nodes) for g in graphs) == 9
    assert seconds > 0


def test_throughput_record_divides_tokens_and_flops_by_the_seconds() -> None:
    vocabs, batch = three_sentence_batch()
    model = build_model(GCDocConfig.baseline(**HAND_COUNT_MODEL), vocabs)
    record = throughput_record(model, [batch, batch], 18, train=(2.0, 4.0), infer=(0.5, 1.0))
    assert record["train_tokens_per_s"] == 9.0 and record["train_tokens_per_cpu_s"] == 4.5
    assert record["infer_tokens_per_s"] == 36.0 and record["infer_tokens_per_cpu_s"] == 18.0
    assert record["train_ms_per_batch"] == 1000.0
    assert record["forward_flops_per_token"] == model_flops(model, batch)["total"] / 9
    assert record["train_gflops_per_s"] == 2 * train_step_flops(model, batch) / 2.0 / 1e9
    infer_flops = model_flops(model, batch, training=False)["total"]
    assert record["infer_gflops_per_s"] == 2 * infer_flops / 0.5 / 1e9
    assert record["parameters"] == sum(p.numel() for p in model.parameters())


def test_cost_ratios_are_baseline_over_gcdoc_throughput() -> None:
    baseline = {"train_tokens_per_s": 300.0, "infer_tokens_per_s": 800.0,
                "train_tokens_per_cpu_s": 150.0, "infer_tokens_per_cpu_s": 400.0}
    gcdoc = {"train_tokens_per_s": 100.0, "infer_tokens_per_s": 200.0,
             "train_tokens_per_cpu_s": 60.0, "infer_tokens_per_cpu_s": 0.0}
    ratios = cost_ratios(baseline, gcdoc)
    assert list(ratios) == ["train_cost_ratio", "infer_cost_ratio",
                            "train_cost_ratio_cpu_time", "infer_cost_ratio_cpu_time"]
    assert ratios["train_cost_ratio"] == 3.0 and ratios["infer_cost_ratio"] == 4.0
    assert ratios["train_cost_ratio_cpu_time"] == pytest.approx(2.5)
    assert math.isinf(ratios["infer_cost_ratio_cpu_time"])
