"""JSON files that carry the SHA-256 of their own content, checked when they are read back.

Every JSON file docgraph writes and reads back later (a model directory's ``config.json``,
``vocab.json`` and ``lm.json``, a packed model's ``manifest.json``) is *sealed*: its top-level
object holds ``"sha256"``, the digest of the rest of the object in a canonical form (keys
sorted, no spaces). A damaged file is refused by name whatever byte was hit: one that no longer
parses, one whose values changed (the digest differs), one whose ``"sha256"`` key itself was hit
(the digest is missing and an unknown key appears, which the readers of these files refuse).
Files written before seals existed have no ``"sha256"`` and are read as they are.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from docgraph.config.errors import DocgraphError
from docgraph.runtime.atomic import atomic_write_text

__all__ = ["DIGEST_KEY", "DamagedFileError", "content_digest", "read_json_file", "seal",
           "unseal", "write_sealed_json"]

#: The key of the digest in a sealed object.
DIGEST_KEY = "sha256"


class DamagedFileError(DocgraphError, ValueError):
    """A file docgraph wrote cannot be read back as written; ``str()`` names the file."""


def content_digest(obj: dict[str, Any]) -> str:
    """The SHA-256 of ``obj`` in canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with its :func:`content_digest` under :data:`DIGEST_KEY` (replacing one it had)."""
    rest = {k: v for k, v in obj.items() if k != DIGEST_KEY}
    return {**rest, DIGEST_KEY: content_digest(rest)}


def unseal(obj: Any, path: str | Path) -> Any:
    """``obj`` (read from ``path``) without its digest, after checking it; an object without
    a digest is returned as it is.

    Raises:
        DamagedFileError: The digest is not a string or not that of the content.
    """
    if not isinstance(obj, dict) or DIGEST_KEY not in obj:
        return obj
    rest = {k: v for k, v in obj.items() if k != DIGEST_KEY}
    if obj[DIGEST_KEY] != content_digest(rest):
        raise DamagedFileError(f"{path}: damaged (its content does not match the SHA-256 it "
                               f"carries); copy it again or retrain (edited on purpose? delete "
                               f"its {DIGEST_KEY!r} entry)")
    return rest


def read_json_file(path: str | Path) -> Any:
    """The content of a JSON file, checked by :func:`unseal`.

    Raises:
        FileNotFoundError: There is no file.
        DamagedFileError: It is not UTF-8, not JSON (line and column named), or damaged.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise DamagedFileError(f"{path}: not UTF-8 text (byte {err.start})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise DamagedFileError(f"{path}: not valid JSON (line {err.lineno}, column "
                               f"{err.colno}: {err.msg})") from None
    return unseal(obj, path)


def write_sealed_json(path: str | Path, obj: dict[str, Any], indent: int | None = 2,
                      ensure_ascii: bool = True) -> None:
    """Atomically write ``seal(obj)`` as JSON: indented by ``indent`` and ending in a line
    break, or on one line (``indent=None``)."""
    text = json.dumps(seal(obj), indent=indent, ensure_ascii=ensure_ascii)
    atomic_write_text(path, text + ("\n" if indent is not None else ""))
