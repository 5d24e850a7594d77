"""Fine-tuning anchored to the starting weights (docgraph/training/anchor.py): the entries a
fine-tune creates are left free, each pull moves the others by lr * strength of their distance
(checked against the formula entry by entry), and ``--anchor`` reaches the training loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import TINY_FLAGS, resumed_like_whole
from torch import nn

from docgraph.cli.arguments import check_arguments, train_parser
from docgraph.config import ExperimentConfig
from docgraph.data.vocab import Vocab
from docgraph.persistence.checkpoint import load_checkpoint
from docgraph.persistence.model_dir import load_model_weights, read_model_dir
from docgraph.training.anchor import WeightAnchor, fresh_entries
from docgraph.training.experiment import run_experiment
from docgraph.training.init_from import LM_COLUMNS

OLD = Vocab(["<pad>", "O", "B-PER", "I-PER"], pad_token="<pad>")
NEW = Vocab(["<pad>", "O", "B-DATE", "B-PER", "I-DATE", "I-PER"], pad_token="<pad>")


def test_fresh_entries_are_the_added_labels_rows_and_columns_only():
    state = {"emission.weight": torch.zeros(6, 3), "emission.bias": torch.zeros(6),
             "crf.crf.transitions": torch.zeros(6, 6), "other.weight": torch.zeros(2, 2)}
    fresh = fresh_entries(state, OLD, NEW, {})
    added = torch.tensor([False, False, True, False, True, False])
    assert torch.equal(fresh["emission.weight"], added.unsqueeze(1).expand(6, 3))
    assert torch.equal(fresh["emission.bias"], added)
    # a transition is fresh when either end is an added label
    assert torch.equal(fresh["crf.crf.transitions"], added.unsqueeze(1) | added.unsqueeze(0))
    assert "other.weight" not in fresh


def test_fresh_entries_free_the_added_language_model_columns():
    key = LM_COLUMNS[0]
    fresh = fresh_entries({key: torch.zeros(4, 7)}, OLD, OLD, {key: torch.Size([4, 5])})
    assert torch.equal(fresh[key], torch.arange(7).expand(4, 7) >= 5)
    assert fresh_entries({key: torch.zeros(4, 5)}, OLD, OLD, {key: torch.Size([4, 5])}) == {}


def test_a_pull_moves_each_anchored_entry_by_lr_times_strength_of_its_distance():
    torch.manual_seed(0)
    layer = nn.Linear(3, 2)
    free = torch.tensor([[True, False, False], [False, False, False]])
    anchor = WeightAnchor(layer, 4.0, {"weight": free})
    start_w, start_b = layer.weight.detach().clone(), layer.bias.detach().clone()
    with torch.no_grad():
        layer.weight.add_(torch.randn(2, 3))
        layer.bias.add_(torch.randn(2))
    moved_w, moved_b = layer.weight.detach().clone(), layer.bias.detach().clone()
    distance = ((moved_w - start_w)[~free].pow(2).sum()
                + (moved_b - start_b).pow(2).sum()).sqrt()
    assert anchor.distance() == pytest.approx(float(distance), rel=1e-6)
    anchor.pull(0.05)  # 0.2 of the way back
    expected = moved_w - 0.2 * (moved_w - start_w)
    assert torch.allclose(layer.weight[~free], expected[~free])
    assert layer.weight[0, 0] == moved_w[0, 0]  # free: untouched
    assert torch.allclose(layer.bias, moved_b - 0.2 * (moved_b - start_b))
    assert anchor.distance() == pytest.approx(0.8 * float(distance), rel=1e-5)
    assert "strength=4" in repr(anchor)


def test_an_anchor_refuses_a_strength_or_rate_that_cannot_work():
    with pytest.raises(ValueError, match="positive"):
        WeightAnchor(nn.Linear(2, 2), 0.0)
    anchor = WeightAnchor(nn.Linear(2, 2), 100.0)
    with pytest.raises(ValueError, match="lr \\* strength"):
        anchor.pull(0.01)


def _corpus(directory: Path) -> Path:
    document = ("-DOCSTART- O\n\nKestrel B-ORG\nbeat O\nCarrow B-ORG\nin O\nVeldania B-LOC\n"
                ". O\n\nPiet B-PER\nRauch I-PER\nscored O\ntwice O\n. O\n\n")
    directory.mkdir(parents=True, exist_ok=True)
    for split, copies in (("train", 3), ("dev", 1), ("test", 1)):
        (directory / f"{split}.txt").write_text(document * copies)
    return directory


def test_anchor_needs_init_from_and_a_rate_below_one(tmp_path, model_dir):
    data = _corpus(tmp_path / "mine")
    common = ["--dataset", "column", "--data-dir", str(data), *TINY_FLAGS]
    with pytest.raises(ValueError, match="--anchor 10.0: anchors.*--init-from"):
        check_arguments(train_parser().parse_args(
            [*common, "--output-dir", str(tmp_path / "a"), "--anchor", "10"]))
    with pytest.raises(ValueError, match="--anchor 1000.0: with --lr 0.01"):
        check_arguments(train_parser().parse_args(
            [*common, "--output-dir", str(tmp_path / "b"), "--init-from", str(model_dir),
             "--lr", "0.01", "--anchor", "1000"]))


def test_an_anchored_fine_tune_stays_nearer_its_start(tmp_path, model_dir):
    data = _corpus(tmp_path / "mine")

    def fine_tune(name: str, *extra: str) -> tuple[dict, float]:
        config = check_arguments(train_parser().parse_args(
            ["--dataset", "column", "--data-dir", str(data), *TINY_FLAGS, "--output-dir",
             str(tmp_path / name), "--init-from", str(model_dir), "--epochs", "2",
             "--lr", "0.01", "--patience", "5", *extra]))
        metrics = run_experiment(config, progress=False)
        history = [json.loads(line) for line in
                   (tmp_path / name / "train_log.jsonl").read_text().splitlines()]
        return metrics, history[-1].get("anchor_distance", -1.0)

    _, no_distance = fine_tune("free")
    anchored, distance = fine_tune("anchored", "--anchor", "50")
    assert no_distance == -1.0 and distance > 0
    assert anchored["config"]["fine_tune"]["anchor"] == 50.0
    start = load_model_weights(model_dir, *read_model_dir(model_dir)).state_dict()
    key = "context_encoder.lstm.weight_hh_l0"
    moved = {name: float((load_checkpoint(tmp_path / name / "last.pt")["model"][key]
                          - start[key]).norm()) for name in ("free", "anchored")}
    assert 0 < moved["anchored"] < 0.5 * moved["free"]


def test_an_anchored_fine_tune_resumes_exactly(tmp_path, model_dir):
    # a resumed run rebuilds the anchor from the starting model, not from its checkpoint
    data = _corpus(tmp_path / "mine")

    def config(out: Path, epochs: int) -> ExperimentConfig:
        return check_arguments(train_parser().parse_args(
            ["--dataset", "column", "--data-dir", str(data), *TINY_FLAGS, "--output-dir",
             str(out), "--init-from", str(model_dir), "--epochs", str(epochs), "--lr", "0.01",
             "--patience", "5", "--anchor", "20"]))

    distances = resumed_like_whole(config, tmp_path, "anchor_distance")
    assert distances[0] == distances[1] and len(distances[0]) == 3
