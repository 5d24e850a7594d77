"""Documents in chunks and back: the one chunking route of tagging.

A document -- raw text (its tokens keep their character spans), token lists, a
:class:`~docgraph.data.document.Document`, or a region of a file's text read by an input
adapter (:mod:`docgraph.tagging.prediction_io`) -- is numbered into sentences; a sentence
longer than ``max_tokens`` is cut into pieces of ``max_tokens`` tokens, each a sentence of its
own for the model (:func:`~docgraph.data.chunking.piece_bounds`), and the pieces are packed
greedily in order into chunks of at most ``max_tokens`` tokens
(:class:`~docgraph.data.chunking.GreedyPacker`; :func:`document_chunks`). A chunk is a document
of its own for the model: the graph and the cross-sentence windows never reach across chunks.

Back (:func:`tagged_documents`): the tagged chunks of a document are joined into its
:class:`~docgraph.tagging.result.TaggedDocument`, its pieces into their sentences, and its
tags become :class:`~docgraph.tagging.result.Entity` spans in one place
(:func:`chunk_entities`).

This module does not import torch, nor any reader of file formats.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from docgraph.data.chunking import GreedyPacker, piece_bounds
from docgraph.data.document import Document, make_document
from docgraph.data.tokenize import (
    Span,
    same_line_runs,
    text_to_sentence_spans,
    word_spans,
)
from docgraph.tagging.result import Entity, GraphEdge, TaggedDocument, TaggedSentence, Tagging

DocumentInput = str | Sequence[Sequence[str]] | Document
"""A document given in Python: raw text, token lists (sentences) or a :class:`Document`."""

# Line breaks of str.splitlines(), so --tokenized lines are the lines they always were.
_LINE_RE = re.compile(r"[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")


def line_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[Span]:
    """The ``(start, end)`` of every line of ``text[start:end]`` with a character, line breaks
    as :meth:`str.splitlines` breaks lines."""
    for line in _LINE_RE.finditer(text, start, len(text) if end is None else end):
        yield line.span()


@dataclass(frozen=True)
class Piece:
    """Consecutive tokens of one sentence, tagged as one sentence by the model.

    Args:
        sentence: Index of the sentence in its document.
        first: Index in the sentence of the piece's first token (0 unless the sentence was
            longer than ``max_tokens``).
        tokens: The tokens.
        spans: Their ``(start, end)`` in the input text; ``None`` for CoNLL input.
        last: Whether the piece ends its sentence.
    """

    sentence: int
    first: int
    tokens: tuple[str, ...]
    spans: tuple[Span, ...] | None
    last: bool = True

    def __len__(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True)
class Chunk:
    """Pieces of one document that the model tags as one document.

    Args:
        doc: The document's id in the output (``path.stem``, or ``f"{path.stem}-{n}"`` for
            the ``n``-th document of a file of several; a span JSON lines record's id).
        pieces: The pieces, in order (none for an empty document).
        text: The input text the pieces' spans point into (``None`` for CoNLL input; a
            span JSON lines record's ``"text"``).
        first: Whether it is the first chunk of its document.
        path: The input file.
        done: How much of the file is read once this chunk is (0 to 1, for progress).
        bounds: The document's ``(start, end)`` in ``text`` (``None`` without text).
    """

    doc: str
    pieces: tuple[Piece, ...]
    text: str | None
    first: bool
    path: Path
    done: float
    bounds: Span | None = None

    @property
    def num_tokens(self) -> int:
        """The number of tokens of the chunk."""
        return sum(len(p) for p in self.pieces)


def sentence_spans(text: str, start: int, end: int, tokenized: bool) -> Iterator[list[Span]]:
    """The token spans of each sentence of ``text[start:end]`` with a token."""
    if not tokenized:
        yield from text_to_sentence_spans(text, start, end)
        return
    for line in line_spans(text, start, end):
        if words := word_spans(text, *line):
            yield words


def sentence_pieces(sentences: Iterable[tuple[Sequence[str], Sequence[Span] | None]],
                    max_tokens: int) -> Iterator[Piece]:
    """Number the sentences and cut those longer than ``max_tokens`` into pieces
    (:func:`~docgraph.data.chunking.piece_bounds`); an empty sentence keeps its number and
    gives no piece."""
    for index, (tokens, spans) in enumerate(sentences):
        if not tokens:
            continue
        for first, stop in piece_bounds(len(tokens), max_tokens):
            yield Piece(index, first, tuple(tokens[first:stop]),
                        None if spans is None else tuple(spans[first:stop]),
                        last=stop >= len(tokens))


def document_chunks(doc: str, pieces: Iterable[Piece], text: str | None, path: Path,
                    max_tokens: int, done: float | None = None,
                    bounds: Span | None = None) -> Iterator[Chunk]:
    """The chunks of one document (``bounds``: its span in ``text``, the whole text by
    default); an empty document gives one empty chunk."""
    if bounds is None and text is not None:
        bounds = (0, len(text))
    def chunk(packed: list[Piece], first: bool) -> Chunk:
        progress = done
        if progress is None:  # raw text: how far into the text the chunk ends
            progress = packed[-1].spans[-1][1] / max(1, len(text))  # type: ignore[index,arg-type]
        return Chunk(doc, tuple(packed), text, first, path, progress, bounds)

    # the loop is here, not in a packer handed the pieces, so the packing calls no code above it
    packer: GreedyPacker[Piece] = GreedyPacker(max_tokens)
    first = True
    for piece in pieces:
        if (packed := packer.push(piece, len(piece))) is not None:
            yield chunk(packed, first)
            first = False
    if (packed := packer.flush()) is not None:
        yield chunk(packed, first)
    elif first:
        yield Chunk(doc, (), text, True, path, 1.0 if done is None else done, bounds)


def piece_offsets(piece: Piece, start: int, end: int) -> tuple[int | None, int | None]:
    """Character offsets of the piece's tokens ``start`` to ``end`` (exclusive)."""
    if piece.spans is None:
        return None, None
    return piece.spans[start][0], piece.spans[end - 1][1]


