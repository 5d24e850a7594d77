"""What ``scripts/predict.py`` reads and writes, as a stream: input files become chunks of
tokens that keep their character offsets; tagged chunks become output records.

Reading (:func:`read_chunks`). A file is CoNLL columns, raw text, span JSON lines or a spaCy
DocBin (``--input-format``; auto: a DocBin when its name ends in ``.spacy``, span JSON lines
when its first line is a JSON object with a ``"text"`` field,
:func:`~docgraph.data.span_jsonl.looks_like_span_jsonl`, else CoNLL by
:func:`~docgraph.data.conll.looks_like_conll`, else text). The input :data:`STDIN` is
standard input (``predict.py -``), read whole once.

* Raw text is split into documents (``--documents``): the whole file (default), its
  paragraphs (separated by blank lines) or its lines. A document is split into sentences and
  tokens by :mod:`docgraph.data.tokenize` (or, with ``--tokenized``, one sentence per line and
  tokens separated by whitespace or control characters); every token keeps its span of the
  text. Control characters (a NUL byte, ...) are never part of a token.
* A CoNLL file's documents are its ``-DOCSTART-`` documents; its tokens have no offsets.
* A span JSON lines file (:mod:`docgraph.data.span_jsonl`) has a document per record, its
  ``"text"`` read as raw text and its id the record's; offsets point into that ``"text"``;
  the spans are not read.
* A spaCy DocBin (:mod:`docgraph.data.docbin`) has a document per ``Doc``, with spaCy's
  tokens and sentences as they are (``--tokenized`` does not apply); offsets point into the
  ``Doc``'s text; its entities are not read.

A document longer than ``max_tokens`` (``--max-doc-tokens``) is tagged in chunks of whole
sentences, packed greedily in order by the one packing rule
(:class:`docgraph.data.chunking.GreedyPacker`); a sentence longer than ``max_tokens`` (a text
without sentence punctuation) is tagged in pieces of ``max_tokens`` tokens, each a sentence of
its own for the model (:func:`~docgraph.data.chunking.piece_bounds`): the chunks of
:meth:`Tagger.chunks <docgraph.tagging.tagger.Tagger.chunks>`. A chunk is a document of its own
for the model: the graph and the cross-sentence windows never reach across chunks. Nothing
holds more than the text of one file (the documents of a CoNLL file) and the chunks being
tagged, so memory does not grow with the length of a document.

Writing (:func:`format_chunk`): the records of a tagged chunk in the output format, its
pieces joined back into their sentences. Offsets (``start_char``, ``end_char``) are indices of
Python strings -- Unicode code points -- into the file's text as read by
``open(path, encoding="utf-8-sig", newline="")``: line breaks as in the file (``\\r\\n`` is two
characters), a leading byte-order mark not counted; ``text[start_char:end_char]`` is the token
or entity. They are ``null`` for CoNLL input.

This module does not import torch.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

from tqdm import tqdm

from docgraph.config.tagging import DEFAULT_MAX_DOC_TOKENS, DOCUMENT_SPLITS, INPUT_FORMATS
from docgraph.data.conll import (
    conll_lines,
    decode_text,
    looks_like_conll,
    read_conll,
    read_text,
)
from docgraph.data.docbin import docbin_bytes, docbin_layouts, is_docbin, read_docbin
from docgraph.data.docbin import read_bytes as read_file_bytes
from docgraph.data.document import Document, make_document
from docgraph.data.span_jsonl import (
    looks_like_span_jsonl,
    read_span_jsonl,
    span_record,
    span_texts,
)
from docgraph.data.tags import from_spans
from docgraph.data.tokenize import (
    Span,
    is_blank,
    paragraph_spans,
)
from docgraph.tagging.chunks import (
    Chunk,
    chunk_document,
    chunk_entities,
    document_chunks,
    line_spans,
    piece_offsets,
    sentence_pieces,
    sentence_spans,
    tagged_documents,
)
from docgraph.tagging.result import Tagging, entity_records

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class OutputFormat:
    """A ``predict.py --format``: what it writes, and how.

    Attributes:
        help: What the output holds (``--help``).
        lines: The lines written for a tagged chunk (``None``: the output is written whole,
            once every document is tagged).
        document: For a format of whole documents: the lines of one tagged document (as a
            :class:`Document` of its tokens and predicted tags, and the text they are in;
            ``None`` without one), written once its last chunk is tagged (:class:`OutputWriter`).
        whole: For a binary format: the bytes of the whole output from every tagged
            document, written at the end (:class:`OutputWriter`).
    """

    help: str
    lines: Callable[[Chunk, Tagging], Iterable[str]] | None
    document: Callable[[Document, str | None], Iterable[str]] | None = None
    whole: Callable[[Sequence[tuple[Document, str | None]]], bytes] | None = None


def _json_lines(records: Callable[[Chunk, Tagging], Iterable[dict]]
                ) -> Callable[[Chunk, Tagging], Iterable[str]]:
    return lambda chunk, tagging: (json.dumps(r) for r in records(chunk, tagging))



@dataclass(frozen=True)
class ReadOptions:
    """How :func:`read_chunks` reads an input file.

    Args:
        input_format: ``"auto"``, ``"conll"``, ``"text"``, ``"jsonl"`` or ``"spacy"``.
        tokenized: Raw text is one sentence per line, tokens separated by whitespace.
        documents: A document of raw text is the whole ``"file"``, each of its
            ``"paragraphs"`` (blank lines between them) or each non-blank ``"lines"``.
        max_tokens: The most tokens the model sees as one document (chunks) and as one
            sentence (pieces).
    """

    input_format: str = "auto"
    tokenized: bool = False
    documents: str = "file"
    max_tokens: int = DEFAULT_MAX_DOC_TOKENS

    def __post_init__(self) -> None:
        if self.input_format not in INPUT_FORMATS:
            raise ValueError(f"input_format must be {', '.join(INPUT_FORMATS[:-1])} or "
                             f"{INPUT_FORMATS[-1]}, got {self.input_format!r}")
        if self.documents not in DOCUMENT_SPLITS:
            raise ValueError(f"documents must be one of {', '.join(DOCUMENT_SPLITS)}, got "
                             f"{self.documents!r}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")


def read_chunks(path: Path, options: ReadOptions, data: bytes | None = None
                ) -> Iterator[Chunk]:
    """The chunks of one input file, lazily (see the module docstring); ``data``: its bytes,
    when already read (``path`` then only names it); :data:`STDIN` reads standard input.

    A file without tokens is logged (``PATH: no tokens, nothing to tag``); read as one
    document (``documents="file"``, or a CoNLL file) it still gives one empty chunk, which
    CoNLL output writes as an empty document.

    Raises:
        DataNotFoundError: The file does not exist.
        CorpusFormatError: The file is a directory, is not UTF-8, or is not a valid CoNLL,
            span JSON lines or DocBin file when read as one.
        SpacyMissingError: A DocBin without spaCy installed.
    """
    text, kind, data = _read_input(path, options, data)
    chunks = (_conll_chunks(path, options.max_tokens, text) if kind == "conll"
              else _jsonl_chunks(text, path, options) if kind == "jsonl"
              else _docbin_chunks(path, data, options) if kind == "spacy"
              else _text_chunks(text, path, options))
    tokens = 0
    for chunk in chunks:
        tokens += chunk.num_tokens
        yield chunk
    if tokens == 0:
        log.warning("%s: no tokens, nothing to tag", path)


def read_documents(path: Path, options: ReadOptions, data: bytes | None = None,
                   labelled: bool = False) -> list[Document]:
    """The documents of one input file, whole: those of :func:`read_chunks` (the same
    documents, ids, sentences and tokens) before they are cut to size, a CoNLL file's gold
    tags kept; what ``predict.py --format html`` shows. A file without tokens is logged.
    ``data``: as for :func:`read_chunks`. ``labelled``: a span JSON lines file's spans and a
    DocBin's entities are read as gold tags too
    (:func:`~docgraph.data.span_jsonl.read_span_jsonl`, :func:`~docgraph.data.docbin.read_docbin`;
    what ``visualize.py --data`` shows).

    Raises:
        DataNotFoundError: The file does not exist.
        CorpusFormatError: The file is a directory, is not UTF-8, or is not a valid CoNLL,
            span JSON lines or DocBin file when read as one.
        SpacyMissingError: A DocBin without spaCy installed.
    """
    text, kind, data = _read_input(path, options, data)
    if kind == "conll":
        documents = read_conll(path, text=text)
    elif labelled and kind in ("spacy", "jsonl"):
        documents = read_docbin(path) if kind == "spacy" else read_span_jsonl(path)
    elif kind == "spacy":
        documents = [make_document(layout.doc_id,
                                   [([layout.text[a:b] for a, b in spans], ["O"] * len(spans))
                                    for spans in layout.sentences])
                     for layout in docbin_layouts(path, data)]
    elif kind == "jsonl":
        documents = [_o_document(doc, body, 0, len(body), options.tokenized)
                     for doc, body in span_texts(path, text)]
    else:
        documents = [_o_document(_doc_id(path, options.documents, n), text, start, end,
                                 options.tokenized)
                     for n, (start, end) in enumerate(_document_spans(text, options.documents))]
    if not any(d.num_tokens for d in documents):
        log.warning("%s: no tokens, nothing to tag", path)
    return documents


STDIN = Path("<stdin>")
"""The input that stands for standard input (``predict.py -``): the readers read its bytes
(once), and its documents are named ``<stdin>`` (``<stdin>-N``)."""


def _read_input(path: Path, options: ReadOptions, data: bytes | None
                ) -> tuple[str, str, bytes | None]:
    """The text of an input file (``""`` for a DocBin), how to read it (``"conll"``,
    ``"text"``, ``"jsonl"`` or ``"spacy"``) and its bytes (read for a DocBin only)."""
    if data is None and path == STDIN:
        data = sys.stdin.buffer.read()
    kind = options.input_format
    if kind == "spacy" or (kind == "auto" and is_docbin(path)):
        return "", "spacy", read_file_bytes(path) if data is None else data
    text = read_text(path) if data is None else decode_text(data, path)
    if kind == "auto":
        kind = ("jsonl" if looks_like_span_jsonl(text) else "conll" if looks_like_conll(text)
                else "text")
    return text, kind, None


def _doc_id(path: Path, documents: str, n: int) -> str:
    """The id of the ``n``-th document of a raw-text file."""
    return path.stem if documents == "file" else f"{path.stem}-{n}"


def _document_spans(text: str, documents: str) -> Iterator[Span]:
    """The documents of a raw text as spans: the whole text, its paragraphs or its lines."""
    if documents == "file":
        yield 0, len(text)
    elif documents == "paragraphs":
        yield from paragraph_spans(text)
    else:
        for line in line_spans(text):
            if not is_blank(text, *line):
                yield line


def _text_chunks(text: str, path: Path, options: ReadOptions) -> Iterator[Chunk]:
    """The chunks of a raw-text file."""
    for n, (start, end) in enumerate(_document_spans(text, options.documents)):
        doc = _doc_id(path, options.documents, n)
        sentences = (([text[s:e] for s, e in spans], spans)
                     for spans in sentence_spans(text, start, end, options.tokenized))
        yield from document_chunks(doc, sentence_pieces(sentences, options.max_tokens), text, path,
                                    options.max_tokens, bounds=(start, end))


def _o_document(doc: str, text: str, start: int, end: int, tokenized: bool) -> Document:
    """The document of ``text[start:end]``, its tokens tagged ``O``."""
    return make_document(doc, [([text[s:e] for s, e in spans], ["O"] * len(spans))
                               for spans in sentence_spans(text, start, end, tokenized)])


def _jsonl_chunks(text: str, path: Path, options: ReadOptions) -> Iterator[Chunk]:
    """The chunks of a span JSON lines file: a document per record, offsets into its text."""
    records = list(span_texts(path, text))
    for n, (doc, body) in enumerate(records):
        sentences = (([body[s:e] for s, e in spans], spans)
                     for spans in sentence_spans(body, 0, len(body), options.tokenized))
        yield from document_chunks(doc, sentence_pieces(sentences, options.max_tokens), body, path,
                                    options.max_tokens, done=(n + 1) / len(records))


def _docbin_chunks(path: Path, data: bytes | None, options: ReadOptions) -> Iterator[Chunk]:
    """The chunks of a spaCy DocBin: a document per ``Doc``, its tokens and sentences as they
    are, offsets into its text."""
    layouts = list(docbin_layouts(path, data))
    for n, layout in enumerate(layouts):
        sentences = (([layout.text[a:b] for a, b in spans], spans) for spans in layout.sentences)
        yield from document_chunks(layout.doc_id, sentence_pieces(sentences, options.max_tokens),
                                    layout.text, path, options.max_tokens,
                                    done=(n + 1) / len(layouts))


def _conll_chunks(path: Path, max_tokens: int, text: str | None = None) -> Iterator[Chunk]:
    """The chunks of a CoNLL file (its ``-DOCSTART-`` documents, gold tags ignored)."""
    documents = read_conll(path, text=text)
    for n, document in enumerate(documents):
        sentences = ((s.tokens, None) for s in document.sentences if len(s))
        yield from document_chunks(document.doc_id, sentence_pieces(sentences, max_tokens), None,
                                    path, max_tokens, done=(n + 1) / len(documents))


# ------------------------------------------------------------------------------- output
def _entity_records(chunk: Chunk, tagging: Tagging) -> list[dict]:
    """The records of a tagged chunk's entities (:func:`~docgraph.tagging.result.entity_records`
    of :func:`~docgraph.tagging.chunks.chunk_entities`)."""
    return entity_records(chunk_entities(chunk, tagging))


def token_records(chunk: Chunk, tagging: Tagging) -> Iterator[dict]:
    """One record per token: ``doc``, ``sentence``, ``token`` (its index in the sentence),
    ``text``, ``start_char``, ``end_char`` and its IOB2 ``tag``."""
    for piece, piece_tags in zip(chunk.pieces, tagging.tags):
        for i, (token, tag) in enumerate(zip(piece.tokens, piece_tags)):
            start_char, end_char = piece_offsets(piece, i, i + 1)
            yield {"doc": chunk.doc, "sentence": piece.sentence, "token": piece.first + i,
                   "text": token, "start_char": start_char, "end_char": end_char, "tag": tag}


def conll_chunk_lines(chunk: Chunk, tagging: Tagging) -> Iterator[str]:
    """CoNLL lines (``word tag``, :func:`~docgraph.data.conll.conll_lines`): ``-DOCSTART- O``
    before a document's first chunk, a blank line after each sentence."""
    return conll_lines((((piece.tokens, piece_tags), piece.last)
                        for piece, piece_tags in zip(chunk.pieces, tagging.tags)),
                       docstart=2 if chunk.first else None)


