"""Reader and writer of JSON lines with character spans: the exports of annotation tools
(doccano, Prodigy, Label Studio).

One JSON object per line, blank lines skipped::

    {"id": 7, "text": "Acme hired Ana Ruiz.", "label": [[0, 4, "ORG"], [11, 19, "PER"]]}
    {"text": "...", "entities": [{"start_offset": 0, "end_offset": 4, "label": "ORG"}]}
    {"text": "...", "spans": [{"start": 0, "end": 4, "label": "ORG"}], "meta": {"id": "a1"}}

* ``text`` (a string) is required. The entities are under the first of ``spans``,
  ``entities`` or ``label`` that the record has (none: a text without entities).
* A span is a list ``[start, end, type]`` (doccano's ``label``) or an object with ``start``
  and ``end`` (Prodigy, Label Studio) or ``start_offset`` and ``end_offset`` (doccano's
  ``entities``), and ``label`` (or ``labels``, a list of one type, as Label Studio's JSON-MIN
  export writes it). Other keys are ignored.
* Offsets are Python string indices -- Unicode code points -- into ``text``, ``end``
  exclusive; doccano and Prodigy count so. Label Studio counts UTF-16 code units: in a text
  with characters outside the Basic Multilingual Plane (most emoji) its offsets are off, and
  the alignment check below says so.
* The document id is the record's ``id`` or ``doc_id``, else its ``meta``'s ``id`` or
  ``doc_id`` (a string or an integer), else ``f"{path.stem}-{line_no}"`` (``line_no``:
  the 1-based line number in the file).

The text is split into sentences and tokens by :mod:`docgraph.data.tokenize` (the rules
``predict.py`` reads raw text with), and every span becomes IOB2 tags of the tokens it covers.

Alignment policy:

* Whitespace and control characters at either end of a span are trimmed silently
  (``[3, 9, "ORG"]`` over ``" Acme "`` is the span of ``Acme``).
* Every other mismatch is a :class:`~docgraph.data.errors.CorpusFormatError` naming the file,
  the line and the span, e.g. ``data.jsonl:3: span [12, 17, 'ORG'] ('Canad') does not end on
  a token boundary (token 'Canadian' ends at 20)``: a span whose (trimmed) start is not the
  start of a token or whose end is not the end of one; an empty span, one of only whitespace
  or one outside the text; spans that overlap; a span of another shape, with offsets that are
  not integers or a type that is not a non-empty string without whitespace; a line that is
  not a JSON object, or an object without a string ``text``; a file without any token; a
  line of ``predict.py --format jsonl`` (an entity record, not a document).
* A span that crosses a sentence boundary of the splitter joins the sentences it touches
  into one: the annotation wins over the sentence splitter.
* A record whose text has no token gives no document.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from docgraph.data.conll import read_text
from docgraph.data.document import Document, make_document
from docgraph.data.errors import format_error
from docgraph.data.tags import SCHEMES, from_spans, validate_tag
from docgraph.data.tags import spans as tag_spans
from docgraph.data.tokenize import CONTROL_CHARACTERS, Span, text_to_sentence_spans, tokenize
from docgraph.runtime.atomic import atomic_write_text

SPAN_KEYS = ("spans", "entities", "label")
"""The keys a record's spans may be under, the first present taken."""

ID_KEYS = ("id", "doc_id")
"""The keys of a document's id (a record's, else its ``meta``'s; a DocBin Doc's
``user_data``)."""


def is_document_id(value: object) -> bool:
    """Whether ``value`` can be a document's id: a non-empty string or an integer."""
    return not isinstance(value, bool) and isinstance(value, (str, int)) and value != ""

# The keys of a line of predict.py --format jsonl: an entity, not a document to train on.
_ENTITY_RECORD_KEYS = frozenset({"doc", "sentence", "start", "end", "type", "text",
                                 "start_char", "end_char"})

_SEPARATOR_RE = re.compile(rf"[\s{CONTROL_CHARACTERS}]")


@dataclass(frozen=True)
class _Entity:
    """One span of a record: its offsets as written, trimmed, and its type."""

    start: int
    end: int
    label: str
    first: int
    stop: int

    def describe(self, text: str) -> str:
        """``[start, end, 'TYPE'] ('covered text')`` for an error message."""
        covered = text[self.start:self.end]
        shown = covered if len(covered) <= 40 else covered[:40] + "..."
        return f"span [{self.start}, {self.end}, {self.label!r}] ({shown!r})"


