"""Tests of :mod:`docgraph.runtime.atomic`."""

import errno
import os
import stat
import subprocess
import sys

import pytest
from conftest import ROOT, script_env

from docgraph.runtime import atomic
from docgraph.runtime.atomic import (
    WriteError,
    atomic_write,
    atomic_write_json,
    atomic_write_text,
)


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


def test_a_write_out_of_room_names_the_file_and_the_cause(tmp_path):
    target = tmp_path / "last.pt"

    def full(tmp: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(WriteError) as info:
        atomic_write(target, full)
    assert str(info.value) == f"cannot write {target}: No space left on device (ENOSPC)"
    assert isinstance(info.value, OSError) and info.value.errno == errno.ENOSPC
    assert not list(tmp_path.iterdir())


def test_a_writer_that_does_not_say_why_is_put_down_to_a_full_disk(tmp_path, monkeypatch):
    # torch.save to a file on a full disk: "basic_ios::clear: iostream error", nothing more
    target = tmp_path / "model.pt"

    def torch_save(tmp: str) -> None:
        raise RuntimeError("basic_ios::clear: iostream error")

    full = os.statvfs_result((4096, 4096, 1000, 0, 0, 1000, 0, 0, 0, 255))
    monkeypatch.setattr(atomic.os, "statvfs", lambda path: full)
    with pytest.raises(WriteError, match=r"model\.pt: No space left on device \(ENOSPC\)$"):
        atomic_write(target, torch_save)
    monkeypatch.undo()
    with pytest.raises(WriteError, match=r"model\.pt: write failed \(basic_ios::clear: iostream"):
        atomic_write(target, torch_save)  # room enough: the cause is unknown, the file named


def test_a_file_size_limit_is_named(tmp_path):
    # ulimit -f in a child process: the write fails with EFBIG (Python ignores SIGXFSZ)
    code = ("import resource, sys; from docgraph.runtime.atomic import atomic_write_bytes\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
            "try:\n    atomic_write_bytes(sys.argv[1], bytes(10000))\n"
            "except OSError as err:\n    print(err)\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "big.bin")],
                         capture_output=True, text=True, check=True, env=script_env(), cwd=ROOT)
    assert out.stdout.strip() == f"cannot write {tmp_path / 'big.bin'}: File too large (EFBIG)"
    assert not list(tmp_path.iterdir())


def test_a_write_removes_what_killed_writes_of_the_same_file_left(tmp_path):
    import os
    import subprocess
    import sys

    from docgraph.runtime.atomic import atomic_write_text, remove_stale_temporaries

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    target = tmp_path / "out.jsonl"
    killed = tmp_path / f".out.jsonl.{dead_pid}-abcd1234.tmp"  # a writer killed with -9
    older = tmp_path / ".out.jsonl.k2j4h5g6.tmp"  # named as earlier versions named them
    live = tmp_path / f".out.jsonl.{os.getpid()}-zzzz9999.tmp"  # a write under way
    other = tmp_path / f".other.jsonl.{dead_pid}-abcd1234.tmp"  # another file's
    for path in (killed, older, live, other):
        path.write_text("partial")
    atomic_write_text(target, "whole\n")
    assert target.read_text() == "whole\n"
    assert not killed.exists() and not older.exists()
    assert live.exists() and other.exists()
    assert remove_stale_temporaries(tmp_path / "other.jsonl") == [other]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out.jsonl", live.name])