def span_lines(document: Document, text: str | None) -> Iterator[str]:
    """The span JSON line of a tagged document, ``{"id", "text", "spans": [[start, end,
    type], ...]}`` (:func:`~docgraph.data.span_jsonl.span_record`), which
    :func:`~docgraph.data.span_jsonl.read_span_jsonl` reads back to its entities."""
    yield json.dumps(span_record(document, text, as_lists=True))


def docbin_output(documents: Sequence[tuple[Document, str | None]]) -> bytes:
    """The tagged documents as a spaCy DocBin (:func:`~docgraph.data.docbin.docbin_bytes`),
    which :func:`~docgraph.data.docbin.read_docbin` reads back to their tokens and entities."""
    return docbin_bytes([d for d, _ in documents], texts=[t for _, t in documents])


OUTPUT_FORMATS: dict[str, OutputFormat] = {
    "jsonl": OutputFormat("JSON lines of entities (with start_char, end_char offsets into the "
                          "input text; docs/predict.md)", _json_lines(_entity_records)),
    "jsonl-tokens": OutputFormat("JSON lines of tokens, with their offsets and IOB2 tags",
                                 _json_lines(token_records)),
    "conll": OutputFormat("CoNLL columns (word, predicted tag)", conll_chunk_lines),
    "spans": OutputFormat("span JSON lines, a document per line (id, text, spans [start, end, "
                          "type]) as annotation tools read them and train.py reads back",
                          None, document=span_lines),
    "spacy": OutputFormat("a spaCy DocBin (--output FILE.spacy), the entities as doc.ents",
                          None, whole=docbin_output),
    "html": OutputFormat("an interactive HTML page of the documents and their graphs", None),
}
"""The output formats of ``predict.py``, the first the default; ``jsonl``, ``jsonl-tokens``
and ``conll`` are streamed chunk by chunk (:func:`format_chunk`), ``spans`` document by
document and ``spacy`` written at the end (:class:`OutputWriter`), ``html`` built whole."""

