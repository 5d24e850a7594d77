"""The tagging service's optional bearer token (``--api-key-file``); fastapi-free."""

from __future__ import annotations

import hmac
from pathlib import Path

__all__ = ["bearer_matches", "read_api_key"]


def read_api_key(path: str | Path) -> str:
    """The bearer token in ``path``: its first line, stripped.

    Raises:
        ValueError: The file cannot be read or holds no token (naming the flag and the file).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").strip().splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"--api-key-file {path}: cannot be read ({err})") from None
    if not lines or not lines[0].strip():
        raise ValueError(f"--api-key-file {path}: holds no token")
    return lines[0].strip()


def bearer_matches(authorization: str | None, key: str) -> bool:
    """Whether an ``Authorization`` header carries ``Bearer <key>``, compared in constant
    time (:func:`hmac.compare_digest`)."""
    scheme, _, token = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(),
                                                              key.encode())
