"""Tests of :mod:`docgraph.persistence.atomic`."""

import os
import stat

import pytest

from docgraph.persistence.atomic import atomic_write, atomic_write_json, atomic_write_text


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_written_file_has_the_permissions_of_a_plain_open(tmp_path, umask_022):
    target = tmp_path / "metrics.json"
    atomic_write_json(target, {"f1": 91.0})
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    assert stat.S_IMODE(plain.stat().st_mode) == stat.S_IMODE(target.stat().st_mode)


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    atomic_write_text(target, "old")

    def fail(tmp: str) -> None:
        with open(tmp, "w") as handle:
            handle.write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(target, fail)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
