"""An open word vocabulary: words outside a model's vocabulary that have a pretrained vector.

A trained model's word vocabulary (:class:`~docgraph.data.vocab.Vocabularies`) holds the
training words and, by default, the dev/test words that have a pretrained vector. Text met
later has other words; a closed vocabulary maps them all to ``<unk>``. :class:`OpenVocab`
gives such a word the id ``len(vocab) + r``, where ``r`` is the row of its pretrained vector
(its first :func:`~docgraph.data.vocab.lookup_keys` hit: exact form, then lowercase, then
digits normalised, as the vocabulary's own vectors were chosen); the model reads ids past its
table from the same pretrained rows (:meth:`~docgraph.model.GCDoc.open_vocabulary`). Words
without a vector stay ``<unk>``.

The table is read the first time a word outside the vocabulary is looked up
(:class:`PretrainedTable`), so a model whose input stays inside its vocabulary never pays for
it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import torch

from docgraph.data.vocab import Vocab, lookup_keys

TableLoader = Callable[[], "tuple[Sequence[str], Any] | None"]


class PretrainedTable:
    """A pretrained vector table ``(words, matrix)`` read on first use.

    Args:
        load: Returns ``(words, matrix)`` (``matrix`` a ``[V, d]`` float32 array, a memory map
            is fine) or ``None`` when there are no vectors
            (e.g. ``lambda: load_embeddings("glove-6b-50d")``).
        name: What the table is, for messages (e.g. ``"glove-6b-50d"``).
    """

    def __init__(self, load: TableLoader, name: str = "pretrained vectors") -> None:
        self._load = load
        self.name = name
        self._words: Sequence[str] | None = None
        self._matrix: Any = None
        self._rows: dict[str, int] | None = None

    def _read(self) -> None:
        if self._rows is not None:
            return
        table = self._load()
        words, matrix = table if table is not None else ([], None)
        rows: dict[str, int] = {}
        for i, word in enumerate(words):
            rows.setdefault(word, i)  # the first row of a duplicated word, as lookups use
        self._words, self._matrix, self._rows = words, matrix, rows

    @property
    def loaded(self) -> bool:
        """Whether the table has been read."""
        return self._rows is not None

    @property
    def words(self) -> Sequence[str]:
        """The words of the rows."""
        self._read()
        return self._words  # type: ignore[return-value]

    @property
    def matrix(self) -> Any:
        """The ``[V, d]`` vectors (``None`` for an empty table)."""
        self._read()
        return self._matrix

    def vectors(self, rows: torch.Tensor) -> torch.Tensor:
        """The float32 vectors of the rows ``rows`` (a 1-D tensor of ids), read from the
        table (of a memory map, only those rows)."""
        ids = rows.detach().cpu().numpy()
        return torch.from_numpy(np.asarray(self.matrix[ids], dtype=np.float32).reshape(
            len(ids), -1))

    def row(self, word: str) -> int | None:
        """The row of the first :func:`~docgraph.data.vocab.lookup_keys` hit of ``word``
        (``None`` without one)."""
        self._read()
        rows = self._rows
        for key in lookup_keys(word):
            r = rows.get(key)  # type: ignore[union-attr]
            if r is not None:
                return r
        return None

    def __repr__(self) -> str:
        return f"PretrainedTable({self.name!r}, loaded={self.loaded})"


class OpenVocab(Vocab):
    """A word vocabulary open to every word of a pretrained table.

    Ids below ``len(self)`` are the closed vocabulary's, unchanged; a word outside it gets
    ``len(self) + table.row(word)`` when the table has a vector for it, else the unknown id.
    ``len`` stays the closed size (the rows the model holds); :meth:`lookup` gives the table's
    word for an open id. Saved, it is the closed vocabulary.

    Args:
        vocab: The closed vocabulary (with an unknown entry).
        table: The pretrained vectors, read on the first word outside ``vocab``.
    """

    def __init__(self, vocab: Vocab, table: PretrainedTable) -> None:
        if vocab.unk_token is None:
            raise ValueError("an open vocabulary needs a closed one with an unknown entry")
        super().__init__(vocab.tokens, pad_token=vocab.pad_token, unk_token=vocab.unk_token)
        self.table = table

    def index(self, token: str) -> int:
        """The id of ``token``: its own, else its pretrained row's, else the unknown id."""
        i = self._stoi.get(token)
        if i is not None:
            return i
        row = self.table.row(token)
        return self._stoi[self.unk_token] if row is None else len(self._itos) + row

    def indices(self, tokens: Iterable[str]) -> list[int]:
        """Vectorised :meth:`index` over ``tokens``."""
        get = self._stoi.get
        return [i if (i := get(t)) is not None else self.index(t) for t in tokens]

    def lookup(self, ids: Iterable[int]) -> list[str]:
        """The strings of ``ids``: the closed vocabulary's, or the pretrained table's word."""
        closed = len(self._itos)
        ids = [int(i) for i in ids]
        out = super().lookup([i for i in ids if i < closed])
        opened = iter(out)
        return [next(opened) if i < closed else self._open_word(i - closed) for i in ids]

    def _open_word(self, row: int) -> str:
        words = self.table.words
        if not 0 <= row < len(words):
            raise IndexError(f"id {row + len(self._itos)} out of range for an open vocabulary of "
                             f"{len(self._itos)} entries and {len(words)} pretrained rows")
        return words[row]

    def __repr__(self) -> str:
        return (f"OpenVocab(size={len(self)}, pad={self.pad_token!r}, unk={self.unk_token!r}, "
                f"table={self.table!r})")


def unknown_share(vocab: Vocab, tokens: Sequence[str]) -> float:
    """The share of ``tokens`` that ``vocab`` maps to its unknown id (0 for no tokens)."""
    if not tokens:
        return 0.0
    unk = vocab.unk_index
    return sum(i == unk for i in vocab.indices(tokens)) / len(tokens)


__all__ = ["OpenVocab", "PretrainedTable", "unknown_share"]
