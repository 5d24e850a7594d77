"""Tests of :mod:`docgraph.tagging.calibration` (ECE, reliability bins, temperature, the
precision-recall trade of a score threshold) and :mod:`docgraph_dev.calibration` (the
study on a trained model)."""

import json
import math

import pytest

from docgraph.data.document import make_document
from docgraph.tagging.calibration import (
    calibration,
    entity_outcomes,
    fit_temperature,
    precision_recall,
    temperature_grid,
)
from docgraph.tagging.result import Tagging


def test_ece_and_bins_by_hand():
    outcomes = [(0.95, True), (0.92, True), (0.91, False), (0.15, False), (0.12, True)]
    cal = calibration(outcomes, bins=10)
    top, low = cal.bins[9], cal.bins[1]
    assert (top.count, low.count) == (3, 2)
    assert top.confidence == pytest.approx((0.95 + 0.92 + 0.91) / 3)
    assert top.accuracy == pytest.approx(2 / 3) and low.accuracy == pytest.approx(0.5)
    expected = 3 / 5 * abs(0.9266666 - 2 / 3) + 2 / 5 * abs(0.135 - 0.5)
    assert cal.ece == pytest.approx(expected, abs=1e-6)
    assert cal.bins[5].count == 0 and cal.bins[5].accuracy is None
    loss = -(math.log(0.95) + math.log(0.92) + math.log(0.09) + math.log(0.85)
             + math.log(0.12)) / 5
    assert cal.log_loss == pytest.approx(loss)
    assert calibration([(1.0, True)], bins=10).bins[9].count == 1  # 1 is in the last bin
    assert calibration([(0.7, True)] * 7 + [(0.7, False)] * 3).ece == pytest.approx(0.0)
    with pytest.raises(ValueError, match="bins must be >= 1"):
        calibration(outcomes, bins=0)


def test_outcomes_match_gold_entities_exactly():
    doc = make_document("d", [(["Ann", "Lee", "met", "Bo"], ["B-PER", "I-PER", "O", "B-PER"]),
                              (["in", "Rome"], ["O", "B-LOC"])])
    tagging = Tagging([["B-PER", "O", "O", "B-PER"], ["O", "B-ORG"]], [[0.6, 0.9], [0.3]])
    outcomes, gold = entity_outcomes([doc], [tagging])
    assert gold == 3
    assert outcomes == [(0.6, False), (0.9, True), (0.3, False)]  # boundary, right, type
    with pytest.raises(ValueError, match="has no scores"):
        entity_outcomes([doc], [Tagging(tagging.tags)])
    with pytest.raises(ValueError, match="1 documents but 0 taggings"):
        entity_outcomes([doc], [])


def test_fit_temperature_takes_the_lowest_log_loss():
    over = [(0.99, True), (0.99, False), (0.99, True), (0.99, False)]
    fair = [(0.5, True), (0.5, False), (0.5, True), (0.5, False)]
    assert fit_temperature({1.0: over, 2.0: fair}) == 2.0
    assert fit_temperature({1.0: fair, 3.0: fair}) == 1.0  # a tie: the lower
    with pytest.raises(ValueError, match="no scored entity"):
        fit_temperature({1.0: []})
    grid = temperature_grid(0.5, 4.0, 15)
    assert 1.0 in grid and grid[0] == 0.5 and grid[-1] == 4.0 and grid == sorted(grid)


def test_precision_recall_over_thresholds():
    outcomes = [(0.9, True), (0.8, True), (0.4, False), (0.2, True)]
    rows = precision_recall(outcomes, gold_count=5, thresholds=[0.0, 0.5, 0.95])
    assert [r["entities"] for r in rows] == [4, 2, 0]
    assert rows[0]["precision"] == pytest.approx(75.0) and rows[0]["recall"] == 60.0
    assert rows[1]["precision"] == 100.0 and rows[1]["recall"] == 40.0
    assert rows[2]["f1"] == 0.0


def test_the_study_on_a_trained_model(model_dir, tmp_path, monkeypatch):
    """The study tags dev and test, fits a temperature on dev and writes it only when it
    lowers the dev ECE; the stored temperature changes the scores, never the tags."""
    import shutil

    from docgraph.tagging.tagger import Tagger
    from docgraph_dev.calibration import main

    model = tmp_path / "model"
    shutil.copytree(model_dir, model)
    before = Tagger.load(model)
    text = ["Kestrel beat Harwick 2-0 in Veldania . Piet Rauch scored for Kestrel ."]
    out = tmp_path / "cal.json"
    assert main(["--models", str(model), "--out", str(out), "--png", str(tmp_path),
                 "--write", "--limit", "4"]) == 0
    record = json.loads(out.read_text())["results"][0]
    assert record["fitted_temperature"] in record["grid"]
    assert 0.0 <= record["test_fitted"]["ece"] <= 1.0
    assert (tmp_path / "model-reliability.png").stat().st_size > 1000
    after = Tagger.load(model)
    assert record["written"] == (record["dev_fitted"]["ece"] < record["dev_model"]["ece"])
    if record["written"]:
        assert after.model.config.score_temperature == record["fitted_temperature"]
    assert after.tag(text)[1] == before.tag(text)[1]