FORMATS = tuple(name for name, fmt in OUTPUT_FORMATS.items() if fmt.lines is not None)
"""The streamed output formats."""


def format_chunk(output_format: str, chunk: Chunk, tagging: Tagging | Sequence[Sequence[str]]
                 ) -> str:
    """The text written for a tagged chunk (its :class:`~docgraph.tagging.result.Tagging`, or
    its tags alone: one list per piece), every line ending in ``\\n``; ``output_format`` is
    one of :data:`FORMATS`."""
    fmt = OUTPUT_FORMATS.get(output_format)
    if fmt is None or fmt.lines is None:
        raise ValueError(f"output_format must be one of {', '.join(FORMATS)}, got "
                         f"{output_format!r}")
    if not isinstance(tagging, Tagging):
        tagging = Tagging([list(t) for t in tagging])
    return "".join(f"{line}\n" for line in fmt.lines(chunk, tagging))


class OutputWriter:
    """The output of a stream of tagged chunks in one format of :data:`OUTPUT_FORMATS` (not
    ``html``), in order: :meth:`write` gives what a chunk adds (its lines; for a format of
    whole documents, a document's lines once the first chunk of the next one comes),
    :meth:`close` the rest; a binary format (:attr:`binary`) gives all of its bytes at
    :meth:`close`.

    Raises:
        ValueError: For ``html`` or an unknown format.
    """

    def __init__(self, output_format: str) -> None:
        fmt = OUTPUT_FORMATS.get(output_format)
        if fmt is None or (fmt.lines is None and fmt.document is None and fmt.whole is None):
            names = [n for n, f in OUTPUT_FORMATS.items()
                     if f.lines is not None or f.document is not None or f.whole is not None]
            raise ValueError(f"output_format must be one of {', '.join(names)}, got "
                             f"{output_format!r}")
        self.output_format = output_format
        self.format = fmt
        self.binary = fmt.whole is not None
        self._current: list[tuple[Chunk, Tagging]] = []
        self._documents: list[tuple[Document, str | None]] = []

    def write(self, chunk: Chunk, tagging: Tagging) -> str | bytes:
        """What the tagged chunk adds to the output (``b""`` for a binary format)."""
        if self.format.lines is not None:
            return format_chunk(self.output_format, chunk, tagging)
        out = self._finish() if chunk.first and self._current else self._empty()
        self._current.append((chunk, tagging))
        return out

    def close(self) -> str | bytes:
        """The rest of the output: the last document's lines, or the whole binary file."""
        out = self._finish() if self._current else self._empty()
        if self.format.whole is not None:
            return self.format.whole(self._documents)
        return out

    def _empty(self) -> str | bytes:
        return b"" if self.binary else ""

    def _finish(self) -> str | bytes:
        """Take the chunks of the current document out; its lines (kept, for a binary
        format)."""
        document = written_document(self._current)
        self._current = []
        if self.format.document is None:
            self._documents.append(document)
            return self._empty()
        return "".join(f"{line}\n" for line in self.format.document(*document))


