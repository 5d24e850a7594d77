"""``speed.json``: the speeds a model directory declares (its fast mode and its default).

A model's fast mode is the combination of approximations with the best speed whose F1 cost
stays within the bound on every row of its benchmark, and it tags at that mode by default when
the cost stays within the stricter bound (``docs/experiments.md``, "Fast tagging"). A model
directory records what its measurements chose here; without the file, ``--speed fast`` is
:data:`~docgraph.config.tagging.FAST` and the default
:data:`~docgraph.config.tagging.DEFAULT_SPEED`. The file is sealed, and a packed model's
manifest lists it.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path

from docgraph.config.tagging import Approximation, ModelSpeeds, approximation_of
from docgraph.persistence.archive import CheckpointError
from docgraph.persistence.locate import ModelFiles, locate_model_dir
from docgraph.persistence.manifest import write_model_json
from docgraph.persistence.shipped import SPEEDS_FILE
from docgraph.runtime.integrity import DamagedFileError, read_json_file

__all__ = ["model_speeds", "save_model_speeds"]

_KEYS = {f.name for f in fields(ModelSpeeds)}
_SETTINGS = {f.name for f in fields(Approximation)}


def model_speeds(model: str | Path | ModelFiles) -> ModelSpeeds:
    """The speeds ``model`` (a model directory, a shipped model's name or its
    :class:`~docgraph.persistence.locate.ModelFiles`) declares in its ``speed.json``; the
    library's (:class:`~docgraph.config.tagging.ModelSpeeds`) without one. The file's seal is
    checked here, its place in a packed model's manifest when the model loads.

    Raises:
        ModelDirError: ``model`` is not a usable model directory.
        CheckpointError: The file is damaged or declares no valid speeds (naming it).
    """
    directory = model.directory if isinstance(model, ModelFiles) else locate_model_dir(model)
    path = directory / SPEEDS_FILE
    if not path.is_file():
        return ModelSpeeds()
    try:
        record = read_json_file(path)
        if not isinstance(record, dict) or set(record) - _KEYS:
            raise ValueError(f"expected an object of {', '.join(sorted(_KEYS))}")
        fast = record.get("fast", {})
        if not isinstance(fast, dict) or set(fast) - _SETTINGS:
            raise ValueError(f"fast: expected an object of {', '.join(sorted(_SETTINGS))}")
        if not isinstance(fast.get("int8", False), bool):
            raise ValueError(f"fast: int8 must be true or false, got {fast['int8']!r}")
        return ModelSpeeds(approximation_of(Approximation(), **fast),
                           record.get("default", ModelSpeeds().default))
    except DamagedFileError as err:
        raise CheckpointError(str(err)) from None
    except (OSError, TypeError, ValueError) as err:
        raise CheckpointError(f"{path}: not a model's speeds ({err})") from None


def save_model_speeds(directory: str | Path, speeds: ModelSpeeds) -> Path:
    """Declare ``speeds`` in the model directory ``directory``: written sealed and atomically,
    its SHA-256 added to the manifest of a packed one; returns the file."""
    fast = {key: value for key, value in asdict(speeds.fast).items()
            if value != getattr(Approximation(), key)}
    return write_model_json(directory, SPEEDS_FILE, {"fast": fast, "default": speeds.default})
