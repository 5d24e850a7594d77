"""What is wrong with a checkpoint file, told from its size and its last bytes, without torch:
the command-line tools check a model's ``model.pt`` with it before torch loads, and
:func:`~docgraph.persistence.checkpoint.load_checkpoint` before reading one. The error type of
checkpoints and model directories (:class:`CheckpointError`) is here too, so that torch-free
checks raise it."""

from __future__ import annotations

import zipfile
from pathlib import Path


class CheckpointError(RuntimeError):
    """A checkpoint or model directory is missing, corrupt or from an incompatible version."""


def archive_damage(path: str | Path) -> str | None:
    """What is wrong with a file that cannot be a checkpoint, in a few words (``None`` when it
    looks whole). ``torch.save`` writes a zip archive whose directory is at its end, so a file
    cut short has none: it says so, instead of the archive reader's internals."""
    path = Path(path)
    size = path.stat().st_size
    if size == 0:
        return "the file is empty"
    if not zipfile.is_zipfile(path):
        return (f"truncated, or not a checkpoint at all ({size:,} bytes without the end of a "
                "PyTorch archive)")
    return None


def damage_message(path: str | Path) -> str | None:
    """``"PATH: not a readable docgraph checkpoint: WHAT; copy it again or retrain"`` for a
    damaged checkpoint (:func:`archive_damage`), ``None`` for one that looks whole."""
    damage = archive_damage(path)
    if damage is None:
        return None
    return f"{path}: not a readable docgraph checkpoint: {damage}; copy it again or retrain"
