"""Operator counts of a step (issue 30): the probe itself, and the lean step it measures."""

from __future__ import annotations

import pytest
import torch
from conftest import TINY_MODEL

from docgraph.batching import collate
from docgraph.config import TrainConfig
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.model_dir import build_model
from docgraph.tools.operator_counts import (
    OperatorCountOptions,
    check_targets,
    count_operators,
    run_operator_counts,
)
from docgraph.training import clip_groups, make_optimizer, training_step


def test_probe_counts_top_level_operators_and_reads_back():
    x = torch.randn(8)
    counted = count_operators(lambda: (x + 1).sum().item())
    assert counted.by_name["aten::add"] == 1 and counted.by_name["aten::sum"] == 1
    assert counted.synchronising == 1  # .item(): _local_scalar_dense
    assert count_operators(lambda: torch.nonzero(x > 0)).sync_by_name == {"aten::nonzero": 1}
    # boolean indexing runs nonzero inside aten::index: one sync, not a top-level operator
    nested = count_operators(lambda: x[x > 0])
    assert nested.synchronising == 1 and "aten::nonzero" not in nested.by_name


@pytest.fixture(scope="module")
def graphs(sample_splits, sample_vocabs):
    return documents_to_graphs(sample_splits["train"], sample_vocabs, GraphConfig())


def _step_counts(graphs, vocabs, config, indices):
    torch.manual_seed(0)
    model = build_model(config, vocabs)
    batch = collate(graphs, indices, torch.device("cpu"), model)
    optimizer = make_optimizer(model, TrainConfig(optimizer="adam", clip_norm=5.0))
    groups = clip_groups(model)

    def step():
        training_step(model, optimizer, batch, groups, 5.0)

    step()
    return count_operators(step), count_operators(lambda: model.predict(batch))


@pytest.mark.parametrize("config", [GCDocConfig(**TINY_MODEL), GCDocConfig.baseline(**TINY_MODEL)],
                         ids=["gcdoc", "baseline"])
def test_a_training_step_reads_nothing_back_and_does_not_grow_with_the_batch(
        graphs, sample_vocabs, config):
    small, small_tag = _step_counts(graphs, sample_vocabs, config, [0, 1])
    large, large_tag = _step_counts(graphs, sample_vocabs, config, list(range(len(graphs))))
    assert small.synchronising == large.synchronising == 0, large.sync_by_name
    assert small_tag.synchronising == large_tag.synchronising == 0
    # The operators follow the length buckets (at most 6 per recurrent layer) and the
    # longest sentence (the CRF's time steps), not the number of sentences or tokens.
    assert large.operators <= 1.2 * small.operators + 200
    assert large.operators < (2100 if config.graph else 900)


def test_run_operator_counts_checks_every_target(sample_splits):
    result = run_operator_counts(OperatorCountOptions(
        dataset="sample", batch_tokens=(600, 2400), model_overrides=dict(TINY_MODEL)))
    assert [(r["model"], r["batch_tokens"]) for r in result["rows"]] == [
        ("baseline", 600), ("gcdoc", 600), ("baseline", 2400), ("gcdoc", 2400)]
    assert result["rows"][0]["tokens"] <= 600 < result["rows"][2]["tokens"] <= 2400
    checks = result["checks"]
    assert set(checks) == {"baseline_train_operators", "gcdoc_train_operators",
                           "baseline_growth", "gcdoc_growth", "train_synchronising",
                           "tag_synchronising"}
    assert checks["train_synchronising"] == {"value": 0, "target": 5, "met": True}
    # the checks follow the rows: a row over target fails its check
    rows = [dict(r) for r in result["rows"]]
    rows[1] = {**rows[1], "train": {**rows[1]["train"], "operators": 9999}}
    assert check_targets(rows)["gcdoc_train_operators"]["met"] is False
