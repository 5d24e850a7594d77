"""Operator counts of a step: the probe itself, the lean step it measures, and every training
mode without an accumulating index write or a documented non-deterministic operator."""

from __future__ import annotations

import pytest
import torch
from conftest import TINY_MODEL

from docgraph.batching.loader import collate
from docgraph.config import TrainConfig
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.training.loop import clip_groups, make_optimizer, training_step
from docgraph_dev.operator_counts import (
    OperatorCountOptions,
    check_targets,
    count_operators,
    format_counts,
    run_operator_counts,
    train_modes,
)


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

    assert count_operators(advanced_indexing).accumulating_by_name == {"IndexBackward0": 1}
    # index_select's backward is an atomic index_add on CUDA: one write, however deep
    counted = count_operators(lambda: x.index_select(0, index).sum().backward())
    assert counted.accumulating_by_name == {"IndexSelectBackward0": 1}
    assert {"aten::index_select_backward", "aten::index_add_"} <= set(
        counted.nondeterministic_by_name)
    gathered = count_operators(lambda: x.gather(0, index.view(-1, 1).expand(-1, 3))
                               .sum().backward())
    assert gathered.accumulating_by_name == {"GatherBackward0": 1}
    assert gathered.nondeterministic >= 1
    z, ones = torch.zeros(6), torch.ones(4)
    for write, name in ((lambda: z.index_add_(0, index, ones), "aten::index_add_"),
                        (lambda: z.scatter_add_(0, index, ones), "aten::scatter_add_"),
                        (lambda: z.scatter_reduce_(0, index, ones, "sum"),
                         "aten::scatter_reduce_"),
                        (lambda: z.index_reduce_(0, index, ones, "prod"),
                         "aten::index_reduce_"),
                        (lambda: z.put_(index, ones, accumulate=True), "aten::put_"),
                        (lambda: z.index_put_((index,), ones, accumulate=True),
                         "aten::index_put_")):
        assert count_operators(write).accumulating_by_name == {name: 1}, name
    # without accumulate an index_put writes once per element, but CUDA's order is undefined
    plain = count_operators(lambda: z.index_put_((index,), ones))
    assert plain.accumulating_writes == 0 and "aten::index_put_" in plain.nondeterministic_by_name
    # cumsum is documented for floating and complex tensors only
    assert count_operators(lambda: torch.cumsum(index, 0)).nondeterministic == 0
    assert count_operators(lambda: torch.cumsum(ones, 0)).nondeterministic == 1
    # F.embedding's backward sorts and sums repeats: neither write nor atomic
    clean = count_operators(
        lambda: torch.nn.functional.embedding(index, x).sum().backward())
    assert clean.accumulating_writes == 0 and clean.nondeterministic == 0
    lstm = torch.nn.LSTM(3, 2, batch_first=True)
    assert count_operators(lambda: lstm(x.unsqueeze(0))).cudnn_rnn_calls == 1

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
    batch = collate(graphs, indices, torch.device("cpu"), model.plan_settings())
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


def test_every_training_mode_of_train_py_is_counted():
    """train_modes follows train.py's switches and choices: a new one is counted at once."""
    from docgraph.cli.arguments import SWITCHES

    modes = train_modes()
    for flag, values in SWITCHES.items():
        if "model" in values:
            assert modes[flag.lstrip("-")] == {"model": values["model"]}, flag
    for name in ("gcdoc", "baseline", "fast", "constrained-decoding", "precision=bf16",
                 "window-encoding=per_sentence", "mc-dropout=output", "isolated=gate",
                 "relation-labels=type", "optimizer=sgd", "unpruned-epochs=1", "lm",
                 "no-graph", "no-pruning", "no-edge-weights", "current-sentence-only"):
        assert name in modes, name
    assert "optimizer=adam" not in modes  # the counter's own optimizer


@pytest.fixture(scope="module")
def every_mode(sample_splits):
    """Every training mode counted on a small batch of the sample corpus (tiny models)."""
    return run_operator_counts(OperatorCountOptions(
        dataset="sample", batch_tokens=(300, 1200), model_overrides=dict(TINY_MODEL)))


