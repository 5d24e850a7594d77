"""Tests of the command line of the results report (:mod:`docgraph_dev.report.cli`):
``RESULTS.md`` and the README's blocks written from run directories, ``--check``, ``--compare``
and the recorded arguments. Each module of the report has its own tests
(``tests/test_report_<module>.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_runs import ablation_run, best_dev_runs, model_section, write_runs

from docgraph_dev.report import main


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    return write_runs(tmp_path)


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


def test_main_compare_names_unknown_groups(runs_dir: Path, tmp_path: Path, capsys) -> None:
    from docgraph_dev.report import main

    out = tmp_path / "R.md"
    assert main([str(runs_dir), "--out", str(out), "--compare", "conll03-baseline",
                 "conll03-gcdoc"]) == 0
    assert "conll03-baseline vs conll03-gcdoc" in out.read_text()
    with pytest.raises(SystemExit):
        main([str(runs_dir), "--out", str(tmp_path / "x.md"), "--compare", "conll03-gcdoc",
              "conll03-nope"])
    assert "conll03-nope" in capsys.readouterr().err
    assert not (tmp_path / "x.md").exists()


def test_summary_block_and_readme_check(tmp_path: Path, capsys) -> None:
    from docgraph_dev.report import SUMMARY_END, SUMMARY_START, read_block

    root = tmp_path / "runs"
    lucky = best_dev_runs(root)
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
    metrics = json.loads((lucky / "metrics.json").read_text())
    metrics["dev"]["f1"] = 99.0
    (lucky / "metrics.json").write_text(json.dumps(metrics))
    capsys.readouterr()
    assert main([*args, "--check"]) == 1
    assert "stale" in capsys.readouterr().err


def test_report_without_arguments_uses_the_recorded_ones_and_advises_them(
        tmp_path: Path, monkeypatch, capsys) -> None:
    # `python scripts/report.py` regenerates from benchmarks/results/report.args; a stale
    # --check advises exactly that command (never one that would drop inputs).
    from docgraph_dev.report import ARGS_FILE, main

    root = tmp_path / "runs"
    ablation_run(root, "conll03-baseline", 1, 90.0, model=model_section(graph=False,
                                                                  cross_sentence=False))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    args = ["runs", "--out", "benchmarks/results/RESULTS.md"]
    assert main(args) == 0
    assert Path(ARGS_FILE).read_text().splitlines() == args
    assert main(["--check"]) == 0
    ablation_run(root, "conll03-gcdoc", 1, 92.0, model=model_section())
    capsys.readouterr()
    assert main(["--check"]) == 1
    assert capsys.readouterr().err.strip().endswith("regenerate with: python scripts/report.py")
    assert main([]) == 0 and main(["--check"]) == 0
