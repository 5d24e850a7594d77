"""Long documents in chunks (``max_doc_tokens``): the one packing rule of training, tagging
(:mod:`docgraph.tagging`), ``predict.py`` and the spaCy component.

GCDoc's graph and cross-sentence windows span a whole document; a document longer than a
token budget is cut into chunks of consecutive sentences packed greedily in order
(:class:`GreedyPacker`), each a :class:`Document` of its own, so the graph edges between tokens
of different chunks are lost. Training keeps a sentence longer than the budget whole, as a
chunk of its own; tagging first cuts it into pieces of the budget's length
(:func:`piece_bounds`), each a sentence for the model. Torch-free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Generic, TypeVar

from docgraph.data.document import Document, Sentence

T = TypeVar("T")


class GreedyPacker(Generic[T]):
    """Consecutive items, pushed one at a time, in groups of at most ``max_tokens`` tokens,
    packed greedily in order: a group ends before the item that would take it past the
    budget; an item larger than the budget is a group of its own. The caller drives the loop,
    so a stream of any length is packed with one group in memory.

    Args:
        max_tokens: Token budget per group (``>= 1``).
    """

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self._group: list[T] = []
        self._used = 0

    def push(self, item: T, size: int) -> list[T] | None:
        """Add ``item`` of ``size`` tokens; the group it closed, if it closed one."""
        closed = None
        if self._group and self._used + size > self.max_tokens:
            closed, self._group, self._used = self._group, [], 0
        self._group.append(item)
        self._used += size
        return closed

    def flush(self) -> list[T] | None:
        """The last group (``None`` when there is none); the packer is empty afterwards."""
        closed, self._group, self._used = self._group or None, [], 0
        return closed

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(max_tokens={self.max_tokens})"


def pack_greedy(items: Iterable[T], max_tokens: int, size: Callable[[T], int] = len
                ) -> Iterator[list[T]]:
    """The groups of :class:`GreedyPacker` over ``items``; no items, no groups.

    Args:
        items: The items (sentences, pieces), in order.
        max_tokens: Token budget per group (``>= 1``).
        size: The number of tokens of an item.
    """
    packer: GreedyPacker[T] = GreedyPacker(max_tokens)
    for item in items:
        if (group := packer.push(item, size(item))) is not None:
            yield group
    if (group := packer.flush()) is not None:
        yield group


def piece_bounds(length: int, max_tokens: int | None) -> list[tuple[int, int]]:
    """``(start, end)`` of the pieces a sentence of ``length`` tokens is tagged in: of
    ``max_tokens`` tokens each, the last one shorter (``None`` or ``0``: the whole sentence)."""
    if not max_tokens:
        return [(0, length)]
    return [(first, min(first + max_tokens, length)) for first in range(0, length, max_tokens)]


def pack_sentences(sentences: Sequence[Sentence], max_tokens: int) -> list[list[Sentence]]:
    """Groups of consecutive sentences of at most ``max_tokens`` tokens (:func:`pack_greedy`);
    ``[[]]`` for no sentences."""
    return list(pack_greedy(sentences, max_tokens)) or [[]]


def make_chunk(doc: Document, k: int, sentences: Sequence[Sentence]) -> Document:
    """Chunk ``k`` of ``doc``: id ``f"{doc_id}#{k}"``, its ``sentences`` renumbered from 0."""
    chunk_id = f"{doc.doc_id}#{k}"
    return Document(
        doc_id=chunk_id,
        sentences=tuple(replace(s, doc_id=chunk_id, index=j) for j, s in enumerate(sentences)),
        source_scheme=doc.source_scheme,
    )


def _pieces(sentence: Sentence, max_tokens: int) -> list[Sentence]:
    """``sentence`` cut into pieces of at most ``max_tokens`` tokens (:func:`piece_bounds`)."""
    if len(sentence) <= max_tokens:
        return [sentence]
    return [replace(sentence, tokens=sentence.tokens[a:b], tags=sentence.tags[a:b])
            for a, b in piece_bounds(len(sentence), max_tokens)]


def split_long_documents(documents: Iterable[Document], max_tokens: int | None,
                         cut_sentences: bool = False) -> list[Document]:
    """Split documents longer than ``max_tokens`` into chunks of consecutive sentences.

    Sentences are packed greedily in order (:func:`pack_greedy`); a sentence longer than
    ``max_tokens`` is a chunk on its own, or, with ``cut_sentences``, first cut into pieces of
    ``max_tokens`` tokens, each a sentence of its own (what tagging does). Chunks get ids
    ``f"{doc_id}#{k}"`` and renumbered sentences; documents that fit are returned unchanged.
    Graph edges between tokens of different chunks are lost.

    Args:
        documents: The documents.
        max_tokens: Token budget per chunk; ``None`` or ``0`` disables splitting.
        cut_sentences: Cut sentences longer than ``max_tokens`` into pieces.

    Returns:
        The documents and chunks, in order.
    """
    out: list[Document] = []
    for doc in documents:
        if not max_tokens or doc.num_tokens <= max_tokens:
            out.append(doc)
            continue
        sentences: Sequence[Sentence] = doc.sentences
        if cut_sentences:
            sentences = [p for s in doc.sentences for p in _pieces(s, max_tokens)]
        out.extend(make_chunk(doc, k, group)
                   for k, group in enumerate(pack_sentences(sentences, max_tokens)))
    return out
