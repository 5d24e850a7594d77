"""Tests of ``benchmarks/inference_threshold.py`` (F1 and consistency per pruning threshold)."""

import json

import pytest
from conftest import benchmark_module


@pytest.fixture(scope="module")
def inference_threshold():
    with benchmark_module("inference_threshold") as module:
        yield module


def test_trained_threshold_reproduces_evaluate(inference_threshold, model_dir):
    import torch

    from docgraph.inference import evaluate, split_consistency
    from docgraph.model_dir import load_model_dir
    from docgraph.splits import prepare_run_split

    model, vocabs, config = load_model_dir(model_dir)
    trained = model.document_graph.uncertainty.threshold
    results = inference_threshold.measure(model_dir, [trained, 100.0, trained], "dev")
    prepared = prepare_run_split(config, vocabs, "dev")
    torch.manual_seed(0)
    scores, predictions = evaluate(model, prepared, vocabs, config.train.eval_batch_tokens)
    consistency = split_consistency(prepared, predictions)
    first = results[0]
    assert first.threshold == trained
    assert first.f1 == pytest.approx(scores.f1)
    assert first.inconsistent_groups == pytest.approx(100.0 - consistency.pred.consistency)
    assert first.against_majority == pytest.approx(consistency.pred.disagreement)
    # the seed is reset before each threshold, so the same threshold gives the same result
    assert results[2] == first
    assert 0.0 <= results[1].inconsistent_groups <= 100.0


def test_script_writes_json(inference_threshold, model_dir, tmp_path, capsys):
    out = tmp_path / "t.json"
    inference_threshold.main([str(model_dir), "--thresholds", "0.5", "100", "--out", str(out)])
    payload = json.loads(out.read_text())
    assert [r["threshold"] for r in payload["results"]] == [0.5, 100.0]
    assert "inconsistent groups" in capsys.readouterr().out


def test_model_without_pruning_is_refused(inference_threshold, tmp_path):
    from conftest import tiny_config

    from docgraph.experiment import run_experiment

    run = tmp_path / "nopruning"
    run_experiment(tiny_config(run, model={"pruning": False}, epochs=1))
    with pytest.raises(SystemExit, match="does not prune"):
        inference_threshold.main([str(run)])