def looks_like_span_jsonl(text_head: str) -> bool:
    """Whether the first non-blank line of ``text_head`` is a JSON object with a ``"text"``
    key (the line must be whole). Reads no further than that line."""
    start = 0
    while start <= len(text_head):
        end = text_head.find("\n", start)
        end = len(text_head) if end < 0 else end
        line = text_head[start:end].strip()
        if line:
            if not line.startswith("{"):
                return False
            try:
                record = json.loads(line)
            except ValueError:
                return False
            return isinstance(record, dict) and "text" in record
        start = end + 1
    return False


def span_texts(path: str | Path, text: str | None = None) -> Iterator[tuple[str, str]]:
    """``(doc_id, text)`` of every record of a span JSONL file, in order; the spans are not
    read. ``text``: the file's content, when already read.

    Raises:
        CorpusFormatError: A line is not a JSON object with a string ``text``, or an id is
            neither a string nor an integer.
    """
    path = Path(path)
    for line_no, record in _records(path, read_text(path) if text is None else text):
        yield _record_id(path, line_no, record), record["text"]


def read_span_jsonl(path: str | Path, scheme: str = "iob2") -> list[Document]:
    """Read a span JSONL file into documents with IOB2 tags, by the rules of the module
    docstring.

    Args:
        path: The file.
        scheme: The documents' ``source_scheme``: the scheme their tags are written back in as
            CoNLL (``"iob1"``, ``"iob2"``, ``"bioes"``, any case); the tags are IOB2.

    Returns:
        One document per record with a token, in file order.

    Raises:
        DataNotFoundError: The file does not exist.
        CorpusFormatError: For a malformed line or a span that breaks the alignment policy,
            naming the file, the line and the span; for a file without any token.
        ValueError: For an unknown ``scheme``.
    """
    path = Path(path)
    scheme = scheme.lower()
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}: expected one of {', '.join(SCHEMES)}")
    documents = []
    for line_no, record in _records(path, read_text(path)):
        if record.keys() >= _ENTITY_RECORD_KEYS and not any(k in record for k in SPAN_KEYS):
            raise format_error(path, line_no, "expected a document with its spans, got an entity "
                                              "record of predict.py --format jsonl (one entity "
                                              "a line); predict.py --format spans writes "
                                              "documents")
        text = record["text"]
        sentences = [list(spans) for spans in text_to_sentence_spans(text)]
        entities = _entities(path, line_no, record, text)
        if sentences:
            documents.append(make_document(_record_id(path, line_no, record),
                                           _tagged(path, line_no, text, sentences, entities),
                                           source_scheme=scheme))
        elif entities:
            raise format_error(path, line_no, f"{entities[0].describe(text)} is in a text "
                                              "without tokens")
    if not documents:
        raise format_error(path, 1, 'expected JSON lines with a "text" field: the file has '
                                    "no tokens")
    return documents


def _records(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_no, record)`` of every non-blank line, checked to be an object with a string
    ``text``."""
    for line_no, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as err:
            raise format_error(path, line_no, "expected a JSON object with a \"text\" field, "
                                              f"got invalid JSON ({err})") from None
        if not isinstance(record, dict):
            raise format_error(path, line_no, "expected a JSON object with a \"text\" field "
                                              f"on every line, got a JSON {_kind(record)}")
        if not isinstance(record.get("text"), str):
            what = "no \"text\" field" if "text" not in record else \
                f"a \"text\" that is a JSON {_kind(record['text'])}"
            raise format_error(path, line_no, f"expected a JSON object with a string \"text\" "
                                              f"field, got {what}")
        yield line_no, record


def _kind(value: object) -> str:
    """The JSON name of a value's type."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _record_id(path: Path, line_no: int, record: dict[str, Any]) -> str:
    """A record's document id: its ``id``/``doc_id`` (or its ``meta``'s), else
    ``f"{path.stem}-{line_no}"``."""
    meta = record.get("meta")
    for source in (record, meta if isinstance(meta, dict) else {}):
        for key in ID_KEYS:
            value = source.get(key)
            if value is None:
                continue
            if not is_document_id(value):
                raise format_error(path, line_no, f"expected {key!r} to be a non-empty string "
                                                  f"or an integer, got {value!r}")
            return str(value)
    return f"{path.stem}-{line_no}"


def _entities(path: Path, line_no: int, record: dict[str, Any], text: str) -> list[_Entity]:
    """The record's spans, parsed, trimmed, checked and sorted by start."""
    key = next((k for k in SPAN_KEYS if k in record), None)
    raw = [] if key is None else record[key]
    if not isinstance(raw, list):
        raise format_error(path, line_no, f"expected {key!r} to be a list of spans, got a "
                                          f"JSON {_kind(raw)}")
    entities = sorted((_entity(path, line_no, span, text) for span in raw),
                      key=lambda e: (e.first, e.stop))
    for before, after in itertools.pairwise(entities):
        if after.first < before.stop:
            raise format_error(path, line_no, f"{after.describe(text)} overlaps "
                                              f"{before.describe(text)}")
    return entities


