"""Tests of :mod:`docgraph_dev.score_speed` (the cost of entity scores), its ``predict.py``
runs replaced by canned ones."""

import json

import pytest


@pytest.mark.parametrize("changed", [False, True])
def test_rates_ratio_and_same_entities(tmp_path, monkeypatch, changed):
    from docgraph.data.registry import load_dataset
    from docgraph_dev import score_speed

    sample = load_dataset("sample", None, splits=("test",))
    monkeypatch.setattr("docgraph.data.registry.load_dataset",
                        lambda name, data_dir, splits: sample)
    entity = {"doc": "t-0", "sentence": 0, "start": 0, "end": 1, "type": "ORG"}
    commands = []

    def fake(command):
        commands.append(command)
        scored = "--scores" in command
        probe = command[4].endswith("probe.txt")
        record = dict(entity, type="PER" if scored and changed else "ORG")
        if scored:
            record["score"] = 0.9
        return (1.0 if probe else (5.0 if scored else 4.0)), json.dumps(record) + "\n"

    monkeypatch.setattr(score_speed, "_seconds", fake)
    out = tmp_path / "speed.json"
    assert score_speed.main(["--models", "m", "--rounds", "2", "--limit", "3",
                             "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    tokens = sum(d.num_tokens for d in sample["test"][:3])
    got = record["models"]["m"]
    assert got["tokens_per_second"] == {"plain": pytest.approx(tokens / 3.0),
                                        "scores": pytest.approx(tokens / 4.0)}
    assert got["scores_over_plain"] == pytest.approx(0.75)
    assert got["same_entities"] is (not changed)
    assert len(commands) == 8 and sum("--scores" in c for c in commands) == 4
    with pytest.raises(SystemExit):
        score_speed.main(["--rounds", "0", "--out", str(out)])


def test_the_consistency_arm_runs_beside_the_plain_one(tmp_path, monkeypatch):
    from docgraph.data.registry import load_dataset
    from docgraph_dev import score_speed

    sample = load_dataset("sample", None, splits=("test",))
    monkeypatch.setattr("docgraph.data.registry.load_dataset",
                        lambda name, data_dir, splits: sample)
    commands = []

    def fake(command):
        commands.append(command)
        probe = command[4].endswith("probe.txt")
        return (1.0 if probe else (3.0 if "--consistency" in command else 2.0)), "{}\n"

    monkeypatch.setattr(score_speed, "_seconds", fake)
    out = tmp_path / "speed.json"
    assert score_speed.main(["--models", "m", "--rounds", "3", "--limit", "3", "--arms",
                             "plain", "consistency", "--out", str(out)]) == 0
    got = json.loads(out.read_text())["models"]["m"]
    assert got["consistency_over_plain"] == pytest.approx(0.5)
    assert "same_entities" not in got and "scores" not in got["tokens_per_second"]
    assert sum("--consistency" in c for c in commands) == 6 and len(commands) == 12
    # the plain arm decodes each sentence alone even for a model whose default is consistency
    assert sum("--no-consistency" in c for c in commands) == 6
