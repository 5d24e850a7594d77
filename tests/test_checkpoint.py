"""Tests of :mod:`docgraph.persistence.checkpoint`: atomic writes that survive an interruption,
clear errors for corrupt, foreign and incompatible files."""

import pytest
import torch
from conftest import tiny_config

import docgraph.persistence.checkpoint as checkpoint
import docgraph.runtime.atomic as atomic
from docgraph.persistence.checkpoint import CheckpointError, load_checkpoint, save_checkpoint


@pytest.mark.parametrize("where", ["torch.save", "os.replace"])
def test_interrupted_checkpoint_write_keeps_previous(tmp_path, monkeypatch, where):
    path = tmp_path / "last.pt"
    save_checkpoint(path, {"model": {"w": torch.ones(3)}, "step": 1})

    def broken_save(obj, f, *args, **kwargs):
        f.write(b"PK\x03\x04 half a checkpoint")  # into memory: the bytes are written after
        raise KeyboardInterrupt  # killed mid-write

    def broken_replace(src, dst):
        raise OSError("disk full")

    if where == "torch.save":
        monkeypatch.setattr(checkpoint.torch, "save", broken_save)
        expected = KeyboardInterrupt
    else:
        monkeypatch.setattr(atomic.os, "replace", broken_replace)
        expected = OSError
    with pytest.raises(expected):
        save_checkpoint(path, {"model": {"w": torch.zeros(3)}, "step": 2})
    monkeypatch.undo()
    state = load_checkpoint(path)
    assert state["step"] == 1 and torch.equal(state["model"]["w"], torch.ones(3))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.pt"]


def test_corrupt_and_incompatible_checkpoints(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"this is not a checkpoint")
    with pytest.raises(CheckpointError, match="bad.pt: not a readable docgraph checkpoint"):
        load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="missing.pt: checkpoint not found"):
        load_checkpoint(tmp_path / "missing.pt")
    old = tmp_path / "old.pt"
    torch.save({"format_version": 99, "model": {}}, old)
    with pytest.raises(CheckpointError, match="format 99 is not supported"):
        load_checkpoint(old)
    foreign = tmp_path / "foreign.pt"
    torch.save({"model": {}}, foreign)
    with pytest.raises(CheckpointError, match="no format_version"):
        load_checkpoint(foreign)
    truncated = tmp_path / "truncated.pt"
    save_checkpoint(truncated, {"model": {"w": torch.ones(100)}})
    truncated.write_bytes(truncated.read_bytes()[:50])
    with pytest.raises(CheckpointError, match="not a readable"):
        load_checkpoint(truncated)


def test_resume_removes_the_temporary_files_of_a_killed_save(tmp_path):
    from docgraph.training.experiment import run_experiment

    run = tmp_path / "run"
    run_experiment(tiny_config(run, epochs=1), progress=False)
    # kill -9 during a save leaves the atomic writer's temporary files
    stale = [run / ".last.pt.k3x_9qa0.tmp", run / ".model.pt.0a1b2c3d.tmp",
             run / ".train_log.jsonl.zzzzzzzz.tmp"]
    others = [run / ".dev_metrics.json.abcd1234.tmp",  # evaluate.py's, maybe being written
              run / ".last.pt.tmp", run / "notes.last.pt.abcd1234.tmp"]
    for path in stale + others:
        path.write_bytes(b"half a file")
    run_experiment(tiny_config(run, epochs=2), resume=True, progress=False)
    assert not [path for path in stale if path.exists()]
    assert all(path.exists() for path in others)
    assert atomic.temporaries(run, ["last.pt", "dev_metrics.json"]) == [others[0]]
