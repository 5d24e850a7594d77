"""Where a model is (docgraph/persistence/locate.py): a path or a shipped model's name made a
model directory, or a one-line error that says where it looked and what it expected, carried
as data (ModelDirError) across processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.persistence.checkpoint import CheckpointError
from docgraph.persistence.locate import ModelDirError, locate_model_dir
from docgraph.persistence.shipped import SHIPPED_DIR, shipped_models


def _located_error(model) -> ModelDirError:
    with pytest.raises(ModelDirError) as info:
        locate_model_dir(model)
    assert isinstance(info.value, CheckpointError) and "\n" not in str(info.value)
    return info.value


def test_locating_a_model_says_where_it_looked_and_what_it_expected(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cwd, names = Path.cwd(), ", ".join(shipped_models()) or "none installed"
    for name in shipped_models():
        assert locate_model_dir(name) == SHIPPED_DIR / name
    err = _located_error("runs/gone")
    assert (err.path, err.reason, err.directory) == ("runs/gone", "not found", cwd / "runs/gone")
    assert err.shipped == tuple(shipped_models())
    assert str(err) == (f"runs/gone: neither a model directory nor a shipped model (no directory "
                        f"{cwd / 'runs/gone'}: a relative path is read from the working directory "
                        f"{cwd}; shipped: {names})")
    assert str(_located_error(cwd / "gone")) == (
        f"{cwd / 'gone'}: neither a model directory nor a shipped model (shipped: {names})")
    (tmp_path / "file.txt").write_text("x")
    assert _located_error("file.txt").reason == "not a directory"
    half = tmp_path / "half"
    half.mkdir()
    for name in ("config.json", "vocab.json"):
        (half / name).write_text("{}")
    err = _located_error("half")
    assert (err.reason, err.missing) == ("missing files", ("model.pt",))
    assert str(err) == (f"half: not a model directory written by train.py (no model.pt in "
                        f"{cwd / 'half'}; train.py writes config.json, vocab.json, model.pt)")
    (half / "model.pt").write_bytes(b"")
    err = _located_error(half)
    assert (err.reason, err.damage) == ("damaged", "the file is empty")
    assert str(err) == (f"{half}: model.pt is not a readable docgraph checkpoint: the file is "
                        "empty; copy it again or retrain")


def test_a_model_directory_error_crosses_processes(tmp_path):
    import pickle

    err = _located_error(tmp_path)
    copy = pickle.loads(pickle.dumps(err))
    assert (str(copy), copy.reason, copy.missing) == (str(err), "missing files", err.missing)