def chunk_entities(chunk: Chunk, tagging: Tagging) -> Iterator[Entity]:
    """The entities of a tagged chunk, numbered in their document's sentences, each with its
    text as it stands in the input (the tokens joined by spaces without text), its character
    span and its score: the one place where tags become entities. No entity spans a line break
    of raw text: one found across lines is cut at each break
    (:func:`~docgraph.data.tokenize.same_line_runs`), each part with its type and score."""
    for found in tagging.entities():
        piece = chunk.pieces[found.sentence]
        runs = [(0, found.end - found.start)] if piece.spans is None or chunk.text is None \
            else same_line_runs(chunk.text, piece.spans[found.start:found.end])
        for first, stop in runs:
            start, end = found.start + first, found.start + stop
            start_char, end_char = piece_offsets(piece, start, end)
            text = (" ".join(piece.tokens[start:end]) if start_char is None
                    else chunk.text[start_char:end_char])  # type: ignore[index]
            yield Entity(chunk.doc, piece.sentence, piece.first + start, piece.first + end,
                         found.type, text, start_char, end_char, found.score)


def chunk_document(chunk: Chunk) -> Document:
    """The chunk as the model reads it: a document whose sentences are its pieces."""
    return make_document(chunk.doc, [(p.tokens, ["O"] * len(p)) for p in chunk.pieces])


def input_chunks(item: DocumentInput | Chunk, doc_id: str, tokenized: bool, max_tokens: int
                 ) -> Iterator[Chunk]:
    """The chunks of one document: a raw string (its tokens keep their character spans;
    ``tokenized``: one sentence per line, tokens split on whitespace), token lists or a
    :class:`Document` (its own id; no spans), each sentence longer than ``max_tokens`` in
    pieces and the pieces packed into chunks of at most ``max_tokens`` tokens; a
    :class:`Chunk` an input adapter made (:mod:`docgraph.tagging.prediction_io`) is itself.
    An empty document gives one empty chunk."""
    if isinstance(item, Chunk):
        yield item
        return
    path = Path(doc_id)
    if isinstance(item, str):
        sentences = (([item[s:e] for s, e in spans], spans)
                     for spans in sentence_spans(item, 0, len(item), tokenized))
        yield from document_chunks(doc_id, sentence_pieces(sentences, max_tokens), item, path,
                                   max_tokens, done=1.0)
        return
    if isinstance(item, Document):
        doc_id, token_lists = item.doc_id, [s.tokens for s in item.sentences]
    else:
        token_lists = [list(s) for s in item]
    sentences = ((tokens, None) for tokens in token_lists)
    yield from document_chunks(doc_id, sentence_pieces(sentences, max_tokens), None, path,
                               max_tokens, done=1.0)


