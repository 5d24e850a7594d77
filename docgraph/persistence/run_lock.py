"""Run directories owned by one run at a time: an exclusive ``flock`` on ``<dir>/.lock``.

The kernel releases the lock when the last process holding it ends, so a crash (even
``kill -9``) never leaves a directory locked. The lock file names its holder (process, host,
start time) for the error of a run that finds the directory taken. A :class:`RunLock` passed to
a process being spawned goes with it (the child shares the lock), so a data-parallel run's
workers hold the directory as long as any of them lives. Without ``fcntl`` (Windows) nothing
is locked.
"""

from __future__ import annotations

import datetime as _dt
import multiprocessing.context
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from multiprocessing import reduction
from pathlib import Path
from typing import Any

from docgraph.config.errors import DocgraphError
from docgraph.runtime.lifetime import process_alive

try:
    import fcntl
except ImportError:  # pragma: no cover - not a POSIX system
    fcntl = None  # type: ignore[assignment]

#: The lock file of a run directory.
LOCK_FILE = ".lock"

#: Tries to take a lock whose file a releasing holder removed in between.
_ATTEMPTS = 100


class RunDirectoryBusyError(DocgraphError, ValueError):
    """A run directory another run holds (the message names it and the holding process)."""


class RunLock:
    """The lock of one run directory, held until :meth:`release` (or the process ends).

    Attributes:
        directory: The run directory (absolute).
        created: Whether taking the lock created the directory.
    """

    def __init__(self, directory: Path, fd: int | None, created: bool, owner: bool = True):
        self.directory = directory
        self.created = created
        self._fd = fd
        self._owner = owner

    def covers(self, directory: str | Path) -> bool:
        """Whether this is the lock of ``directory``."""
        return Path(directory).absolute() == self.directory

    def release(self) -> None:
        """Let the directory go; remove the lock file unless another process still shares the
        lock (a worker it was passed to), and the directory too when taking the lock created it
        and nothing else is in it. Only the process that took the lock removes anything."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        os.close(fd)
        if self._owner:
            _remove_if_free(self.directory / LOCK_FILE)
            if self.created:
                with suppress(OSError):  # not empty (the run's files), or already gone
                    self.directory.rmdir()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled for a process being spawned: the child gets a copy of the lock's file
        descriptor, so it shares the lock (it never removes the lock file)."""
        if self._fd is None:
            return (RunLock, (self.directory, None, self.created, False))
        if multiprocessing.context.get_spawning_popen() is None:
            raise TypeError(f"{self.directory / LOCK_FILE}: a run lock goes only to a process "
                            "being spawned")
        return (_inherited, (reduction.DupFd(self._fd), self.directory, self.created))


def _inherited(fd: Any, directory: Path, created: bool) -> RunLock:
    """A spawned process's share of its parent's lock."""
    return RunLock(directory, fd.detach(), created, owner=False)


