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


def _record_offset(path, suffix: str) -> tuple[str, int]:
    """The name of the archive record ending in ``suffix`` and the offset of its data."""
    with zipfile.ZipFile(path) as archive:
        info = next(i for i in archive.infolist() if i.filename.endswith(suffix))
    with open(path, "rb") as handle:
        handle.seek(info.header_offset + 26)
        name_len, extra_len = (int.from_bytes(handle.read(2), "little") for _ in range(2))
    return info.filename, info.header_offset + 30 + name_len + extra_len


def test_a_flipped_byte_inside_a_tensor_is_named_by_its_record(checkpoint):
    from docgraph.persistence.checkpoint import CheckpointError, load_checkpoint

    name, offset = _record_offset(checkpoint, "data/0")
    data = bytearray(checkpoint.read_bytes())
    data[offset + 17] ^= 0x10  # inside the tensor: torch.load alone reads another value
    checkpoint.write_bytes(bytes(data))
    assert not torch.equal(torch.load(checkpoint, weights_only=True)["weight"],
                           torch.arange(1000.0))
    assert archive_damage(checkpoint) == f"record {name} is damaged (its CRC-32 does not match)"
    with pytest.raises(CheckpointError, match=rf"model.pt: not a readable docgraph checkpoint: "
                                              rf"record {name} is damaged"):
        load_checkpoint(checkpoint)


def test_every_flipped_byte_of_a_small_checkpoint_is_refused(tmp_path):
    """Brute force over a whole archive: one byte changed anywhere is refused by
    :func:`archive_damage`, or leaves what torch reads unchanged."""
    from docgraph.persistence.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

    path = tmp_path / "small.pt"
    save_checkpoint(path, {"w": torch.arange(6.0)})
    original = path.read_bytes()
    for i in range(len(original)):
        data = bytearray(original)
        data[i] ^= 0x04
        path.write_bytes(bytes(data))
        try:
            state = load_checkpoint(path)
        except CheckpointError:
            continue
        assert torch.equal(state["w"], torch.arange(6.0)), f"byte {i} changed a weight"
