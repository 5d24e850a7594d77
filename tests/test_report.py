"""Tests of the markdown results report built from run directories."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from docgraph.report import (
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
        "config": {"dataset": dataset, "embeddings": "glove-6b-50d"},
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
    rows = {row[0]: row for row in overall_rows("conll03", {g: r for (_, g), r in groups.items()})}
    # gcdoc test F1 92.0, 92.5, 91.5: mean 92.0, sample std 0.5.
    gcdoc = rows["conll03-gcdoc"]
    assert gcdoc[1] == "3"
    assert gcdoc[4] == "92.00 ± 0.50"
    assert gcdoc[2] == "91.00 ± 0.50"  # precision = f1 - 1
    assert gcdoc[5] == "93.50 ± 0.50"  # dev F1 93, 93.5, 94
    assert gcdoc[6] == "7/10, 7/10, 7/10"
    assert gcdoc[7] == "10.0"
    assert gcdoc[8] == "92.12 / 92.33 / 92.22"
    # baseline 91, 90: mean 90.5, std sqrt(0.5) = 0.7071.
    assert rows["conll03-baseline"][4] == "90.50 ± 0.71"
    assert rows["conll03-baseline"][8] == "90.96 / 91.07 / 91.01"
    assert rows["conll03-ablation"][4] == "89.00 ± 0.00"
    assert rows["conll03-ablation"][8] == "–"
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
                "train_cost_ratio_target": 3.0,
                "train_cost_ratio_met": True,
                "infer_cost_ratio": 1.0,
                "infer_cost_ratio_target": 4.0,
                "infer_cost_ratio_met": True,
                "matmul_gflops_per_s": 50.0,
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
    assert "speed-2024-01-01.json" in text and "1.00 (≤ 3: met)" in text


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
    _, seeds, delta, t, _, p = rows[0]
    assert seeds == "3 / 2" and delta == "+1.50"
    expected = welch_t_test([92.0, 92.5, 91.5], [91.0, 90.0])
    assert (t, p) == (f"{expected[0]:.2f}", f"{expected[2]:.3f}")


def test_embeddings_note_names_glove_subsets_as_glove() -> None:
    from docgraph.report import embeddings_note

    class _Run:
        def __init__(self, embeddings: str) -> None:
            self.embeddings = embeddings

    note = embeddings_note([_Run("glove-6b-50d"), _Run(".devcarry/glove.6B.50d.subset.txt.gz")])
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
    from docgraph.report import main

    out = tmp_path / "R.md"
    assert main([str(runs_dir), "--out", str(out), "--compare", "conll03-baseline",
                 "conll03-gcdoc"]) == 0
    assert "conll03-baseline vs conll03-gcdoc" in out.read_text()
    with pytest.raises(SystemExit):
        main([str(runs_dir), "--out", str(tmp_path / "x.md"), "--compare", "conll03-gcdoc",
              "conll03-nope"])
    assert "conll03-nope" in capsys.readouterr().err
    assert not (tmp_path / "x.md").exists()