def chunk_documents(document: Document, max_tokens: int | None) -> list[Document]:
    """A labelled document as the model tags it, with its gold tags: the chunks of
    :func:`input_chunks` as documents whose sentences are their pieces (empty sentences left
    out), ids ``f"{doc_id}#{k}"`` when there are several; a document that fits is itself,
    without its empty sentences."""
    kept = make_document(document.doc_id, [(s.tokens, s.tags) for s in document.sentences
                                           if len(s)], document.source_scheme)
    if not max_tokens or kept.num_tokens <= max_tokens:
        return [kept]
    chunks = list(input_chunks(document, document.doc_id, False, max_tokens))
    tags = [s.tags for s in document.sentences]
    return [make_document(f"{document.doc_id}#{k}",
                          [(p.tokens, tags[p.sentence][p.first:p.first + len(p)])
                           for p in chunk.pieces], document.source_scheme)
            for k, chunk in enumerate(chunks)]


@dataclass(frozen=True)
class ChunkInspection:
    """What the tagging pass computed on the way for a chunk, its tokens numbered from 0 in
    reading order.

    Attributes:
        uncertainty: Monte-Carlo uncertainty :math:`u_i` per token (``None``: no pruning).
        pruned: Whether each token is in *Drop* (``None``: no pruning).
        edges: ``(source, target, weight)`` per graph edge, ``weight`` the relation score
            :math:`r_{ij}` (``None`` without edge weights); ``None`` for a model without a graph.
    """

    uncertainty: list[float] | None
    pruned: list[bool] | None
    edges: list[tuple[int, int, float | None]] | None


def tagged_documents(tagged: Iterable[tuple[Chunk, Tagging]
                                      | tuple[Chunk, Tagging, ChunkInspection]],
                     min_score: float | None = None) -> Iterator[TaggedDocument]:
    """The :class:`~docgraph.tagging.result.TaggedDocument` of every document of a stream of
    tagged chunks (its chunks consecutive, the first marked), its pieces joined back into
    sentences; ``min_score`` drops the entities scored below it. A chunk that comes with its
    inspection adds each token's uncertainty and pruning and the graph's edges."""
    current: list[tuple[Chunk, Tagging, ChunkInspection | None]] = []
    for chunk, tagging, *inspection in tagged:
        if chunk.first and current:
            yield _tagged_document(current)
            current = []
        current.append((chunk, tagging if min_score is None else tagging.above(min_score),
                        inspection[0] if inspection else None))
    if current:
        yield _tagged_document(current)


def _tagged_document(chunks: Sequence[tuple[Chunk, Tagging, ChunkInspection | None]]
                     ) -> TaggedDocument:
    """One document from its tagged chunks (and their inspections)."""
    first = chunks[0][0]
    sentences: list[tuple[int, list[str], list[Span] | None, list[str], list, list]] = []
    edges: list[GraphEdge] | None = [] if chunks[0][2] is not None else None
    for chunk, tagging, inspection in chunks:
        where: list[tuple[int, int]] = []  # (sentence, token) of each token of the chunk
        for piece, tags in zip(chunk.pieces, tagging.tags):
            if piece.first == 0:
                sentences.append((piece.sentence, [], None if piece.spans is None else [],
                                  [], [], []))
            _, tokens, spans, sent_tags, uncertainty, pruned = sentences[-1]
            flat = slice(len(where), len(where) + len(piece))
            where += [(piece.sentence, piece.first + k) for k in range(len(piece))]
            tokens.extend(piece.tokens)
            sent_tags.extend(tags)
            if spans is not None and piece.spans is not None:
                spans.extend(piece.spans)
            if inspection is not None and inspection.uncertainty is not None:
                uncertainty.extend(inspection.uncertainty[flat])
            if inspection is not None and inspection.pruned is not None:
                pruned.extend(inspection.pruned[flat])
        if inspection is None or inspection.edges is None:
            edges = None
        elif edges is not None:
            edges += [GraphEdge(where[j], where[i], w) for j, i, w in inspection.edges]
    entities = tuple(e for chunk, tagging, _ in chunks for e in chunk_entities(chunk, tagging))
    return TaggedDocument(
        first.doc, first.text,
        tuple(TaggedSentence(index, tuple(tokens), None if spans is None else tuple(spans),
                             tuple(tags), tuple(unc) if unc else None,
                             tuple(pruned) if pruned else None)
              for index, tokens, spans, tags, unc, pruned in sentences),
        entities, None if edges is None else tuple(edges))


