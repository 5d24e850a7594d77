"""What is wrong with a checkpoint file, told from its size, its archive and the CRC-32 of its
records, without torch: the command-line tools check a model's ``model.pt`` with it before
torch loads, and :func:`~docgraph.persistence.checkpoint.load_checkpoint` before reading one.
The error type of checkpoints and model directories (:class:`CheckpointError`) is here too,
so that torch-free checks raise it."""

from __future__ import annotations

import zipfile
from pathlib import Path

from docgraph.config.errors import DocgraphError


class CheckpointError(DocgraphError, RuntimeError):
    """A checkpoint or model directory is missing, corrupt or from an incompatible version."""


def archive_damage(path: str | Path) -> str | None:
    """What is wrong with a file that cannot be a checkpoint, in a few words (``None`` when it
    looks whole). ``torch.save`` writes a zip archive whose directory is at its end, so a file
    cut short has none: it says so, instead of the archive reader's internals."""
    path = Path(path)
    size = path.stat().st_size
    if size == 0:
        return "the file is empty"
    try:
        whole = zipfile.is_zipfile(path)
    except zipfile.BadZipFile as err:  # an end record that claims other disks, ...
        return f"its archive cannot be read back ({err})"
    if not whole:
        return (f"truncated, or not a checkpoint at all ({size:,} bytes without the end of a "
                "PyTorch archive)")
    return record_damage(path)


def record_damage(path: str | Path) -> str | None:
    """The first record of a checkpoint's zip archive whose bytes fail their CRC-32, in a few
    words (``None`` when every record is whole). ``torch.load`` does not check the CRCs: a
    flipped byte inside a tensor would load as a different weight."""
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except Exception as err:  # any failure to read the archive back is damage
        return f"its archive cannot be read back ({type(err).__name__}: {err})"
    if bad is not None:
        return f"record {bad} is damaged (its CRC-32 does not match)"
    return None


def damage_message(path: str | Path) -> str | None:
    """``"PATH: not a readable docgraph checkpoint: WHAT; copy it again or retrain"`` for a
    damaged checkpoint (:func:`archive_damage`), ``None`` for one that looks whole."""
    damage = archive_damage(path)
    if damage is None:
        return None
    return f"{path}: not a readable docgraph checkpoint: {damage}; copy it again or retrain"
