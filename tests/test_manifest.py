"""The manifest of a packed model directory (docgraph/persistence/manifest.py): every file
listed with its SHA-256, read once at load, a damaged or missing file named in one line."""

from __future__ import annotations

import json

import pytest

from docgraph.persistence.checkpoint import CheckpointError
from docgraph.persistence.locate import ModelDirError
from docgraph.persistence.manifest import verify_manifest
from docgraph.persistence.shipped import MANIFEST
from docgraph.runtime.integrity import read_json_file


def test_manifest_lists_every_file(packed):
    _, summary = packed
    manifest = read_json_file(summary.directory / "manifest.json")
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
    with pytest.raises(CheckpointError, match=rf"{name}\b.*damaged") as info:
        Tagger.load(copy)
    assert "\n" not in str(info.value)
    (copy / name).unlink()
    with pytest.raises(ModelDirError, match=rf"\(no {name}; ") as info:
        Tagger.load(copy)
    assert info.value.missing == (name,)


def test_save_threshold_writes_the_config_and_its_checksum_sealed(tmp_path):
    import hashlib

    from docgraph.persistence.manifest import save_threshold
    from docgraph.runtime.integrity import DIGEST_KEY, read_json_file, write_sealed_json

    config = {"dataset": "conll03", "model": {"threshold": 0.5, "hidden": 200}}
    write_sealed_json(tmp_path / "config.json", config)
    manifest = {"format": "docgraph-packed-model", "version": 1,
                "files": {"config.json": "old", "model.pt": "kept"}}
    write_sealed_json(tmp_path / MANIFEST, manifest)
    assert save_threshold(tmp_path, 1.5) == 0.5  # the threshold it replaced
    assert read_json_file(tmp_path / "config.json") == {
        "dataset": "conll03", "model": {"threshold": 1.5, "hidden": 200}}
    assert DIGEST_KEY in json.loads((tmp_path / "config.json").read_text())
    files = read_json_file(tmp_path / MANIFEST)["files"]
    assert files == {"config.json": hashlib.sha256((tmp_path / "config.json").read_bytes())
                     .hexdigest(), "model.pt": "kept"}
    assert save_threshold(tmp_path, 2) == 1.5
    assert isinstance(read_json_file(tmp_path / "config.json")["model"]["threshold"], float)


def test_save_score_temperature_of_a_directory_saved_without_one(tmp_path):
    from docgraph.persistence.manifest import save_score_temperature
    from docgraph.runtime.integrity import read_json_file, write_sealed_json

    write_sealed_json(tmp_path / "config.json", {"model": {"threshold": 0.5}})
    assert save_score_temperature(tmp_path, 1.3) == 1.0  # none saved: the default
    assert read_json_file(tmp_path / "config.json")["model"] == {"threshold": 0.5,
                                                                "score_temperature": 1.3}
    assert save_score_temperature(tmp_path, 0.8) == 1.3
    with pytest.raises(ValueError, match="temperature must be > 0"):
        save_score_temperature(tmp_path, 0)


def test_a_model_s_label_consistency_is_read_without_torch(tmp_path):
    from docgraph.persistence.manifest import model_label_consistency, save_label_consistency
    from docgraph.runtime.integrity import write_sealed_json

    write_sealed_json(tmp_path / "config.json", {"model": {"threshold": 0.5}})
    assert model_label_consistency(tmp_path) is False  # saved without one: the paper's
    assert save_label_consistency(tmp_path, True) is False
    assert model_label_consistency(tmp_path) is True
    (tmp_path / "config.json").write_text("{}")  # unsealed
    with pytest.raises(CheckpointError, match="config.json"):
        model_label_consistency(tmp_path)


def test_test_scores_are_written_sealed_listed_and_read_back(tmp_path):
    from docgraph.persistence.manifest import read_test_scores, save_test_scores
    from docgraph.runtime.integrity import write_sealed_json

    write_sealed_json(tmp_path / MANIFEST, {"format": "docgraph-packed-model", "version": 1,
                                            "files": {"model.pt": "kept"}})
    assert read_test_scores(tmp_path) is None
    metrics = {"test": {"precision": 90.0, "recall": 80.0, "f1": 84.7, "support": 10,
                        "predicted": 9, "per_type": {"PER": {"f1": 84.7, "support": 10}}}}
    path = save_test_scores(tmp_path, metrics, "where the log is")
    assert read_test_scores(tmp_path) == {
        "test": {"precision": 90.0, "recall": 80.0, "f1": 84.7, "support": 10,
                 "per_type": {"PER": 84.7}}, "source": "where the log is"}
    assert set(read_json_file(tmp_path / MANIFEST)["files"]) == {"model.pt", "scores.json"}
    path.write_text(path.read_text().replace("84.7", "94.7", 1))  # the seal no longer holds
    with pytest.raises(CheckpointError, match="scores.json"):
        read_test_scores(tmp_path)


@pytest.mark.parametrize("version", [2, None])
def test_another_or_no_format_version_is_refused(packed, tmp_path, version):
    """Class: the packed-model format version."""
    import shutil

    from docgraph.runtime.integrity import write_sealed_json

    copy = tmp_path / "copy"
    shutil.copytree(packed[1].directory, copy)
    manifest = read_json_file(copy / MANIFEST)
    if version is None:
        del manifest["version"]
    else:
        manifest["version"] = version
    write_sealed_json(copy / MANIFEST, manifest)
    with pytest.raises(CheckpointError, match=rf"manifest.json: packed-model format {version} "
                                              r"is not supported \(this docgraph reads 1\)"):
        verify_manifest(copy)


def test_a_flipped_digit_of_a_listed_hash_blames_the_manifest(packed, tmp_path):
    """Class: a manifest that guards itself: damage to it is named as its own."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(packed[1].directory, copy)
    text = (copy / MANIFEST).read_text()
    digest = read_json_file(copy / MANIFEST)["files"]["model.pt"]
    flipped = digest[:5] + ("0" if digest[5] != "0" else "1") + digest[6:]
    (copy / MANIFEST).write_text(text.replace(digest, flipped))
    with pytest.raises(CheckpointError, match=r"copy/manifest.json: damaged"):
        verify_manifest(copy)
