"""Tests of :mod:`docgraph_dev.inference_threshold` (F1 and consistency per pruning
threshold), the study behind ``benchmarks/inference_threshold.py``."""

import json

import pytest

from docgraph_dev import inference_threshold


def test_trained_threshold_reproduces_evaluate(model_dir):
    import torch

    from docgraph.graph.splits import prepare_run_split
    from docgraph.persistence.model_dir import load_model_dir
    from docgraph.tagging.inference import evaluate, split_consistency

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


def test_script_writes_json(model_dir, tmp_path, capsys):
    out = tmp_path / "t.json"
    inference_threshold.main([str(model_dir), "--thresholds", "0.5", "100", "--out", str(out)])
    payload = json.loads(out.read_text())
    assert [r["threshold"] for r in payload["results"]] == [0.5, 100.0]
    assert "inconsistent groups" in capsys.readouterr().out


def test_model_without_pruning_is_refused(tmp_path):
    from conftest import tiny_config

    from docgraph.training.experiment import run_experiment

    run = tmp_path / "nopruning"
    run_experiment(tiny_config(run, model={"pruning": False}, epochs=1))
    with pytest.raises(SystemExit, match="does not prune"):
        inference_threshold.main([str(run)])


def _payload(run_dir, split, f1_by_threshold):
    return {"run_dir": run_dir, "split": split, "seed": 0,
            "results": [{"threshold": t, "f1": f1, "f1_recurrent": f1,
                         "inconsistent_groups": 10.0 - t, "against_majority": 1.0}
                        for t, f1 in f1_by_threshold.items()]}


def test_summarize_chooses_on_dev_and_reads_test(tmp_path, capsys):
    payloads = [
        _payload("a", "dev", {0.5: 90.0, 1.5: 91.0}), _payload("a", "test", {0.5: 88.0, 1.5: 89.0}),
        # a tie on dev goes to the lower threshold, though test would favour 1.5
        _payload("b", "dev", {0.5: 92.0, 1.5: 92.0}), _payload("b", "test", {0.5: 87.0, 1.5: 90.0}),
    ]
    text = inference_threshold.summarize(payloads, baseline=0.5, against=[86.0, 87.0])
    lines = text.splitlines()
    assert lines[0] == "2 runs: a, b"
    assert lines[2].split() == ["0.50", "91.00", "±", "1.41", "87.50", "±", "0.71", "9.50", "±",
                                "0.00%"]
    assert lines[3].split()[:7] == ["1.50", "91.50", "±", "0.71", "89.50", "±", "0.71"]
    assert "a: dev-chosen threshold 1.5, test F1 88.00 at 0.5 -> 89.00 (+1.00)" in lines
    assert "b: dev-chosen threshold 0.5, test F1 87.00 at 0.5 -> 87.00 (+0.00)" in lines
    assert "mean test F1: 87.50 ± 0.71 at 0.5, 88.00 ± 1.41 at the dev-chosen thresholds" in lines
    assert lines[-2].startswith("against 86.50 ± 0.71 (n = 2): at 0.5 +1.00, Welch p = ")
    assert lines[-1].startswith("against 86.50 ± 0.71 (n = 2): dev-chosen +1.50, Welch p = ")
    with pytest.raises(ValueError, match="b: needs a dev and a test file"):
        inference_threshold.summarize(payloads[:3])
    with pytest.raises(ValueError, match="baseline threshold 1.0"):
        inference_threshold.summarize(payloads, baseline=1.0)
    # the command line reads the files and the other runs' metrics.json
    files = []
    for i, payload in enumerate(payloads):
        files.append(tmp_path / f"{i}.json")
        files[-1].write_text(json.dumps(payload))
    other = tmp_path / "baseline-s1"
    other.mkdir()
    (other / "metrics.json").write_text(json.dumps({"test": {"f1": 86.0}}))
    other2 = tmp_path / "baseline-s2"
    other2.mkdir()
    (other2 / "metrics.json").write_text(json.dumps({"test": {"f1": 87.0}}))
    inference_threshold.main(["--summarize", *map(str, files), "--against", str(other),
                              str(other2)])
    assert capsys.readouterr().out.rstrip("\n") == text
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(SystemExit, match="bad.json: expected a JSON file"):
        inference_threshold.main(["--summarize", str(tmp_path / "bad.json")])
    with pytest.raises(SystemExit):
        inference_threshold.main([])
    assert "give a run directory, or --summarize" in capsys.readouterr().err


def test_inconsistent_groups_read_n_a_without_groups(tmp_path):
    results = [inference_threshold.ThresholdResult(0.5, 80.0, 0.0, None, 0.0),
               inference_threshold.ThresholdResult(1.5, 81.0, 10.0, 25.0, 5.0)]
    rows = inference_threshold.format_results(results).splitlines()[1:]
    assert rows[0].split() == ["0.50", "80.00", "0.00", "n/a", "0.00%"]
    assert rows[1].split() == ["1.50", "81.00", "10.00", "25.00%", "5.00%"]
    payloads = [_payload("a", "dev", {0.5: 90.0}), _payload("a", "test", {0.5: 88.0})]
    payloads[1]["results"][0]["inconsistent_groups"] = None
    line = inference_threshold.summarize(payloads, baseline=0.5).splitlines()[2]
    assert line.split() == ["0.50", "90.00", "±", "0.00", "88.00", "±", "0.00", "n/a"]
