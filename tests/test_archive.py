"""Tests of :mod:`docgraph.persistence.archive`: what is wrong with a checkpoint file, told
from its size and its end, without torch."""

from __future__ import annotations

import zipfile

import pytest
import torch

from docgraph.persistence.archive import archive_damage, damage_message


@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "model.pt"
    torch.save({"weight": torch.arange(1000.0)}, path)
    return path


def test_a_whole_checkpoint_has_no_damage(checkpoint):
    assert archive_damage(checkpoint) is None
    assert damage_message(checkpoint) is None
    assert archive_damage(str(checkpoint)) is None


def test_any_zip_archive_looks_whole(tmp_path):
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as archive:
        archive.writestr("x", "y")
    assert archive_damage(tmp_path / "a.zip") is None


def test_an_empty_file(tmp_path):
    (tmp_path / "model.pt").write_bytes(b"")
    assert archive_damage(tmp_path / "model.pt") == "the file is empty"


def test_a_checkpoint_cut_short_says_so_with_its_size(checkpoint):
    data = checkpoint.read_bytes()
    checkpoint.write_bytes(data[:1500])
    assert archive_damage(checkpoint) == ("truncated, or not a checkpoint at all (1,500 bytes "
                                          "without the end of a PyTorch archive)")


def test_a_file_that_is_no_archive_at_all(tmp_path):
    path = tmp_path / "last.pt"
    path.write_bytes(b"half a checkpoint")
    assert archive_damage(path) == ("truncated, or not a checkpoint at all (17 bytes without "
                                    "the end of a PyTorch archive)")


def test_damage_message_names_the_file_and_what_to_do(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(b"")
    assert damage_message(path) == (f"{path}: not a readable docgraph checkpoint: the file is "
                                    "empty; copy it again or retrain")


def test_a_missing_file_is_for_the_caller_to_check(tmp_path):
    with pytest.raises(FileNotFoundError):
        archive_damage(tmp_path / "missing.pt")
