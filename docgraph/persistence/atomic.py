"""Atomic file writes: a temporary file in the target's directory, fsynced, then renamed.

A crash or an exception at any point leaves the target as it was; an exception leaves no
temporary file behind, a killed process may (:func:`temporaries` finds them).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def _default_mode() -> int:
    """``0o666`` less the process umask: the mode ``open()`` would have given a new file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: str | Path, write: Callable[[str], None]) -> None:
    """Let ``write`` fill a temporary file next to ``path``, fsync it, then ``os.replace`` it.

    A crash or an exception at any point leaves ``path`` as it was; an exception leaves no
    temporary file (a killed process may: ``.<name>.XXXXXXXX.tmp``, :func:`temporaries`). The
    file gets the permissions a plain ``open(path, "w")`` would give it (``mkstemp`` alone would
    leave it readable by its owner only).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        os.chmod(tmp, _default_mode())
        write(tmp)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def temporaries(directory: str | Path, names: Iterable[str]) -> list[Path]:
    """The temporary files :func:`atomic_write` makes for the files ``names`` of ``directory``
    (``.<name>.XXXXXXXX.tmp``; a crash during a write leaves one behind)."""
    patterns = [re.compile(re.escape(f".{name}.") + r"[a-z0-9_]{8}\.tmp") for name in names]
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir()
                  if any(pattern.fullmatch(p.name) for pattern in patterns) and p.is_file())


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Atomically write ``data`` to ``path``."""
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))


def atomic_write_text(path: str | Path, text: str) -> None:
    """Atomically write UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any) -> None:
    """Atomically write ``obj`` as indented JSON."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")
