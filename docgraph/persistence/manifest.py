"""The manifest of a packed model directory: how it was packed and the SHA-256 of every
file, checked when the directory is loaded (:mod:`docgraph.persistence.packing` writes it)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docgraph.persistence.archive import CheckpointError
from docgraph.persistence.shipped import MANIFEST, SCORES_FILE
from docgraph.runtime.integrity import DamagedFileError, read_json_file, write_sealed_json

PACK_FORMAT = "docgraph-packed-model"
PACK_VERSION = 1


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(directory: str | Path) -> dict | None:
    """The manifest of a packed model directory (``None`` for a directory without one).

    Raises:
        CheckpointError: The manifest is unreadable or not a docgraph manifest.
    """
    path = Path(directory) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = read_json_file(path)
    except DamagedFileError as err:
        raise CheckpointError(str(err)) from None
    except OSError as err:
        raise CheckpointError(f"{path}: unreadable manifest ({err})") from None
    if (not isinstance(manifest, dict) or manifest.get("format") != PACK_FORMAT
            or not isinstance(manifest.get("files"), dict)):
        raise CheckpointError(f"{path}: not a {PACK_FORMAT} manifest")
    if manifest.get("version") != PACK_VERSION:
        raise CheckpointError(f"{path}: packed-model format {manifest.get('version')} is not "
                              f"supported (this docgraph reads {PACK_VERSION})")
    return manifest


def verify_manifest(directory: str | Path) -> dict | None:
    """Check every file a packed model directory's manifest lists against its SHA-256.

    Returns:
        The manifest, or ``None`` for a directory without one (nothing to check).

    Raises:
        CheckpointError: The manifest is unreadable, or a listed file is missing or its bytes
            differ (naming the file).
    """
    manifest = read_manifest(directory)
    if manifest is not None:
        check_manifest_files(directory, manifest)
    return manifest


def check_manifest_files(directory: str | Path, manifest: dict) -> None:
    """Check every file ``manifest`` (read by :func:`read_manifest`) lists against its SHA-256.

    Raises:
        CheckpointError: A listed file is missing or its bytes differ (naming the file).
    """
    directory = Path(directory)
    for name, expected in sorted(manifest["files"].items()):
        path = directory / name
        if Path(name).name != name or not path.is_file():
            raise CheckpointError(f"{path}: missing (listed in {directory / MANIFEST})")
        if file_sha256(path) != expected:
            raise CheckpointError(f"{path}: damaged (its SHA-256 is not the one in "
                                  f"{directory / MANIFEST}); reinstall docgraph or copy the "
                                  "model again")


__all__ = ["PACK_FORMAT", "PACK_VERSION", "check_manifest_files", "file_sha256", "read_manifest",
           "verify_manifest", "write_model_json"]


def save_threshold(directory: str | Path, threshold: float) -> float:
    """Write the tagging ``threshold`` into a model directory's ``config.json`` (and the new
    SHA-256 of that file into the manifest of a packed one), each sealed and atomically;
    returns the threshold it replaced."""
    return float(_save_model_setting(directory, "threshold", float(threshold)))


def save_score_temperature(directory: str | Path, temperature: float) -> float:
    """Write the entity scores' ``temperature`` (``[model] score_temperature``) into a model
    directory as :func:`save_threshold` writes the threshold; returns the one it replaced
    (1 for a directory saved without one)."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return float(_save_model_setting(directory, "score_temperature", float(temperature), 1.0))


def save_label_consistency(directory: str | Path, on: bool) -> bool:
    """Write whether tagging applies label consistency in decoding by default (``[model]
    label_consistency``) into a model directory as :func:`save_threshold` writes the threshold;
    returns the value it replaced (``False`` for a directory saved without one)."""
    return bool(_save_model_setting(directory, "label_consistency", bool(on), False))


def model_label_consistency(directory: str | Path) -> bool:
    """Whether the model directory ``directory`` decodes with label consistency unless told
    (``[model] label_consistency`` of its ``config.json``; ``False`` for one saved without it),
    read without torch.

    Raises:
        CheckpointError: Its ``config.json`` is damaged (naming it).
    """
    config = _read_sealed(Path(directory) / "config.json")
    return bool(config.get("model", {}).get("label_consistency", False))


def save_test_scores(directory: str | Path, metrics: Mapping[str, Any], source: str) -> Path:
    """Write the test scores of an evaluation of the model directory itself (``evaluate.py
    --split test``'s ``test_metrics.json``, read as ``metrics``; ``source``: where its command
    and log are) into its ``scores.json``: overall precision, recall and F1 and F1 per type,
    sealed and atomically, its SHA-256 added to the manifest of a packed one; returns the
    file."""
    test = metrics["test"]
    record = {"test": {key: test[key] for key in ("precision", "recall", "f1", "support")}
              | {"per_type": {t: s["f1"] for t, s in test.get("per_type", {}).items()}},
              "source": source}
    return write_model_json(directory, SCORES_FILE, record)


def read_test_scores(directory: str | Path) -> dict[str, Any] | None:
    """The record :func:`save_test_scores` wrote into a model directory (``None`` without
    one); its seal is checked.

    Raises:
        CheckpointError: The file is damaged (naming it).
    """
    path = Path(directory) / SCORES_FILE
    if not path.is_file():
        return None
    record = _read_sealed(path)
    if not isinstance(record, dict) or not isinstance(record.get("test"), dict):
        raise CheckpointError(f"{path}: not a model's test scores")
    return record


def _save_model_setting(directory: str | Path, key: str, value: Any,
                        default: Any = None) -> Any:
    """Write ``[model] key = value`` into a model directory's ``config.json`` and the manifest
    of a packed one; returns the value it replaced (``default`` when there was none)."""
    config = _read_sealed(Path(directory) / "config.json")
    previous = config["model"].get(key, default)
    config["model"][key] = value
    write_model_json(directory, "config.json", config)
    return previous


def _read_sealed(path: Path) -> Any:
    """A sealed JSON file of a model directory; a damaged one is a :class:`CheckpointError`
    naming it."""
    try:
        return read_json_file(path)
    except DamagedFileError as err:
        raise CheckpointError(str(err)) from None


def write_model_json(directory: str | Path, name: str, content: dict) -> Path:
    """Write ``content`` as the model directory's JSON file ``name``, sealed and atomically, and
    its new SHA-256 into the manifest of a packed one (the manifest is read first: a damaged
    one is refused before anything is written); returns the file."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    path = directory / name
    write_sealed_json(path, content)
    if manifest is not None:
        manifest["files"][name] = file_sha256(path)
        write_sealed_json(directory / MANIFEST, manifest)
    return path