def written_document(chunks: Sequence[tuple[Chunk, Tagging]]) -> tuple[Document, str | None]:
    """The tagged chunks of one document as the annotation formats write it: a
    :class:`Document` of its sentences, with the predicted entities (those of
    :func:`chunk_entities`) as IOB2 tags, and its text (the document's part of the input
    text, from the first character of the file or record for a whole one; ``None`` for CoNLL
    input)."""
    tagged = next(tagged_documents(chunks))
    position = {sentence.index: k for k, sentence in enumerate(tagged.sentences)}
    found: list[list[tuple[str, int, int]]] = [[] for _ in tagged.sentences]
    for entity in tagged.entities:
        found[position[entity.sentence]].append((entity.type, entity.start, entity.end))
    document = make_document(tagged.doc, [
        (sentence.tokens, from_spans(entities, len(sentence.tokens)))
        for sentence, entities in zip(tagged.sentences, found)])
    first = chunks[0][0]
    if first.text is None:
        return document, None
    start, end = first.bounds if first.bounds is not None else (0, len(first.text))
    return document, first.text[start:end]


def _bar_size() -> dict:
    """tqdm's size: the terminal's, followed as it changes; a terminal that reports no size
    (``script -c`` from a non-terminal), where tqdm would draw nothing, gets
    :func:`shutil.get_terminal_size`'s (80 x 24 by default)."""
    try:
        if os.get_terminal_size(sys.stderr.fileno()).columns > 0:
            return {"dynamic_ncols": True}
    except (OSError, ValueError):
        pass
    size = shutil.get_terminal_size()
    return {"ncols": size.columns, "nrows": size.lines}


