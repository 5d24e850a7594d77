"""Atomic file writes: a temporary file in the target's directory, fsynced, then renamed.

A crash or an exception at any point leaves the target as it was; an exception leaves no
temporary file behind, a killed process may (:func:`temporaries` finds them). A write that
fails for want of room (disk full, a file-size limit) raises :class:`WriteError`, which names
the file and the cause.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from docgraph.config.errors import DocgraphError
from docgraph.config.fields import UsageError
from docgraph.runtime.lifetime import process_alive

log = logging.getLogger("docgraph")

try:
    import resource
except ImportError:  # pragma: no cover - not a POSIX system
    resource = None  # type: ignore[assignment]


class WriteError(DocgraphError, OSError):
    """A file could not be written; ``str()`` names the file and the cause, e.g. ``cannot
    write runs/x/last.pt: No space left on device (ENOSPC)``."""

    def __str__(self) -> str:
        code = errno.errorcode.get(self.errno or 0)
        return (f"cannot write {self.filename}: {self.strerror or 'write failed'}"
                + (f" ({code})" if code else ""))

    @classmethod
    def from_os_error(cls, err: OSError, path: str | Path) -> WriteError:
        """The :class:`WriteError` of ``err``, raised while writing ``path``."""
        if isinstance(err, WriteError):
            return err
        return cls(err.errno or errno.EIO, err.strerror or str(err), str(path))


#: Free bytes below which a failed write is put down to a full disk.
FULL_DISK_BYTES = 1 << 20


#: Words of the errors of writers that do not say why they failed (``torch.save``:
#: ``basic_ios::clear: iostream error``, ``PytorchStreamWriter failed writing file``).
WRITER_FAILURES = ("iostream", "failed writing", "file write failed")


def _room_error(path: Path, tmp: str) -> WriteError | None:
    """Why writing ``tmp`` (for ``path``) ran out of room, when it did: a file-size limit
    (``ulimit -f``) the file reached, or a file system with (almost) no space left."""
    if resource is not None:
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        try:
            if limit != resource.RLIM_INFINITY and os.path.getsize(tmp) + (64 << 10) >= limit:
                return WriteError(errno.EFBIG, os.strerror(errno.EFBIG), str(path))
        except OSError:
            pass
    try:
        stats = os.statvfs(path.parent)
    except (AttributeError, OSError):
        return None
    free = stats.f_bfree if hasattr(os, "geteuid") and os.geteuid() == 0 else stats.f_bavail
    if free * stats.f_frsize < FULL_DISK_BYTES:
        return WriteError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    return None


def _write_error(err: BaseException, path: Path, tmp: str) -> WriteError | None:
    """The :class:`WriteError` that ``err``, raised while ``tmp`` was written for ``path``,
    stands for; ``None`` for an error that is not about writing it (Ctrl-C, a bug, a file
    the writer read)."""
    if isinstance(err, WriteError):
        return err
    if isinstance(err, OSError) and err.errno is not None:
        if err.filename not in (None, tmp, str(path)):
            return None
        return WriteError.from_os_error(err, path)
    if isinstance(err, RuntimeError) and any(words in str(err) for words in WRITER_FAILURES):
        first = str(err).strip().splitlines()[0]
        return _room_error(path, tmp) or WriteError(errno.EIO, f"write failed ({first})",
                                                    str(path))
    return None


def _default_mode() -> int:
    """``0o666`` less the process umask: the mode ``open()`` would have given a new file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: str | Path, write: Callable[[str], None]) -> None:
    """Let ``write`` fill a temporary file next to ``path``, fsync it, then ``os.replace`` it.

    A crash or an exception at any point leaves ``path`` as it was; an exception leaves no
    temporary file. A killed process may (``.<name>.<pid>-XXXXXXXX.tmp``): the next write to
    ``path`` removes those of writers no longer alive (:func:`remove_stale_temporaries`). The
    file gets the permissions a plain ``open(path, "w")`` would give it (``mkstemp`` alone would
    leave it readable by its owner only).

    Raises:
        WriteError: Writing failed with an ``OSError`` (disk full, file too large, ...), or
            with a ``RuntimeError`` of a writer that does not say why (``torch.save``) when
            the disk is full or the file reached the size limit; it names ``path``.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp",
                                   dir=path.parent)
    except OSError as err:
        raise WriteError.from_os_error(err, path) from err
    os.close(fd)
    try:
        os.chmod(tmp, _default_mode())
        write(tmp)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        failure = _write_error(err, path, tmp)
        Path(tmp).unlink(missing_ok=True)
        if failure is None or failure is err:
            raise
        raise failure from err


def _temporary_pattern(name: str) -> re.Pattern[str]:
    """The names of :func:`atomic_write`'s temporary files for ``name``: with the writer's
    process id (``.<name>.<pid>-XXXXXXXX.tmp``) or, as older versions made them, without."""
    return re.compile(re.escape(f".{name}.") + r"(?:(\d+)-)?[a-z0-9_]{8}\.tmp")


def temporaries(directory: str | Path, names: Iterable[str]) -> list[Path]:
    """The temporary files :func:`atomic_write` makes for the files ``names`` of ``directory``
    (a crash during a write leaves one behind)."""
    patterns = [_temporary_pattern(name) for name in names]
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir()
                  if any(pattern.fullmatch(p.name) for pattern in patterns) and p.is_file())


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove the temporary files that writes of ``path`` by processes no longer alive left
    beside it (a write killed with SIGKILL, a machine that went down); returns them. Those
    of a live writer stay."""
    path = Path(path)
    pattern = _temporary_pattern(path.name)
    removed = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(f".{path.name}."):
            continue
        match = pattern.fullmatch(entry.name)
        if match is None or (match.group(1) is not None and process_alive(int(match.group(1)))):
            continue
        try:
            os.unlink(entry.path)
        except OSError:
            continue
        log.info("removed %s, left by a write of %s that was killed", entry.path, path)
        removed.append(Path(entry.path))
    return removed


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Atomically write ``data`` to ``path``."""
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))


def atomic_write_text(path: str | Path, text: str) -> None:
    """Atomically write UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any) -> None:
    """Atomically write ``obj`` as indented JSON."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def check_output(path: str | None) -> None:
    """Check before any work (and before torch loads) that ``--output PATH`` can be written;
    the directories it names that do not exist yet are made when it is written.

    Raises:
        UsageError: ``path`` is a directory, lies under a file, or in a directory that cannot
            be written.
    """
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError("is a directory; expected a file to write, e.g. "
                         f"{target / 'predictions.jsonl'}", "--output", path)
    parent = target.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"{parent} is not a directory", "--output", path)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write in {parent} (permission denied)", "--output", path)
