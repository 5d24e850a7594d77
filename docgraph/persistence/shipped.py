"""Models that ship with docgraph, and the one rule that turns a ``--model`` value into a
model directory (torch-free: the command-line tools check it before torch loads).

A shipped model is a packed model directory (:mod:`docgraph.persistence.packing`) under
``docgraph_models/<name>/``, the data package installed beside the library (the weights apart
from the code); ``Tagger.load("conll03")``, ``predict.py --model conll03`` and
``nlp.add_pipe("docgraph_ner", config={"model": "conll03"})`` load it by name. Its card is
``docs/models.md``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from docgraph.config.errors import DocgraphError


def _models_package() -> Path:
    """The directory of the data package ``docgraph_models``, found by name without importing
    it; where it is not installed, where it would be beside ``docgraph`` (no model ships)."""
    spec = importlib.util.find_spec("docgraph_models")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    return Path(__file__).resolve().parents[2] / "docgraph_models"


#: Where the shipped models are: the data package ``docgraph_models``, installed with the
#: library by the same ``pip install``.
SHIPPED_DIR = _models_package()

#: The files every model directory has (``train.py`` writes them; a packed one too).
MODEL_FILES = ("config.json", "vocab.json", "model.pt")

#: The file that makes a model directory a packed one (checksums and how it was packed).
MANIFEST = "manifest.json"

#: The file of a model directory that declares its speeds (its fast mode, its default;
#: :mod:`docgraph.persistence.speeds`).
SPEEDS_FILE = "speed.json"

#: The file of a model directory that holds its test scores as ``evaluate.py`` measured the
#: directory itself (:func:`~docgraph.persistence.manifest.save_test_scores`).
SCORES_FILE = "scores.json"

#: Files of a model directory besides :data:`MODEL_FILES`, copied with it when present (the
#: record of its language model, its speeds, its test scores, the checksums of a packed model).
OPTIONAL_MODEL_FILES = ("lm.json", SPEEDS_FILE, SCORES_FILE, MANIFEST)


class ModelNotFoundError(DocgraphError, ValueError):
    """A model given by name or path is neither a model directory nor a shipped model (the
    message names the shipped models)."""


def shipped_models() -> list[str]:
    """The names of the models that ship with docgraph, sorted."""
    if not SHIPPED_DIR.is_dir():
        return []
    return sorted(d.name for d in SHIPPED_DIR.iterdir()
                  if d.is_dir() and (d / MANIFEST).is_file())


def shipped_model_dir(name: str) -> Path | None:
    """The directory of the shipped model ``name`` (``None`` when none has that name)."""
    return SHIPPED_DIR / name if name in shipped_models() else None


def resolve_model(spec: str | Path) -> Path:
    """The model directory ``spec`` stands for: an existing directory as it is (a path always
    wins), else the shipped model of that name.

    Raises:
        ModelNotFoundError: ``spec`` is neither an existing directory nor a shipped model's
            name (one line, listing the shipped names), or is a file.
    """
    path = Path(spec).expanduser()
    if path.is_dir():
        return path
    shipped = shipped_model_dir(str(spec))
    if shipped is not None:
        return shipped
    names = ", ".join(shipped_models()) or "none installed"
    if path.exists():
        raise ModelNotFoundError(f"{spec}: is a file, expected a model directory or the name "
                                 f"of a shipped model ({names})")
    raise ModelNotFoundError(f"{spec}: neither a model directory nor a shipped model "
                             f"(shipped: {names})")


def missing_model_files(directory: Path) -> list[str]:
    """The files of :data:`MODEL_FILES` that ``directory`` lacks."""
    return [name for name in MODEL_FILES if not (directory / name).is_file()]


__all__ = ["MANIFEST", "MODEL_FILES", "OPTIONAL_MODEL_FILES", "SCORES_FILE", "SHIPPED_DIR",
           "SPEEDS_FILE",
           "ModelNotFoundError", "missing_model_files", "resolve_model", "shipped_model_dir",
           "shipped_models"]
