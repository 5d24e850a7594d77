"""Atomic, safe persistence: checkpoints are written to a temporary file and renamed, and
read back with ``torch.load(..., weights_only=True)`` so no arbitrary object is ever unpickled."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import torch

FORMAT_VERSION = 1


class CheckpointError(RuntimeError):
    """A checkpoint or model directory is missing, corrupt or from an incompatible version."""


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Atomically write UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any) -> None:
    """Atomically write ``obj`` as indented JSON."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """Atomically save a dictionary of tensors and plain Python values with ``torch.save``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        torch.save({"format_version": FORMAT_VERSION, **state}, tmp)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Load a checkpoint written by :func:`save_checkpoint`, safely (``weights_only=True``).

    Raises:
        CheckpointError: The file is missing, corrupt, not a docgraph checkpoint, or was
            written by an incompatible format version.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: checkpoint not found")
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:
        raise CheckpointError(f"{path}: not a readable docgraph checkpoint ({err})") from err
    if not isinstance(state, dict) or "format_version" not in state:
        raise CheckpointError(f"{path}: not a docgraph checkpoint (no format_version)")
    if state["format_version"] != FORMAT_VERSION:
        raise CheckpointError(
            f"{path}: checkpoint format {state['format_version']} is not supported "
            f"(this docgraph reads format {FORMAT_VERSION})"
        )
    return state
