"""Tests of :mod:`docgraph.training.loop`: exact resume, checkpoints written by the trainer,
non-finite losses, time budgets, threads and gradient clipping."""

import dataclasses
import json

import pytest
import torch
from conftest import TINY_MODEL, tiny_config

import docgraph.runtime.atomic as atomic
from docgraph.model import GCDoc, GCDocConfig
from docgraph.persistence.checkpoint import (
    ROWS,
    CheckpointError,
    full_rows,
    load_checkpoint,
    save_checkpoint,
)
from docgraph.training.experiment import run_experiment
from docgraph.training.loop import Trainer, TrainingError


def _state(path):
    return load_checkpoint(path)["model"]


def _assert_same_weights(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], dict):  # stored by the rows that changed from the start
            assert a[key][ROWS] == b[key][ROWS], key
            assert torch.equal(a[key]["index"], b[key]["index"]), key
            assert torch.equal(a[key]["values"], b[key]["values"]), key
        else:
            assert torch.equal(a[key], b[key]), key


def test_resume_equals_uninterrupted(trained_run, tmp_path):
    straight_dir, straight = trained_run  # 3 epochs in one go, patience 10
    out = tmp_path / "resumed"
    first = run_experiment(tiny_config(out, epochs=2))
    assert first["epochs"] == 2
    resumed = run_experiment(tiny_config(out, epochs=3), resume=True)
    assert resumed["epochs"] == 3 and resumed["best_epoch"] == straight["best_epoch"]
    for split in ("dev", "test"):
        assert resumed[split] == straight[split]
    _assert_same_weights(_state(out / "last.pt"), _state(straight_dir / "last.pt"))
    _assert_same_weights(_state(out / "model.pt"), _state(straight_dir / "model.pt"))
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == [1, 2, 3]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="resuming on the GPU needs CUDA")
def test_resume_on_cuda(tmp_path):
    # The RNG states in last.pt must be restored as CPU byte tensors even when the run is on
    # the GPU (a CUDA map_location used to break every resume there).
    out = tmp_path / "cuda"
    config = tiny_config(out, epochs=1)
    run_experiment(dataclasses.replace(config, device="cuda"))
    resumed = run_experiment(dataclasses.replace(tiny_config(out, epochs=2), device="cuda"),
                             resume=True)
    assert resumed["epochs"] == 2


def test_resume_reads_a_checkpoint_with_state_of_an_earlier_version(trained_run, tmp_path):
    out = tmp_path / "old"
    run_experiment(tiny_config(out, epochs=2))
    ckpt = load_checkpoint(out / "last.pt")
    ckpt["state"]["wall_seconds"] = 12.5  # kept by versions before 2026-11-26
    save_checkpoint(out / "last.pt", {k: v for k, v in ckpt.items() if k != "format_version"})
    resumed = run_experiment(tiny_config(out, epochs=3), resume=True)
    assert resumed["epochs"] == 3 and resumed["dev"] == trained_run[1]["dev"]


def test_trainer_checkpoint_survives_failed_write(tmp_path, monkeypatch, sample_splits):
    from docgraph.graph.splits import build_vocabularies, prepare_split
    from docgraph.persistence.model_dir import build_model

    config = tiny_config(tmp_path)
    vocabs, _, _ = build_vocabularies(sample_splits, "none")
    train = prepare_split(sample_splits["train"][:2], vocabs, config)
    trainer = Trainer(build_model(config.model, vocabs), vocabs, config, train, train, tmp_path)
    trainer.save_checkpoint()
    before = _state(trainer.checkpoint_path)
    with torch.no_grad():
        trainer.model.emission.weight.add_(1.0)
    monkeypatch.setattr(atomic.os, "replace", lambda *a: (_ for _ in ()).throw(OSError("x")))
    with pytest.raises(OSError):
        trainer.save_checkpoint()
    monkeypatch.undo()
    _assert_same_weights(_state(trainer.checkpoint_path), before)
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]
    trainer.load_checkpoint()
    start = trainer.start_weights["emission.weight"]
    assert torch.equal(trainer.model.emission.weight, full_rows(before["emission.weight"], start))


def test_resume_with_other_architecture_is_a_checkpoint_error(model_dir, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(model_dir, run)
    with pytest.raises(CheckpointError, match="last.pt: does not fit"):
        run_experiment(tiny_config(run, model={"hidden": 8}), resume=True)


def test_non_finite_loss_stops_with_checkpoint_hint(tmp_path, monkeypatch):
    original_forward = GCDoc.forward
    original_log = Trainer._log
    poisoned = {"on": False}

    def forward(self, batch, compute_loss=True, **kwargs):
        out = original_forward(self, batch, compute_loss, **kwargs)
        if poisoned["on"]:
            out.loss = out.loss * float("nan")
        return out

    def log_then_poison(self, record):
        original_log(self, record)
        poisoned["on"] = True  # epoch 1 completes and is checkpointed; epoch 2 diverges

    monkeypatch.setattr(GCDoc, "forward", forward)
    monkeypatch.setattr(Trainer, "_log", log_then_poison)
    out = tmp_path / "nan"
    with pytest.raises(TrainingError, match=r"non-finite loss .* epoch 2.*last\.pt"):
        run_experiment(tiny_config(out, epochs=3))
    state = load_checkpoint(out / "last.pt")
    assert state["state"]["epoch"] == 1
    assert all(torch.isfinite(v).all() for v in state["model"].values() if v.is_floating_point())


def test_time_budget_starts_no_epoch_that_would_overrun(tmp_path):
    # A budget far shorter than one epoch: the first epoch runs, no second one starts.
    metrics = run_experiment(tiny_config(tmp_path / "run", epochs=3, max_minutes=1e-6))
    assert metrics["epochs"] == 1
    log = [json.loads(line) for line in (tmp_path / "run" / "train_log.jsonl").open()]
    assert len(log) == 1 and log[0]["wall_seconds"] >= log[0]["epoch_seconds"] > 0


def test_training_threads_rule():
    from docgraph.training.loop import training_threads

    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert training_threads(0, cpu) == 1
    assert training_threads(-1, cpu) == 1
    assert training_threads(2, cpu) == 2  # an explicit count wins
    assert training_threads(3, cpu, distributed=True) == 3
    assert training_threads(0, cpu, distributed=True) == 0  # set when the workers are spawned
    assert training_threads(0, cuda) == 0


def test_time_budget_lets_epochs_run_that_fit(tmp_path):
    metrics = run_experiment(tiny_config(tmp_path / "run", epochs=2, max_minutes=60))
    assert metrics["epochs"] == 2


def test_clip_groups_clip_the_uncertainty_tagger_apart(sample_vocabs):
    from docgraph.persistence.model_dir import build_model
    from docgraph.training.loop import clip_groups

    model = build_model(GCDocConfig(**TINY_MODEL), sample_vocabs)
    groups = clip_groups(model)
    tagger = {id(p) for p in model.document_graph.uncertainty.parameters()}
    trainable = {id(p) for p in model.parameters() if p.requires_grad}
    assert len(groups) == 2
    assert {id(p) for p in groups[1]} == tagger
    assert {id(p) for p in groups[0]} == trainable - tagger
    baseline = build_model(GCDocConfig.baseline(**TINY_MODEL), sample_vocabs)
    assert [len(g) for g in clip_groups(baseline)] == [len(list(baseline.parameters()))]
