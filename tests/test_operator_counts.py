"""Operator counts of a step: the probe itself, and the lean step it measures."""

from __future__ import annotations

import pytest
import torch
from conftest import TINY_MODEL

from docgraph.batching.loader import collate
from docgraph.config import TrainConfig
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.tools.operator_counts import (
    OperatorCountOptions,
    check_targets,
    count_operators,
    run_operator_counts,
)
from docgraph.training.loop import clip_groups, make_optimizer, training_step


def test_probe_counts_top_level_operators_and_reads_back():
    x = torch.randn(8)
    counted = count_operators(lambda: (x + 1).sum().item())
    assert counted.by_name["aten::add"] == 1 and counted.by_name["aten::sum"] == 1
    assert counted.synchronising == 1  # .item(): _local_scalar_dense
    assert count_operators(lambda: torch.nonzero(x > 0)).sync_by_name == {"aten::nonzero": 1}
    # boolean indexing runs nonzero inside aten::index: one sync, not a top-level operator
    nested = count_operators(lambda: x[x > 0])
    assert nested.synchronising == 1 and "aten::nonzero" not in nested.by_name


def test_probe_counts_accumulating_writes_nondeterministic_operators_and_read_backs():
    x = torch.randn(6, 3, requires_grad=True)
    index = torch.tensor([0, 0, 0, 2])

    def advanced_indexing():
        x[index].sum().backward()

    assert count_operators(advanced_indexing).accumulating_writes == 1
    # index_select's backward is an atomic index_add on CUDA
    counted = count_operators(lambda: x.index_select(0, index).sum().backward())
    assert counted.accumulating_writes == 0
    assert {"aten::index_select_backward", "aten::index_add_"} <= set(
        counted.nondeterministic_by_name)
    assert count_operators(lambda: x.gather(0, index.view(-1, 1).expand(-1, 3))
                           .sum().backward()).nondeterministic >= 1
    # F.embedding's backward sorts and sums repeats: neither write nor atomic
    clean = count_operators(
        lambda: torch.nn.functional.embedding(index, x).sum().backward())
    assert clean.accumulating_writes == 0 and clean.nondeterministic == 0

    def read_back():
        y = x.detach() * 2
        y.cpu()
        y.tolist()
        torch.equal(y, y)
        y.to("cpu")
        y.to(torch.float64)  # a cast, not a read-back

    sites = count_operators(read_back).read_backs_by_site
    assert sum(sites.values()) == 4
    assert {site.split(" @ ")[0] for site in sites} == {"cpu", "tolist", "equal", "to"}


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
    # no read-back in a training step; one per tagged batch (the Viterbi back-pointers)
    assert small.read_backs == large.read_backs == 0, large.read_backs_by_site
    assert small_tag.read_backs == large_tag.read_backs == 1, large_tag.read_backs_by_site
    assert next(iter(large_tag.read_backs_by_site)).startswith("cpu @ nn/crf.py:")
    # gathers with a deterministic backward: no accumulating write, nothing atomic on CUDA
    assert large.accumulating_writes == 0
    assert large.nondeterministic == 0, large.nondeterministic_by_name
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
                           "tag_synchronising", "train_read_backs", "tag_read_backs",
                           "train_accumulating_index_writes", "train_nondeterministic_on_cuda"}
    assert checks["train_synchronising"] == {"value": 0, "target": 5, "met": True}
    assert checks["train_accumulating_index_writes"] == {"value": 0, "target": 2, "met": True}
    assert checks["train_nondeterministic_on_cuda"] == {"value": 0, "target": 0, "met": True}
    assert checks["tag_read_backs"] == {"value": 1, "target": 1, "met": True}
    # the checks follow the rows: a row over target fails its check
    rows = [dict(r) for r in result["rows"]]
    rows[1] = {**rows[1], "train": {**rows[1]["train"], "operators": 9999}}
    assert check_targets(rows)["gcdoc_train_operators"]["met"] is False
    rows[3] = {**rows[3], "train": {**rows[3]["train"], "nondeterministic_on_cuda": 1}}
    assert check_targets(rows)["train_nondeterministic_on_cuda"]["met"] is False
