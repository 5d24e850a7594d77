"""Tests of :mod:`docgraph.persistence.run_lock`: one run at a time in a run directory, a lock
that a killed process cannot leave stuck, shared with the processes a run spawns, and
``train.py`` refusing a directory another run holds."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docgraph.persistence.run_lock import (
    LOCK_FILE,
    RunDirectoryBusyError,
    lock_run_directory,
    run_directory,
)

ROOT = Path(__file__).resolve().parents[1]


def _busy_message(directory: Path) -> str:
    """The message of :class:`RunDirectoryBusyError` for ``directory``, checked to come at
    once and to be one line."""
    start = time.monotonic()
    with pytest.raises(RunDirectoryBusyError) as info:
        lock_run_directory(directory)
    assert time.monotonic() - start < 5.0  # not waiting for the holder
    message = str(info.value)
    assert "\n" not in message
    return message


def _snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in directory.iterdir()}


def test_a_second_lock_on_a_held_directory_fails_at_once(tmp_path):
    run = tmp_path / "run"
    with run_directory(run) as lock:
        assert lock.created and (run / LOCK_FILE).is_file()
        message = _busy_message(run)
        assert message.startswith(f"{run}: in use by another run (process {os.getpid()} on ")
        assert "wait for it to end or choose another directory" in message
        with run_directory(run, held=lock) as again:  # the holder's own lock: no second one
            assert again is lock
    assert not run.exists()  # created by the lock and left empty: removed with it
    (run / "sub").mkdir(parents=True)
    with run_directory(run) as lock:
        assert not lock.created
    assert sorted(p.name for p in run.iterdir()) == ["sub"]  # the lock file is gone


def test_a_lock_held_by_a_killed_process_is_free_again(tmp_path):
    run = tmp_path / "run"
    code = ("import sys, time\n"
            "from docgraph.persistence.run_lock import lock_run_directory\n"
            "lock = lock_run_directory(sys.argv[1])\n"
            "print('held', flush=True)\n"
            "time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(run)], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout.readline().strip() == "held"
        assert f"(process {proc.pid} on " in _busy_message(run)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert (run / LOCK_FILE).exists()  # left behind by the killed process, but not locked
    with run_directory(run):
        assert (run / LOCK_FILE).read_text().split()[0] == str(os.getpid())


def test_the_next_run_removes_the_directories_of_runs_killed_before_writing(tmp_path):
    """A run killed with SIGKILL right after taking its new directory leaves it holding only
    ``.lock``; the next run to take a directory beside it removes it, and nothing else."""
    runs = tmp_path / "runs"
    code = ("import sys, time\n"
            "from docgraph.persistence.run_lock import lock_run_directory\n"
            "lock = lock_run_directory(sys.argv[1])\n"
            "print('held', flush=True)\n"
            "time.sleep(120)\n")
    killed = runs / "killed"
    proc = subprocess.Popen([sys.executable, "-c", code, str(killed)], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout.readline().strip() == "held"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert [p.name for p in killed.iterdir()] == [LOCK_FILE]
    kept = {"with-files": "model.pt", "alive": None, "foreign": None, "empty": ""}
    for name, extra in kept.items():
        (runs / name).mkdir()
        if extra:
            (runs / name / extra).write_text("x")
    (runs / "with-files" / LOCK_FILE).write_text(f"{proc.pid} {socket.gethostname()} t\n")
    (runs / "alive" / LOCK_FILE).write_text(f"{os.getpid()} {socket.gethostname()} t\n")
    (runs / "foreign" / LOCK_FILE).write_text(f"{proc.pid} another-host t\n")
    with run_directory(runs / "next"):
        assert sorted(p.name for p in runs.iterdir()) == sorted([*kept, "next"])
    assert sorted(p.name for p in runs.iterdir()) == sorted(kept)


def _hold_until_told(lock, pipe) -> None:
    pipe.send("holding")
    pipe.recv()


def test_a_spawned_process_shares_the_lock(tmp_path):
    # the workers of a data-parallel run hold the directory as long as one of them lives
    run = tmp_path / "run"
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    lock = lock_run_directory(run)
    process = context.Process(target=_hold_until_told, args=(lock, child))
    process.start()
    try:
        assert parent.poll(120) and parent.recv() == "holding"
        lock.release()
        assert f"(process {os.getpid()} on " in _busy_message(run)
        parent.send("stop")
        process.join(30)
    finally:
        if process.is_alive():
            process.kill()
    with run_directory(run):
        pass
    with run_directory(run) as held, pytest.raises(TypeError, match="process being spawned"):
        pickle.dumps(held)


def test_train_into_a_held_directory_exits_2_and_touches_nothing(tmp_path, capsys):
    from conftest import TINY_FLAGS, run_script, tiny_config

    from docgraph.cli import train_main
    from docgraph.persistence.checkpoint import save_checkpoint
    from docgraph.runtime.atomic import atomic_write_json
    from docgraph.training.experiment import run_seeds

    run = tmp_path / "run"
    run.mkdir()
    save_checkpoint(run / "last.pt", {"state": {"epoch": 1}})  # the first run's checkpoint
    atomic_write_json(run / "config.json", tiny_config(run).to_dict())
    (run / "train_log.jsonl").write_text('{"epoch": 1}\n')
    with run_directory(run):
        before = _snapshot(run)
        held = f"{run}: in use by another run (process {os.getpid()} on "
        expected = f"error: --output-dir {held}"
        res = run_script("train", "--dataset", "sample", "--output-dir", run, *TINY_FLAGS,
                         "--epochs", "1")
        assert res.returncode == 2, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
        assert res.stderr.startswith(expected), res.stderr
        assert _snapshot(run) == before

        for flag, argv in (("--resume", ["--resume", str(run), "--processes", "1", "--quiet"]),
                           ("--output-dir", ["--output-dir", str(run), "--seeds", "1", "2",
                                             *TINY_FLAGS, "--processes", "1"])):
            with pytest.raises(SystemExit) as info:
                train_main(argv)
            assert info.value.code == 2
            err = capsys.readouterr().err
            assert err.startswith(f"error: {flag} {held}"), err
            assert len(err.strip().splitlines()) == 1, err
            assert _snapshot(run) == before

    # a run over seeds holds each seed's directory too
    with run_directory(tmp_path / "seeds" / "seed-1"):
        with pytest.raises(RunDirectoryBusyError, match="seed-1: in use by another run"):
            run_seeds(tiny_config(tmp_path / "seeds"), [1], progress=False)
        assert sorted(p.name for p in (tmp_path / "seeds").iterdir()) == ["seed-1"]


def test_a_held_lock_is_reused_only_for_its_own_directory(tmp_path):
    """Class: the run lock's covers check: a lock handed to run_directory for another
    directory must not stand in for that directory's own lock."""
    from docgraph.persistence.run_lock import busy_message, lock_run_directory

    first = lock_run_directory(tmp_path / "a")
    try:
        assert first.covers(tmp_path / "a") and not first.covers(tmp_path / "b")
        with run_directory(tmp_path / "a", first) as held:
            assert held is first
        with run_directory(tmp_path / "b", first) as held:
            assert held is not first
            assert busy_message(tmp_path / "b") is not None  # b is locked in its own right
        assert busy_message(tmp_path / "b") is None
    finally:
        first.release()


def test_a_lock_file_replaced_while_it_was_taken_is_taken_again(tmp_path, monkeypatch):
    """Class: the run lock's retry: the file this process opened was removed and made anew
    (by a holder that released it) before the lock was taken; the lock must be taken on the
    file that is there now, else a second run would find that one free."""
    import fcntl as real_fcntl

    from docgraph.persistence import run_lock
    from docgraph.persistence.run_lock import LOCK_FILE, busy_message, lock_run_directory

    directory = tmp_path / "run"
    directory.mkdir()
    (directory / LOCK_FILE).write_text("")
    replaced = []
    flock = real_fcntl.flock

    def flock_after_replacing(fd, operation):
        if not replaced:
            (directory / LOCK_FILE).unlink()
            (directory / LOCK_FILE).write_text("")
            replaced.append(True)
        return flock(fd, operation)

    monkeypatch.setattr(run_lock.fcntl, "flock", flock_after_replacing)
    lock = lock_run_directory(directory)
    monkeypatch.setattr(run_lock.fcntl, "flock", flock)
    try:
        assert replaced
        assert busy_message(directory) is not None  # the file there now is the one held
    finally:
        lock.release()
