"""``fast_mode.json``: the approximations a model directory declares as its ``--speed fast``.

The fast mode is chosen per model: the combination of approximations with the best speed whose
F1 cost stays within the bound on every row of the model's benchmark. A model directory whose
measurements chose another combination than :data:`~docgraph.config.tagging.FAST` records it
here; without the file, ``--speed fast`` is :data:`~docgraph.config.tagging.FAST`. The file is
sealed, and a packed model's manifest lists it.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from docgraph.config.tagging import FAST, Approximation, approximation_of
from docgraph.persistence.archive import CheckpointError
from docgraph.persistence.locate import ModelFiles, read_model_files
from docgraph.persistence.manifest import file_sha256, read_manifest
from docgraph.persistence.shipped import FAST_MODE_FILE, MANIFEST
from docgraph.runtime.integrity import DamagedFileError, read_json_file, write_sealed_json

__all__ = ["FAST_MODE_FILE", "model_fast_mode", "save_fast_mode"]


def model_fast_mode(model: str | Path | ModelFiles) -> Approximation:
    """What ``--speed fast`` computes for ``model`` (a model directory, a shipped model's name
    or its :class:`~docgraph.persistence.locate.ModelFiles`): the approximation its
    ``fast_mode.json`` declares, else :data:`~docgraph.config.tagging.FAST`.

    Raises:
        CheckpointError: The file is damaged or declares no valid approximation (naming it).
    """
    path = read_model_files(model).directory / FAST_MODE_FILE
    if not path.is_file():
        return FAST
    try:
        record = read_json_file(path)
        if not isinstance(record, dict) or set(record) - set(asdict(FAST)):
            raise ValueError(f"expected an object of {', '.join(asdict(FAST))}")
        return approximation_of(Approximation(), **record)
    except DamagedFileError as err:
        raise CheckpointError(str(err)) from None
    except (OSError, TypeError, ValueError) as err:
        raise CheckpointError(f"{path}: not a fast mode ({err})") from None


def save_fast_mode(directory: str | Path, approximation: Approximation) -> Path:
    """Declare ``approximation`` the fast mode of the model directory ``directory``: written
    sealed and atomically, its SHA-256 added to the manifest of a packed one; returns the
    file."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    path = directory / FAST_MODE_FILE
    record = {key: value for key, value in asdict(approximation).items()
              if value != getattr(Approximation(), key)}
    write_sealed_json(path, record)
    if manifest is not None:
        manifest["files"][FAST_MODE_FILE] = file_sha256(path)
        write_sealed_json(directory / MANIFEST, manifest)
    return path
