"""The manifest of a packed model directory (docgraph/persistence/manifest.py): every file
listed with its SHA-256, read once at load, a damaged or missing file named in one line."""

from __future__ import annotations

import json

import pytest

from docgraph.persistence.checkpoint import CheckpointError
from docgraph.persistence.locate import ModelDirError
from docgraph.persistence.manifest import verify_manifest


def test_manifest_lists_every_file(packed):
    _, summary = packed
    manifest = json.loads((summary.directory / "manifest.json").read_text())
    assert sorted(manifest["files"]) == ["config.json", "model.pt", "vocab.json"]
    assert verify_manifest(summary.directory) == manifest


def test_loading_reads_the_manifest_once(packed, manifest_reads):
    from docgraph.persistence.model_dir import load_model_dir

    directory = packed[1].directory
    load_model_dir(directory)
    assert manifest_reads == [str(directory / "manifest.json")]


@pytest.mark.parametrize("name", ["model.pt", "vocab.json", "config.json"])
def test_a_damaged_file_is_named(packed, tmp_path, name):
    import shutil

    from docgraph.tagging.tagger import Tagger

    copy = tmp_path / "copy"
    shutil.copytree(packed[1].directory, copy)
    data = bytearray((copy / name).read_bytes())
    data[len(data) // 2] ^= 0x01
    (copy / name).write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=rf"{name}: damaged") as info:
        Tagger.load(copy)
    assert "\n" not in str(info.value)
    (copy / name).unlink()
    with pytest.raises(ModelDirError, match=rf"\(no {name}; ") as info:
        Tagger.load(copy)
    assert info.value.missing == (name,)