def _remove_if_free(path: Path) -> None:
    """Remove the lock file ``path`` unless some process holds it."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if _names(path, fd):
            path.unlink()
    except OSError:  # held by another process: it is still in use
        pass
    finally:
        os.close(fd)


def _names(path: Path, fd: int) -> bool:
    """Whether ``path`` is still the file open as ``fd`` (not removed or replaced)."""
    try:
        found, held = os.stat(path), os.fstat(fd)
    except FileNotFoundError:
        return False
    return (found.st_dev, found.st_ino) == (held.st_dev, held.st_ino)


def _make_directory(directory: Path) -> bool:
    """Create ``directory`` (and its parents); whether it did not exist."""
    try:
        directory.mkdir(parents=True)
    except FileExistsError:
        return False
    return True


def _holder(fd: int) -> str:
    """Who holds the lock open as ``fd``, from what the holder wrote into the file."""
    for _ in range(10):  # a holder that just took the lock writes its name a moment later
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace").split()
        if len(text) >= 3 and text[0].isdigit():
            break
        time.sleep(0.02)
    else:
        return "another process"
    pid, host, since = int(text[0]), text[1], text[2]
    gone = host == socket.gethostname() and not process_alive(pid)
    return (f"process {pid} on {host} since {since}"
            + (", which has ended while processes it started still run" if gone else ""))


def remove_abandoned_directories(parent: str | Path) -> list[Path]:
    """Remove the directories in ``parent`` that hold nothing but a lock file no process holds,
    written by a process of this host that has ended: what a run killed with SIGKILL before it
    wrote anything leaves behind. Returns them.
    """
    removed: list[Path] = []
    if fcntl is None:
        return removed
    with suppress(OSError):
        for directory in Path(parent).iterdir():
            with suppress(OSError):
                if (directory.is_symlink() or not directory.is_dir()
                        or [p.name for p in directory.iterdir()] != [LOCK_FILE]):
                    continue
                if _remove_if_abandoned(directory / LOCK_FILE):
                    with suppress(OSError):  # a new run took it in between
                        directory.rmdir()
                    removed.append(directory)
    return removed


def _remove_if_abandoned(path: Path) -> bool:
    """Remove the lock file ``path`` when no process holds it and the process of this host
    it names has ended; whether it did."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace").split()
        if (len(text) < 2 or not text[0].isdigit() or text[1] != socket.gethostname()
                or process_alive(int(text[0])) or not _names(path, fd)):
            return False
        path.unlink()
        return True
    except OSError:  # held: in use
        return False
    finally:
        os.close(fd)


def lock_run_directory(directory: str | Path) -> RunLock:
    """Take the run directory ``directory`` (created if missing) for this process, at once.
    The directories beside it that runs killed before writing anything left are removed first
    (:func:`remove_abandoned_directories`).

    Raises:
        RunDirectoryBusyError: Another run holds it; the one-line message names the directory
            and the holding process. Nothing in the directory is changed.
    """
    given, directory = directory, Path(directory).absolute()
    remove_abandoned_directories(directory.parent)
    created = _make_directory(directory)
    if fcntl is None:
        return RunLock(directory, None, created)
    path = directory / LOCK_FILE
    for _ in range(_ATTEMPTS):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:  # a holder created the directory and removed it as it ended
            created = _make_directory(directory)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise RunDirectoryBusyError(
                f"{given}: in use by another run ({holder}); wait for it to end or choose "
                "another directory") from None
        except BaseException:
            os.close(fd)
            raise
        if _names(path, fd):
            break
        os.close(fd)  # its holder removed that file as it released it: take the new one
    else:
        raise RunDirectoryBusyError(f"{given}: in use by other runs ({path} keeps "
                                    "changing hands)")
    since = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} {socket.gethostname()} {since}\n".encode(), 0)
    return RunLock(directory, fd, created)


def busy_message(directory: str | Path) -> str | None:
    """The error :func:`lock_run_directory` would raise for ``directory`` now (``None`` when
    no run holds it), found without taking the lock or writing anything: the check a
    command makes before torch loads."""
    path = Path(directory) / LOCK_FILE
    if fcntl is None or not path.is_file():
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return (f"{directory}: in use by another run ({_holder(fd)}); wait for it to end or "
                "choose another directory")
    finally:
        os.close(fd)  # closing releases a lock taken here
    return None


@contextmanager
def run_directory(directory: str | Path, held: RunLock | None = None) -> Iterator[RunLock]:
    """Hold the run directory ``directory`` for the block: ``held`` when that is its lock
    (taken by the caller, or passed to this spawned process), else a lock taken here
    (:func:`lock_run_directory`) and released after the block.

    Raises:
        RunDirectoryBusyError: Another run holds it.
    """
    if held is not None and held.covers(directory):
        yield held
        return
    lock = lock_run_directory(directory)
    try:
        yield lock
    finally:
        lock.release()
