"""How training stops: after exactly ``patience`` epochs without a dev F1 improvement, on a
write that fails, and what it leaves alive.

The real :class:`~docgraph.training.loop.Trainer` loop trains on two documents of the sample corpus;
only the dev scores are scripted, so that which epoch improves is known in advance.
"""

from __future__ import annotations

import errno
import gc
import json
import os
import weakref

import pytest
from conftest import TINY_FLAGS, tiny_config

import docgraph.training.loop as training
from docgraph.graph.splits import build_vocabularies, prepare_split
from docgraph.metrics import Scores
from docgraph.persistence.model_dir import build_model
from docgraph.training.loop import Trainer, TrainState, stop_reason


def _scores(f1: float) -> Scores:
    return Scores(precision=f1, recall=f1, f1=f1, per_type={}, support=1, predicted=1,
                  correct=1)


def _fit(tmp_path, monkeypatch, sample_splits, dev_f1: list[float], patience: int,
         epochs: int = 20) -> Trainer:
    """Train with the dev F1 of epoch ``e`` scripted as ``dev_f1[e - 1]``."""
    config = tiny_config(tmp_path, epochs=epochs, patience=patience)
    vocabs, _, _ = build_vocabularies(sample_splits, "none")
    train = prepare_split(sample_splits["train"][:2], vocabs, config)
    scripted = iter(dev_f1)
    monkeypatch.setattr(training, "evaluate_sharded", lambda *args, **kwargs: _scores(
        next(scripted)))
    trainer = Trainer(build_model(config.model, vocabs), vocabs, config, train, train, tmp_path)
    trainer.fit()
    return trainer


@pytest.mark.parametrize(("dev_f1", "patience", "epochs", "best"), [
    # best at epoch 2, then 2 epochs without improvement (an equal F1 is none)
    ([10.0, 20.0, 20.0, 15.0, 99.0], 2, 4, 2),
    # an improvement resets the count: bad epochs 2, 4, 5
    ([10.0, 5.0, 30.0, 29.0, 30.0, 99.0], 2, 5, 3),
    # patience 1: the first epoch without improvement ends training
    ([10.0, 10.0, 99.0], 1, 2, 1),
    # patience 3: three epochs without improvement after the best one
    ([50.0, 40.0, 40.0, 49.9, 99.0], 3, 4, 1),
])
def test_training_stops_after_exactly_patience_epochs_without_improvement(
        tmp_path, monkeypatch, sample_splits, dev_f1, patience, epochs, best):
    trainer = _fit(tmp_path, monkeypatch, sample_splits, dev_f1, patience)
    state = trainer.state
    assert (state.epoch, state.best_epoch, state.bad_epochs) == (epochs, best, patience)
    assert state.best_f1 == dev_f1[best - 1]
    assert stop_reason(state, trainer.config.train) == "early_stopping"
    log = [json.loads(line) for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == list(range(1, epochs + 1))
    assert [r["dev_f1"] for r in log] == dev_f1[:epochs]
    assert [r["best"] for r in log][-patience:] == [False] * patience


def test_max_epochs_is_not_early_stopping(tmp_path, monkeypatch, sample_splits):
    # patience - 1 epochs without improvement when the epochs run out: not converged
    trainer = _fit(tmp_path, monkeypatch, sample_splits, [10.0, 20.0, 20.0, 99.0], patience=2,
                   epochs=3)
    assert (trainer.state.epoch, trainer.state.bad_epochs) == (3, 1)
    assert stop_reason(trainer.state, trainer.config.train) == "max_epochs"


def test_stop_reason_counts_patience_exactly():
    config = tiny_config("unused", epochs=10, patience=3).train
    assert stop_reason(TrainState(epoch=5, bad_epochs=3), config) == "early_stopping"
    assert stop_reason(TrainState(epoch=5, bad_epochs=2), config) == "budget"
    assert stop_reason(TrainState(epoch=10, bad_epochs=2), config) == "max_epochs"
    assert stop_reason(TrainState(epoch=10, bad_epochs=3), config) == "early_stopping"


def test_resume_rebuilds_an_epoch_log_that_lost_its_last_line(tmp_path, monkeypatch,
                                                             sample_splits):
    # a crash between the checkpoint and the log line of an epoch: the checkpoint's history
    # has the epoch, the log does not, and resuming brings the line back
    trainer = _fit(tmp_path, monkeypatch, sample_splits, [10.0, 20.0], patience=5, epochs=2)
    log_path = tmp_path / "train_log.jsonl"
    lines = log_path.read_text().splitlines(keepends=True)
    assert len(lines) == 2
    log_path.write_text(lines[0])
    config = tiny_config(tmp_path, epochs=3, patience=5)
    scripted = iter([30.0])
    monkeypatch.setattr(training, "evaluate_sharded", lambda *args, **kwargs: _scores(
        next(scripted)))
    resumed = Trainer(build_model(config.model, trainer.vocabs), trainer.vocabs, config,
                      trainer.train, trainer.dev, tmp_path)
    resumed.fit(resume=True)
    rebuilt = log_path.read_text().splitlines(keepends=True)
    assert rebuilt[:2] == lines
    assert [json.loads(line)["dev_f1"] for line in rebuilt] == [10.0, 20.0, 30.0]


def test_a_trainer_needs_no_garbage_collector_to_go(tmp_path, monkeypatch, sample_splits):
    # The epoch's progress statistics closed over the trainer and the bar, which held them: a
    # reference cycle that kept the trainer (in a data-parallel run its DDP wrapper, and so the
    # gloo group) alive until a collection, past the group's end.
    gc.collect()
    gc.disable()
    try:
        trainer = _fit(tmp_path, monkeypatch, sample_splits, [10.0], patience=5, epochs=1)
        gone = weakref.ref(trainer)
        del trainer
        assert gone() is None
    finally:
        gc.enable()


def test_a_full_disk_names_the_file_and_how_to_resume(tmp_path, monkeypatch, capsys):
    # The second epoch's checkpoint finds the disk full: one line with the file and the cause,
    # one with what the run holds and the command that resumes it; no traceback.
    from docgraph.cli import train_main
    from docgraph.runtime import atomic

    replace = os.replace
    written = []

    def full_disk(src, dst):
        if os.path.basename(dst) == "last.pt":
            written.append(dst)
            if len(written) == 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", full_disk)
    out = tmp_path / "run"
    status = train_main(["--dataset", "sample", "--output-dir", str(out), *TINY_FLAGS,
                         "--epochs", "2", "--processes", "1", "--lr", "0.03"])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert status == 1, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines == [
        f"error: cannot write {out / 'last.pt'}: No space left on device (ENOSPC)",
        lines[1]]
    assert lines[1].startswith(f"{out / 'last.pt'} holds the run after epoch 1 (")
    assert lines[1].endswith(f"every file was written whole. Resume with: python "
                             f"scripts/train.py --resume {out}")
    assert not list(out.glob(".*.tmp"))
    assert [json.loads(line)["epoch"] for line in
            (out / "train_log.jsonl").read_text().splitlines()] == [1]
