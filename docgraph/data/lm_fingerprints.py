"""Fingerprints of what contextual features depend on: the language model's files and the corpus.

:func:`model_dir_hash` names the files of a language-model directory (the feature cache keys
and ``lm.json`` record it, so that features are never reused with, nor a model loaded against,
other weights or another tokenizer); :func:`corpus_hash` names the words and the sentence and
document boundaries of a corpus. :class:`LanguageModelError` is the error of a language-model
directory that is missing, unreadable or not the recorded one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from docgraph.config.errors import DocgraphError
from docgraph.data.document import Document

_HASH_CHUNK = 1 << 20


class LanguageModelError(DocgraphError, ValueError):
    """A language-model directory is missing, unreadable or not the one a model needs."""


def model_dir_hash(path: str | Path) -> str:
    """SHA-256 over the relative names and contents of every file of a model directory.

    Raises:
        LanguageModelError: If ``path`` is not a directory.
    """
    root = Path(path)
    if not root.is_dir():
        raise LanguageModelError(f"{root}: language-model directory not found")
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(file.relative_to(root).as_posix().encode() + b"\0")
        with file.open("rb") as handle:
            while chunk := handle.read(_HASH_CHUNK):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def corpus_hash(documents: Sequence[Document]) -> str:
    """SHA-256 of the words and the sentence and document boundaries (tags and ids ignored)."""
    digest = hashlib.sha256()
    for doc in documents:
        for sent in doc.sentences:
            digest.update("\x1f".join(sent.tokens).encode("utf-8") + b"\x1e")
        digest.update(b"\x1d")
    return digest.hexdigest()