class ProgressReport:
    """Progress of ``predict.py`` over its input files: a tqdm bar (bytes, tokens/s, ETA) when
    stderr is a terminal, else a line on stderr every ``interval`` seconds; nothing when
    disabled.

    Args:
        paths: The input files (their sizes are the total).
        enabled: Show anything at all.
        tty: Draw a bar (default: whether stderr is a terminal).
        interval: Seconds between two lines when not drawing a bar.
        stream: Where lines go (default: stderr).
    """

    def __init__(self, paths: Sequence[Path], enabled: bool = True, tty: bool | None = None,
                 interval: float = 30.0, stream: TextIO | None = None) -> None:
        self.sizes = {p: p.stat().st_size if p.is_file() else 0 for p in paths}
        self.total = sum(self.sizes.values())
        self.enabled = enabled
        self.interval = interval
        self.stream = stream
        self.tokens = 0
        self.done = 0.0
        self._finished = 0  # bytes of the files already read to their end
        self._current: Path | None = None
        self._start = self._last = time.monotonic()
        self._bar = None
        tty = (sys.stderr.isatty() and os.environ.get("TERM") != "dumb") if tty is None else tty
        if enabled and tty:
            self._bar = tqdm(total=self.total, unit="B", unit_scale=True, desc="predict",
                             leave=False, **_bar_size())

    def update(self, chunk: Chunk) -> None:
        """Count a tagged chunk."""
        if chunk.path != self._current:
            if self._current is not None:
                self._finished += self.sizes.get(self._current, 0)
            self._current = chunk.path
        self.tokens += chunk.num_tokens
        done = self._finished + chunk.done * self.sizes.get(chunk.path, 0)
        rate = self.tokens / max(1e-9, time.monotonic() - self._start)
        if self._bar is not None:
            self._bar.update(done - self.done)
            self._bar.set_postfix_str(f"{self.tokens:,} tokens, {rate:,.0f} tok/s",
                                      refresh=False)
        elif self.enabled and time.monotonic() - self._last >= self.interval:
            self._last = time.monotonic()
            share = done / self.total if self.total else 1.0
            print(f"predict: {done / 1e6:.1f} of {self.total / 1e6:.1f} MB ({share:.0%}), "
                  f"{self.tokens:,} tokens, {rate:,.0f} tokens/s",
                  file=self.stream or sys.stderr, flush=True)
        self.done = done

    def close(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.close()


class ChunkTagger(Protocol):
    """What :func:`write_predictions` needs of a tagger (a
    :class:`~docgraph.tagging.tagger.Tagger`)."""

    def tag_chunks(self, chunks: Iterable[Chunk], document: Callable[[Chunk], Document],
                   processes: int = 0, mc_seed: int = 0, scores: bool = False
                   ) -> Iterator[tuple[Chunk, Tagging]]: ...


def _write(out: TextIO, data: str | bytes) -> None:
    """Write text, or bytes to the binary buffer under ``out``."""
    if isinstance(data, bytes):
        if data:
            out.flush()
            out.buffer.write(data)
    else:
        out.write(data)


def write_predictions(tagger: ChunkTagger, paths: Sequence[Path], options: ReadOptions,
                      output_format: str, out: TextIO, processes: int = 0, mc_seed: int = 0,
                      scores: bool = False, min_score: float | None = None,
                      progress: ProgressReport | None = None) -> None:
    """Tag the input files chunk by chunk and write each chunk's records to ``out`` as soon as
    it is tagged: the loop of ``predict.py`` for every format but ``html``
    (:class:`OutputWriter`; a binary format's bytes go to ``out.buffer`` at the end).

    Args:
        tagger: The model.
        paths: The input files, read lazily (:func:`read_chunks`).
        options: How to read them.
        output_format: A format of :data:`OUTPUT_FORMATS` but ``html``.
        out: Where the records go.
        processes: CPU processes (``0``: automatic).
        mc_seed: The tagging seed of the Monte-Carlo masks.
        scores: Score every entity (a ``score`` in JSON lines).
        min_score: Keep only the entities scored at least this (implies ``scores``).
        progress: Counts every tagged chunk (closed at the end).

    Raises:
        ValueError: ``output_format`` is ``html`` or unknown.
    """
    writer = OutputWriter(output_format)
    scores = scores or min_score is not None
    chunks = (chunk for path in paths for chunk in read_chunks(path, options))
    # closed on the way out: an error or Ctrl-C ends the tagging processes at once
    tagged = contextlib.closing(tagger.tag_chunks(chunks, chunk_document, processes, mc_seed,
                                                  scores))
    try:
        with tagged as pairs:
            for chunk, tagging in pairs:
                if min_score is not None:
                    tagging = tagging.above(min_score)
                _write(out, writer.write(chunk, tagging))
                if progress is not None:
                    progress.update(chunk)
        _write(out, writer.close())
    finally:
        if progress is not None:
            progress.close()
