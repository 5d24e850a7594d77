"""JSON files that carry the SHA-256 of their own content, checked when they are read back.

Every JSON file docgraph writes and reads back later (a model directory's ``config.json``,
``vocab.json`` and ``lm.json``, a packed model's ``manifest.json``) is *sealed*: its top-level
object holds ``"sha256"``, the digest of the rest of the object in a canonical form (keys
sorted, no spaces). A damaged file is refused by name whatever byte was hit: one that no longer
parses, one whose values changed (the digest differs), one whose ``"sha256"`` key itself was hit
(the digest is missing: the seal is required). A file edited by hand on purpose says so with
``"sha256": "edited"`` (:data:`EDITED`), a value no damage to a digest makes, and is then read
as it is. A file larger than any docgraph writes (:data:`MAX_JSON_BYTES`) is refused before it
is read.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from docgraph.config.errors import DocgraphError
from docgraph.runtime.atomic import atomic_write_text

__all__ = ["DIGEST_KEY", "EDITED", "MAX_JSON_BYTES", "DamagedFileError", "content_digest",
           "read_json_file", "seal", "unseal", "write_sealed_json"]

#: The key of the digest in a sealed object.
DIGEST_KEY = "sha256"

#: The value of :data:`DIGEST_KEY` in a file edited by hand on purpose: read unchecked.
EDITED = "edited"

#: The largest JSON file docgraph reads back (a vocabulary of every GloVe 840B word is about
#: 40 MB): a larger one is refused by its size, before it is parsed.
MAX_JSON_BYTES = 64 * 1024 * 1024

_HOW_TO = (f"copy it again or retrain (edited on purpose? set its {DIGEST_KEY!r} entry to "
           f"{EDITED!r})")


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


def unseal(obj: Any, path: str | Path, sealed: bool = True) -> Any:
    """``obj`` (read from ``path``) without its digest, after checking it.

    Args:
        obj: The object read.
        path: Where it was read from (for messages).
        sealed: The seal is required (a file docgraph wrote); else an object without a
            digest is returned as it is.

    Raises:
        DamagedFileError: The object has no digest (``sealed``), or its digest is not that
            of the content (nor :data:`EDITED`).
    """
    if not isinstance(obj, dict) or DIGEST_KEY not in obj:
        if sealed:
            what = "a JSON object" if isinstance(obj, dict) else type(obj).__name__
            raise DamagedFileError(f"{path}: damaged or not written by docgraph ({what} "
                                   f"without the {DIGEST_KEY!r} seal docgraph writes); "
                                   + _HOW_TO)
        return obj
    rest = {k: v for k, v in obj.items() if k != DIGEST_KEY}
    if obj[DIGEST_KEY] != EDITED and obj[DIGEST_KEY] != content_digest(rest):
        raise DamagedFileError(f"{path}: damaged (its content does not match the SHA-256 it "
                               f"carries); " + _HOW_TO)
    return rest


def read_json_file(path: str | Path, sealed: bool = True,
                   max_bytes: int = MAX_JSON_BYTES) -> Any:
    """The content of a JSON file, checked by :func:`unseal`.

    Args:
        path: The file.
        sealed: The seal is required (every file docgraph writes and reads back); ``False``
            for files that carry none (``metrics.json``, records of other tools).
        max_bytes: The largest file read; a larger one is refused before it is parsed.

    Raises:
        FileNotFoundError: There is no file.
        DamagedFileError: It is larger than ``max_bytes``, not UTF-8, not JSON (line and
            column named), without its seal, or damaged.
    """
    path = Path(path)
    size = path.stat().st_size
    if size > max_bytes:
        raise DamagedFileError(f"{path}: {size:,} bytes, more than the {max_bytes:,} of any "
                               f"JSON file docgraph writes; " + _HOW_TO.split(" (")[0])
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise DamagedFileError(f"{path}: not UTF-8 text (byte {err.start})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise DamagedFileError(f"{path}: not valid JSON (line {err.lineno}, column "
                               f"{err.colno}: {err.msg})") from None
    return unseal(obj, path, sealed)


def write_sealed_json(path: str | Path, obj: dict[str, Any], indent: int | None = 2,
                      ensure_ascii: bool = True) -> None:
    """Atomically write ``seal(obj)`` as JSON: indented by ``indent`` and ending in a line
    break, or on one line (``indent=None``)."""
    text = json.dumps(seal(obj), indent=indent, ensure_ascii=ensure_ascii)
    atomic_write_text(path, text + ("\n" if indent is not None else ""))