def _entity(path: Path, line_no: int, span: object, text: str) -> _Entity:
    """One span, checked to be well-formed and inside the text, with its ends trimmed."""
    start = end = label = None
    if isinstance(span, list) and len(span) == 3:
        start, end, label = span
    elif isinstance(span, dict):
        start = span.get("start", span.get("start_offset"))
        end = span.get("end", span.get("end_offset"))
        label = span.get("label")
        labels = span.get("labels")
        if label is None and isinstance(labels, list) and len(labels) == 1:
            label = labels[0]
    shown = json.dumps(span, ensure_ascii=False)
    shown = shown if len(shown) <= 80 else shown[:80] + "..."
    if start is None or end is None or label is None:
        raise format_error(path, line_no, f"span {shown}: expected [start, end, type] or an "
                                          "object with start, end (or start_offset, "
                                          "end_offset) and label")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        raise format_error(path, line_no, f"span {shown}: expected integer offsets")
    if not isinstance(label, str) or not label:
        raise format_error(path, line_no, f"span {shown}: expected a non-empty string type")
    try:
        validate_tag(f"B-{label}")
    except ValueError:
        raise format_error(path, line_no, f"span {shown}: expected a type without "
                                          "whitespace") from None
    entity = _Entity(start, end, label, start, end)
    if not 0 <= start < end <= len(text):
        what = "is empty" if 0 <= start == end <= len(text) else \
            f"is outside the text (offsets 0 to {len(text)})"
        raise format_error(path, line_no, f"{entity.describe(text)} {what}")
    first, stop = start, end
    while first < stop and _SEPARATOR_RE.match(text[first]):
        first += 1
    while stop > first and _SEPARATOR_RE.match(text[stop - 1]):
        stop -= 1
    if first == stop:
        raise format_error(path, line_no, f"{entity.describe(text)} covers only whitespace")
    return _Entity(start, end, label, first, stop)


def _containing(tokens: Sequence[Span], position: int) -> Span:
    """The token that holds the character ``position`` (the nearest one when none does)."""
    return min(tokens, key=lambda t: 0 if t[0] <= position < t[1]
               else min(abs(t[0] - position), abs(t[1] - 1 - position)))


def _tagged(path: Path, line_no: int, text: str, sentences: list[list[Span]],
            entities: Sequence[_Entity]) -> list[tuple[list[str], list[str]]]:
    """``(tokens, iob2_tags)`` of every sentence, the sentences a span crosses joined."""
    starts: dict[int, tuple[int, int]] = {}
    ends: dict[int, tuple[int, int]] = {}
    for s, spans in enumerate(sentences):
        for t, (a, b) in enumerate(spans):
            starts[a] = (s, t)
            ends[b] = (s, t)
    tokens = [span for spans in sentences for span in spans]
    joined = [False] * len(sentences)  # joined[s]: sentence s continues sentence s - 1
    located = []
    for entity in entities:
        if entity.first not in starts:
            a, b = _containing(tokens, entity.first)
            raise format_error(path, line_no, f"{entity.describe(text)} does not start on a "
                                              f"token boundary (token {text[a:b]!r} starts at "
                                              f"{a})")
        if entity.stop not in ends:
            a, b = _containing(tokens, entity.stop - 1)
            raise format_error(path, line_no, f"{entity.describe(text)} does not end on a "
                                              f"token boundary (token {text[a:b]!r} ends at "
                                              f"{b})")
        (s0, t0), (s1, t1) = starts[entity.first], ends[entity.stop]
        for s in range(s0 + 1, s1 + 1):
            joined[s] = True
        located.append((entity.label, s0, t0, s1, t1))
    groups: list[list[int]] = []
    for s in range(len(sentences)):
        if joined[s]:
            groups[-1].append(s)
        else:
            groups.append([s])
    group_of = {s: g for g, members in enumerate(groups) for s in members}
    offset = {}  # index of a sentence's first token in its group
    for members in groups:
        count = 0
        for s in members:
            offset[s] = count
            count += len(sentences[s])
    found: list[list[tuple[str, int, int]]] = [[] for _ in groups]
    for label, s0, t0, s1, t1 in located:
        found[group_of[s0]].append((label, offset[s0] + t0, offset[s1] + t1 + 1))
    result = []
    for members, group_entities in zip(groups, found):
        spans = [span for s in members for span in sentences[s]]
        result.append(([text[a:b] for a, b in spans], from_spans(group_entities, len(spans))))
    return result