@pytest.mark.parametrize("mode", sorted(train_modes()))
def test_a_training_step_of_every_mode_writes_nothing_at_indices_and_is_deterministic(
        every_mode, mode):
    counted = every_mode["modes"][mode]
    for row in counted["rows"]:
        train = row["train"]
        assert train["accumulating_index_writes"] == 0, train["accumulating_index_writes_by_name"]
        assert train["nondeterministic"] == 0, train["nondeterministic_by_name"]
        assert train["synchronising"] == 0 and train["read_backs"] == 0, train
        assert train["cudnn_rnn_calls"] > 0
    assert all(check["met"] for check in counted["checks"].values()), counted["checks"]


def test_run_operator_counts_checks_every_target(every_mode):
    result = every_mode
    assert result["met"] is True
    assert result["nondeterministic_source"].startswith("https://pytorch.org/docs/")
    assert [r["batch_tokens"] for r in result["modes"]["gcdoc"]["rows"]] == [300, 1200]
    assert [r["batch_tokens"] for r in result["modes"]["fast"]["rows"]] == [300]
    rows = result["modes"]["gcdoc"]["rows"]
    assert rows[0]["tokens"] <= 300 < rows[1]["tokens"] <= 1200
    checks = result["modes"]["gcdoc"]["checks"]
    assert set(checks) == {"train_operators", "growth", "train_synchronising",
                           "tag_synchronising", "train_read_backs", "tag_read_backs",
                           "train_accumulating_index_writes", "train_nondeterministic"}
    assert set(result["modes"]["fast"]["checks"]) == set(checks) - {"train_operators", "growth"}
    assert checks["train_accumulating_index_writes"] == {"value": 0, "target": 0, "met": True}
    assert checks["train_nondeterministic"] == {"value": 0, "target": 0, "met": True}
    assert checks["tag_read_backs"] == {"value": 1, "target": 1, "met": True}
    # the checks follow the rows: a row over target fails its check
    rows = [dict(r) for r in rows]
    rows[0] = {**rows[0], "train": {**rows[0]["train"], "operators": 9999}}
    assert check_targets("gcdoc", rows)["train_operators"]["met"] is False
    rows[1] = {**rows[1], "train": {**rows[1]["train"], "nondeterministic": 1}}
    assert check_targets("gcdoc", rows)["train_nondeterministic"]["met"] is False
    rows = [{**rows[0], "train": {**rows[0]["train"], "accumulating_index_writes": 2}}]
    assert check_targets("fast", rows)["train_accumulating_index_writes"]["met"] is False
    text = format_counts(result)
    assert "every target met" in text and "fast" in text


def test_benchmark_ops_writes_one_file_per_mode_and_fails_on_a_missed_target(
        tmp_path, monkeypatch):
    """``scripts/benchmark.py --ops``: one JSON per mode; exit status 1 when a mode misses a
    target (e.g. one accumulating index write), 0 when every target is met."""
    import json

    import docgraph_dev.benchmark as benchmark

    counts = {"operators": 10, "synchronising": 0, "read_backs": 0, "cudnn_rnn_calls": 2,
              "accumulating_index_writes": 0, "nondeterministic": 0,
              "accumulating_index_writes_by_name": {}, "nondeterministic_by_name": {}}
    row = {"batch_tokens": 300, "tokens": 290, "train": counts,
           "tag": {**counts, "read_backs": 1}}
    modes = {name: {"settings": {}, "rows": [row], "checks": check_targets(name, [row])}
             for name in ("gcdoc", "fast")}
    result = {"dataset": "sample", "split": "train", "modes": modes, "met": True}
    seen = []

    def counted(options, command):
        seen.append(options.modes)
        return result

    monkeypatch.setattr(benchmark, "run_operator_counts", counted)
    argv = ["--ops", "--dataset", "sample", "--out", str(tmp_path), "--modes", "gcdoc", "fast"]
    assert benchmark.main(argv) == 0 and seen == [("gcdoc", "fast")]
    saved = json.loads((tmp_path / "fast.json").read_text())
    assert saved["mode"] == "fast" and saved["rows"] == [row]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fast.json", "gcdoc.json"]
    result["met"] = False
    assert benchmark.main(argv) == 1
