"""Where a model is, checked once and without torch.

:func:`locate_model_dir` turns a model given by path or by a shipped model's name into its
directory, or says in one line why it cannot be one (the command-line tools call it before torch
loads, the spaCy component when it is added). :func:`read_model_files` is the one read of a
model directory that every load starts from: located, its manifest read once and the files it
lists checked (:class:`ModelFiles`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from docgraph.persistence.archive import CheckpointError, archive_damage
from docgraph.persistence.manifest import check_manifest_files, read_manifest
from docgraph.persistence.shipped import (
    MODEL_FILES,
    ModelNotFoundError,
    missing_model_files,
    resolve_model,
    shipped_models,
)

#: Why a model is not a usable model directory (:attr:`ModelDirError.reason`).
ModelDirProblem = Literal["not found", "not a directory", "missing files", "damaged"]


class ModelDirError(CheckpointError):
    """A model, given by path or by a shipped model's name, that is not a usable model
    directory; the message names the path and what was expected, in one line.

    Attributes:
        path: The model as given.
        reason: ``"not found"`` (neither a directory nor a shipped model's name), ``"not a
            directory"`` (a file), ``"missing files"`` or ``"damaged"`` (``model.pt`` is cut
            short or not a checkpoint).
        directory: The absolute path the model was looked for at (for a relative path: in the
            working directory).
        missing: The files of :data:`~docgraph.persistence.shipped.MODEL_FILES` the directory
            lacks.
        damage: What is wrong with ``model.pt``
            (:func:`~docgraph.persistence.archive.archive_damage`).
        shipped: The names of the shipped models.
    """

    def __init__(self, path: str | Path, reason: ModelDirProblem, directory: Path,
                 missing: Sequence[str] = (), damage: str | None = None,
                 shipped: Sequence[str] = ()) -> None:
        self.path, self.reason, self.directory = path, reason, directory
        self.missing, self.damage, self.shipped = tuple(missing), damage, tuple(shipped)
        super().__init__(self._message())

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.path, self.reason, self.directory, self.missing, self.damage,
                            self.shipped)

    def _message(self) -> str:
        return f"{self.path}: {self.detail}"

    @property
    def detail(self) -> str:
        """What is wrong with the model directory (the message without the path in front)."""
        names = ", ".join(self.shipped) or "none installed"
        moved = Path(self.path).expanduser() != self.directory
        if self.reason == "not found":
            looked = (f"no directory {self.directory}: a relative path is read from the working "
                      f"directory {Path.cwd()}; " if moved else "")
            return f"neither a model directory nor a shipped model ({looked}shipped: {names})"
        if self.reason == "not a directory":
            return f"is a file, expected a model directory or the name of a shipped model ({names})"
        if self.reason == "missing files":
            where = f" in {self.directory}" if moved else ""
            written = ("" if len(self.missing) == len(MODEL_FILES)
                       else f"; train.py writes {', '.join(MODEL_FILES)}")
            return (f"not a model directory written by train.py "
                    f"(no {', '.join(self.missing)}{where}{written})")
        weights = self.directory / "model.pt" if moved else "model.pt"
        return (f"{weights} is not a readable docgraph checkpoint: {self.damage}; "
                "copy it again or retrain")


def _absolute(path: str | Path) -> Path:
    """``path`` made absolute from the working directory (symbolic links kept)."""
    return Path(os.path.abspath(Path(path).expanduser()))


def locate_model_dir(model: str | Path) -> Path:
    """The absolute path of the model directory ``model`` stands for: a directory (a path
    always wins) or the name of a shipped model
    (:func:`~docgraph.persistence.shipped.resolve_model`), with every file of
    :data:`~docgraph.persistence.shipped.MODEL_FILES` and a whole ``model.pt`` (a zip archive
    with its end, :func:`~docgraph.persistence.archive.archive_damage`); of the files' bytes it
    reads only the end of ``model.pt``.

    Raises:
        ModelDirError: ``model`` is not found, is a file, lacks a file or has a damaged
            ``model.pt``.
    """
    def refused(reason: ModelDirProblem, directory: Path, **found: Any) -> ModelDirError:
        return ModelDirError(model, reason, directory, shipped=shipped_models(), **found)

    try:
        directory = _absolute(resolve_model(model))
    except ModelNotFoundError:
        exists = Path(model).expanduser().exists()
        raise refused("not a directory" if exists else "not found", _absolute(model)) from None
    missing = missing_model_files(directory)
    if missing:
        raise refused("missing files", directory, missing=missing)
    damage = archive_damage(directory / "model.pt")
    if damage is not None:
        raise refused("damaged", directory, damage=damage)
    return directory


@dataclass(frozen=True)
class ModelFiles:
    """A model directory as :func:`read_model_files` found it: where it is and, for a packed
    one, its manifest (its files checked against it).

    Attributes:
        directory: The absolute path of the directory.
        manifest: The manifest of a packed model directory
            (:func:`~docgraph.persistence.manifest.read_manifest`); ``None`` for one written by
            ``train.py``.
    """

    directory: Path
    manifest: Mapping[str, Any] | None

    @property
    def packed(self) -> bool:
        """Whether the directory is a packed one (:mod:`docgraph.persistence.packing`)."""
        return self.manifest is not None


def read_model_files(model: str | Path | ModelFiles) -> ModelFiles:
    """The model directory ``model`` stands for (:func:`locate_model_dir`), its manifest read
    once and every file it lists checked against its SHA-256; a :class:`ModelFiles` is
    returned as it is.

    Raises:
        ModelDirError: ``model`` is not a usable model directory.
        CheckpointError: Its manifest is unreadable, or a file it lists is missing or damaged.
    """
    if isinstance(model, ModelFiles):
        return model
    directory = locate_model_dir(model)
    manifest = read_manifest(directory)
    if manifest is not None:
        check_manifest_files(directory, manifest)
    return ModelFiles(directory, manifest)


__all__ = ["ModelDirError", "ModelDirProblem", "ModelFiles", "locate_model_dir",
           "read_model_files"]