# ------------------------------------------------------------------------------- writing
_CLITICS = frozenset(f"{a}{c}" for a in "'’" for c in ("s", "m", "d", "ll", "re", "ve")) | {
    "n't", "n’t"}


def _joined(tokens: Sequence[str]) -> str:
    """Tokens as text that the tokenizer splits back into them where it can: joined by
    spaces, a clitic (``'s``, ``n't``, any case) glued to the word before it when the
    tokenizer splits the two apart again (``Smith 's`` -> ``Smith's``)."""
    text = ""
    for i, token in enumerate(tokens):
        glue = (i > 0 and token.lower() in _CLITICS
                and tokenize(tokens[i - 1] + token) == [tokens[i - 1], token])
        text += token if glue or i == 0 else f" {token}"
    return text


def joined_text(document: Document) -> str:
    """A text for a document read without one (a CoNLL file): its tokens joined by spaces,
    a clitic glued to the word before where the tokenizer splits the two again, sentences
    separated by blank lines."""
    return "\n\n".join(_joined(s.tokens) for s in document.sentences)


def token_offsets(document: Document, text: str) -> list[list[Span]]:
    """The span of every token of ``document`` in ``text``, found in order: ``[s][t]`` for
    token ``t`` of sentence ``s``.

    Raises:
        ValueError: A token is not in ``text`` after the one before it.
    """
    position = 0
    offsets = []
    for sentence in document.sentences:
        spans = []
        for token in sentence.tokens:
            start = text.find(token, position)
            if start < 0:
                raise ValueError(f"document {document.doc_id!r}: token {token!r} is not in its "
                                 f"text after offset {position}")
            position = start + len(token)
            spans.append((start, position))
        offsets.append(spans)
    return offsets


def span_record(document: Document, text: str | None = None,
                tags: Sequence[Sequence[str]] | None = None,
                as_lists: bool = False) -> dict[str, Any]:
    """A document's entities as a span JSONL record
    ``{"id", "text", "spans": [{"start", "end", "label"}]}`` (with ``as_lists``,
    ``"spans": [[start, end, label]]``), which :func:`read_span_jsonl` reads back to the same
    entities.

    Args:
        document: The document.
        text: The text its tokens were read from (kept, and the offsets point into it);
            ``None``: its tokens joined by spaces (a clitic such as ``'s`` glued to the word
            before it), sentences by blank lines. Read back, the entities cover the same
            characters; a token that the tokenizer splits (a lone ``'``) comes back as its
            pieces.
        tags: IOB2 tags to write instead of the document's, ``tags[s]`` for sentence ``s``.

    Raises:
        ValueError: ``tags`` do not match the document's shape, or a token is not in ``text``.
    """
    if tags is not None and (len(tags) != len(document.sentences)
                             or any(len(t) != len(s) for t, s in zip(tags, document.sentences))):
        raise ValueError(f"document {document.doc_id!r}: the tags do not match its sentences")
    if text is None:
        text = joined_text(document)
    offsets = token_offsets(document, text)
    spans = []
    for s, sentence in enumerate(document.sentences):
        sentence_tags = sentence.tags if tags is None else tags[s]
        for label, start, end in tag_spans(sentence_tags):
            first, stop = offsets[s][start][0], offsets[s][end - 1][1]
            spans.append([first, stop, label] if as_lists
                         else {"start": first, "end": stop, "label": label})
    return {"id": document.doc_id, "text": text, "spans": spans}


def write_span_jsonl(path_or_handle: str | Path | TextIO, documents: Sequence[Document],
                     predictions: Sequence[Sequence[Sequence[str]]] | None = None,
                     texts: Sequence[str | None] | None = None) -> None:
    """Write documents as span JSONL, one :func:`span_record` a line; to a path atomically
    (:func:`~docgraph.runtime.atomic.atomic_write_text`).

    Args:
        path_or_handle: The file, or an open text handle to write to.
        documents: The documents.
        predictions: IOB2 tags to write instead of the gold ones, ``predictions[d][s]`` for
            sentence ``s`` of document ``d``.
        texts: The text of each document (see :func:`span_record`).

    Raises:
        ValueError: ``predictions`` or ``texts`` do not match the documents.
    """
    for name, given in (("predictions", predictions), ("texts", texts)):
        if given is not None and len(given) != len(documents):
            raise ValueError(f"{len(given)} {name} for {len(documents)} documents")
    lines = "".join(
        json.dumps(span_record(doc, None if texts is None else texts[d],
                               None if predictions is None else predictions[d]),
                   ensure_ascii=False) + "\n"
        for d, doc in enumerate(documents))
    if isinstance(path_or_handle, (str, Path)):
        atomic_write_text(path_or_handle, lines)
    else:
        path_or_handle.write(lines)

