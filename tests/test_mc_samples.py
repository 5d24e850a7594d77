"""Tests of :mod:`docgraph_dev.mc_samples` (the Monte-Carlo passes study behind
``benchmarks/mc_samples.py``) on a tiny trained run."""

import json

import pytest

from docgraph_dev import mc_samples


def test_study_writes_one_row_per_sample_count(model_dir, tmp_path, capsys):
    out = tmp_path / "mc.json"
    mc_samples.main([str(model_dir), "--samples", "1", "4", "--reference", "64",
                     "--draws", "2", "--out", str(out)])
    result = json.loads(out.read_text())
    assert [r["T"] for r in result["rows"]] == [1, 4]
    assert result["dataset"] == "sample" and result["tokens"] > 0
    for row in result["rows"]:
        assert 0.0 <= row["decision_differs_pct"] <= 100.0
        assert 0.0 <= row["dropped_pct"] <= 100.0
        assert row["entropy_mae"] >= 0.0 and row["seconds"] > 0.0
    # More passes estimate the reference's entropy better.
    assert result["rows"][1]["entropy_mae"] < result["rows"][0]["entropy_mae"]
    assert "T=   4" in capsys.readouterr().out


def test_study_refuses_a_model_without_uncertainty(tmp_path):
    from conftest import tiny_config

    from docgraph.training.experiment import run_experiment

    run_dir = tmp_path / "baseline"
    run_experiment(tiny_config(run_dir, model={"graph": False, "cross_sentence": False},
                               epochs=1))
    with pytest.raises(SystemExit, match="no uncertainty"):
        mc_samples.main([str(run_dir), "--samples", "1"])


def test_reference_must_be_a_multiple_of_32(model_dir, capsys):
    with pytest.raises(SystemExit):
        mc_samples.main([str(model_dir), "--reference", "100"])
    assert "multiple of 32" in capsys.readouterr().err
