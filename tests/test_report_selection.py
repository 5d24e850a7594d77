"""Tests of :mod:`docgraph_dev.report.selection`: which runs each table shows (one setting
per ablation table, one run per seed) and the best configuration of each model on the summary
(by dev F1, never by test F1)."""

from __future__ import annotations

import json
from pathlib import Path

from report_runs import ablation_run, best_dev_runs, edit_metrics, model_section

from docgraph_dev.report.runs import Run, find_runs, group_runs
from docgraph_dev.report.selection import (
    SUMMARY_SEEDS,
    Selection,
    best_group,
    select_runs,
    summary_choices,
    window_selection,
)
from docgraph_dev.report.tables import summary_rows

BASELINE = {"graph": False, "cross_sentence": False}


def test_summary_picks_the_best_dev_configuration_of_each_model(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    best_dev_runs(root)
    runs = find_runs([root])
    rows = {r[1]: r for r in summary_rows(runs)}
    assert rows["GCDoc"][2:6] == [
        "conll03-gcdoc", "n=2 (1, 2)", "91.50 ± 0.71", "converged"]
    assert rows["BiLSTM-CRF"][4] == "90.00"  # one seed: no "± 0.00"
    assert rows["GCDoc"][7] == "92.22 ± 0.02 (Table V)"
    assert [r[2] for r in rows.values()] == ["conll03-baseline", "conll03-gcdoc",
                                             "conll03-graphonly"]


def test_summary_prefers_replicated_configurations(tmp_path: Path) -> None:
    from docgraph_dev.report import summary_rows

    root = tmp_path / "runs"
    for seed, f1 in ((1, 90.0), (2, 91.0), (3, 92.0)):
        ablation_run(root, "conll03-gcdoc", seed, f1, model=model_section())
    # a one-seed sweep point whose dev F1 beats the three-seed mean does not displace it
    ablation_run(root, "conll03-gcdoc-sweep", 1, 95.0, model=model_section())
    rows = {r[1]: r for r in summary_rows(find_runs([root]))}
    assert rows["GCDoc"][2:5] == ["conll03-gcdoc", "n=3 (1, 2, 3)", "91.00 ± 1.00"]
    # seeds count up to three: with three seeds each, the higher mean dev F1 wins even
    # against a configuration with more seeds
    ablation_run(root, "conll03-gcdoc", 4, 91.0, model=model_section())
    for seed in (2, 3):
        ablation_run(root, "conll03-gcdoc-sweep", seed, 93.0, model=model_section())
    rows = {r[1]: r for r in summary_rows(find_runs([root]))}
    assert rows["GCDoc"][2:4] == ["conll03-gcdoc-sweep", "n=3 (1, 2, 3)"]


def test_cpu_threads_and_processes_share_a_table(tmp_path: Path) -> None:
    """A two-process DDP run and a one-thread run of another variant fill one Table VII."""
    from docgraph_dev.report import PAPER_TABLES, paper_table_rows, select_runs, setting_key

    ddp = ablation_run(tmp_path, "full-ddp", 1, 92.0, model=model_section())
    metrics = json.loads((ddp / "metrics.json").read_text())
    metrics["config"]["train"].update(threads=0, processes=0)
    (ddp / "metrics.json").write_text(json.dumps(metrics))
    ablation_run(tmp_path, "cur", 1, 91.0, model=model_section(use_previous=False, use_next=False))
    ablation_run(tmp_path, "prev-patience5", 1, 91.2, model=model_section(use_next=False),
                 patience=5)
    runs = {r.group: r for r in find_runs([tmp_path])}
    assert runs["full-ddp"].hardware == "CPU" and runs["cur"].hardware == "CPU (1 thread)"
    assert setting_key(runs["full-ddp"]) == setting_key(runs["cur"])
    assert setting_key(runs["prev-patience5"]) != setting_key(runs["cur"])
    table6 = next(t for t in PAPER_TABLES if t.key == "table6")
    rows = paper_table_rows(table6, select_runs(runs.values(), "conll03",
                                                [v for v, _ in table6.rows]))
    assert [(r[2], r[4]) for r in rows] == [("cur", "91.00"), ("–", "not run"),
                                            ("–", "not run"), ("full-ddp", "92.00")]


def test_best_group_ranks_by_dev_never_by_test() -> None:
    # Same seed counts; "dev-best" has the higher dev F1 and the lower test F1 of the two.
    from docgraph_dev.report import Run, best_group

    def run(group: str, seed: int, dev: float, test: float) -> Run:
        metrics = {"dev": {"f1": dev}, "test": {"f1": test},
                   "config": {"model": model_section(), "dataset": "conll03"}}
        return Run(Path(f"{group}-s{seed}"), group, seed, metrics, "", "–")

    groups = {
        "dev-best": [run("dev-best", s, 95.0 + s / 10, 89.0) for s in (1, 2, 3)],
        "test-best": [run("test-best", s, 94.0 + s / 10, 92.0) for s in (1, 2, 3)],
    }
    variant = groups["dev-best"][0].variant
    assert best_group(groups, variant)[0] == "dev-best"
    # a configuration with fewer seeds never displaces one with the full count
    groups["one-lucky-seed"] = [run("one-lucky-seed", 1, 99.0, 99.0)]
    assert best_group(groups, variant)[0] == "dev-best"


def test_a_selection_without_runs_says_so(tmp_path: Path) -> None:
    ablation_run(tmp_path, "b", 1, 90.0, model=model_section(**BASELINE))
    runs = find_runs([tmp_path])
    for selection in (select_runs([], "conll03", ["full"]),
                      select_runs(runs, "ontonotes", ["baseline"]),  # another corpus
                      select_runs(runs, "conll03", ["full", "cross_only"])):  # other rows
        assert selection == Selection(selection.dataset, None, {}, 0, 0)
    assert select_runs([], "ontonotes", []).describe() == ("Selection (ontonotes): no runs for "
                                                          "any row yet.")


def test_the_setting_that_fills_the_most_rows_is_chosen(tmp_path: Path) -> None:
    # setting A (batches of 4000): two rows, one seed each; setting B (1000): one row, 3 seeds
    ablation_run(tmp_path, "a-base", 1, 90.0, model=model_section(**BASELINE))
    ablation_run(tmp_path, "a-full", 1, 92.0, model=model_section())
    for seed in (1, 2, 3):
        ablation_run(tmp_path, "b-full", seed, 91.0, model=model_section(), batch_tokens=1000)
    selection = select_runs(find_runs([tmp_path]), "conll03", ["baseline", "full"])
    assert {v: [r.group for r in rs] for v, rs in selection.rows.items()} == {
        "baseline": ["a-base"], "full": ["a-full"]}
    assert (selection.other_settings, selection.other_runs) == (1, 3)
    assert selection.describe().endswith(" — 2 runs. 3 runs for these rows in 1 other setting "
                                         "are not mixed in (see the per-configuration tables).")
    # with rows equal, the setting with more seeds wins
    ablation_run(tmp_path, "b-base", 1, 89.0, model=model_section(**BASELINE),
                 batch_tokens=1000)
    selection = select_runs(find_runs([tmp_path]), "conll03", ["baseline", "full"])
    assert sorted(r.group for rs in selection.rows.values() for r in rs) == [
        "b-base", "b-full", "b-full", "b-full"]
    assert "batches of 1000 tokens" in selection.describe()


def test_a_seed_repeated_in_a_row_counts_once_the_longest_run(tmp_path: Path) -> None:
    ablation_run(tmp_path, "full", 1, 92.0, model=model_section(), epochs=20)
    ablation_run(tmp_path, "full-resumed", 1, 50.0, model=model_section(), epochs=25)
    ablation_run(tmp_path, "full-early", 1, 10.0, model=model_section(), epochs=3)
    selection = select_runs(find_runs([tmp_path]), "conll03", ["full"])
    assert [r.group for r in selection.rows["full"]] == ["full-resumed"]
    assert selection.describe().endswith(" — 1 run.")


def test_runs_without_a_seed_are_told_apart_by_directory(tmp_path: Path) -> None:
    for name in ("x", "y"):
        run = ablation_run(tmp_path, name, 1, 90.0, model=model_section())
        edit_metrics(run, seed=None)
        run.rename(tmp_path / name)  # no -s<seed> suffix either
    selection = select_runs(find_runs([tmp_path]), "conll03", ["full"])
    assert [r.group for r in selection.rows["full"]] == ["x", "y"]


def test_the_choice_does_not_depend_on_the_order_of_the_runs(tmp_path: Path) -> None:
    ablation_run(tmp_path, "a", 1, 90.0, model=model_section(), batch_tokens=1000)
    ablation_run(tmp_path, "b", 1, 91.0, model=model_section(), batch_tokens=2000)
    runs = find_runs([tmp_path])
    assert select_runs(runs, "conll03", ["full"]) == select_runs(runs[::-1], "conll03",
                                                                 ["full"])


def test_window_selection_takes_the_window_variants_of_one_corpus(tmp_path: Path) -> None:
    ablation_run(tmp_path, "k3", 1, 91.0, model=model_section(window=3))
    ablation_run(tmp_path, "k2", 1, 92.0, model=model_section())
    ablation_run(tmp_path, "cross", 1, 90.0, model=model_section(graph=False))
    selection = window_selection(find_runs([tmp_path]))
    assert selection.dataset == "conll03"
    assert {v: [r.group for r in rs] for v, rs in selection.rows.items()} == {
        "window-3": ["k3"], "full": ["k2"]}
    assert window_selection(find_runs([tmp_path]), "ontonotes").key is None


def test_best_group_without_dev_scores_is_none() -> None:
    run = Run(Path("g-s1"), "g", 1, {"test": {"f1": 90.0}, "config": {"model": model_section()}},
              "", "–")
    assert best_group({"g": [run]}, "full") is None
    assert best_group({"g": [run]}, "baseline") is None
    assert SUMMARY_SEEDS == 3


def test_summary_choices_order_and_language_model_rows(tmp_path: Path) -> None:
    for name, model in (("pruning", model_section(edge_weights=False)),
                        ("gcdoc", model_section()), ("base", model_section(**BASELINE)),
                        ("cross", model_section(graph=False)),
                        ("k4", model_section(window=4))):  # not on the summary
        ablation_run(tmp_path, name, 1, 90.0, model=model)
    lm = ablation_run(tmp_path, "gcdoc-lm", 1, 95.0, model=model_section(lm_dim=8))
    edit_metrics(lm, config={**json.loads((lm / "metrics.json").read_text())["config"],
                             "lm": "/m/minilm"})
    choices = summary_choices(find_runs([tmp_path]))
    assert [(c.variant, c.with_lm, c.group) for c in choices] == [
        ("baseline", False, "base"), ("full", False, "gcdoc"), ("cross_only", False, "cross"),
        ("pruning", False, "pruning"), ("full", True, "gcdoc-lm")]
    assert all(c.dataset == "conll03" for c in choices)
    assert summary_choices([]) == []
    assert len(group_runs(find_runs([tmp_path]))) == 6
