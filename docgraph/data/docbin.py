"""Reader and writer of spaCy ``DocBin`` files (``.spacy``), the training format of spaCy 3
(``pip install 'docgraph[spacy]'``).

Reading (:func:`read_docbin`, :func:`docbin_layouts`). Every ``Doc`` of the file is a document:

* Its tokens are spaCy's, as they are; a token of only whitespace and control characters
  (spaCy's ``"\\n\\n"``, ``" "``) is skipped, as the model never saw one. A token with
  whitespace or a control character inside it (``"New York"`` after a merge) is an error:
  docgraph's tokens have none.
* Its sentences are the ``Doc``'s own boundaries (a sentencizer, senter or parser set them).
  A ``Doc`` without any is split by docgraph's sentence rules
  (:func:`docgraph.data.tokenize.sentence_spans` on ``doc.text``), each token in the sentence
  its first character falls in: the rule of the ``docgraph_ner`` spaCy component.
* Its entities are ``doc.ents`` (spaCy has no overlapping ones), as IOB2 tags of the tokens
  they cover; whitespace tokens at their ends or inside them carry no tag. An entity across a
  sentence boundary joins the sentences it touches into one, as in span JSON lines
  (:mod:`docgraph.data.span_jsonl`). ``doc.spans`` groups are not read.
* Its id is ``doc.user_data``'s ``"id"`` or ``"doc_id"`` (or the custom attribute
  ``doc._.id`` / ``doc._.doc_id``, which spaCy keeps there), a string or an integer, when the
  file was written with ``DocBin(store_user_data=True)``; else ``f"{path.stem}-{index}"``
  (``index``: the 0-based position of the ``Doc`` in the file).
* Character offsets point into ``doc.text``.

Errors are :class:`~docgraph.data.errors.CorpusFormatError` naming the file and the
document index: a file that is not a DocBin, a ``Doc`` without tokens, a token with
whitespace inside, an entity of only whitespace tokens or with a type with whitespace, a file
without documents. Without spaCy, :class:`SpacyMissingError` names the file and the extra.

Writing (:func:`docbin_bytes`, :func:`write_docbin`): documents (with their gold or predicted
IOB2 tags) as ``Doc``s whose text is the given text (or the tokens joined by spaces), whose
tokens are the document's (the whitespace between them as spaCy keeps it: a trailing space,
or a whitespace token), whose sentence boundaries are the document's and whose ``doc.ents``
are the entities of the tags, with the id in ``doc.user_data["id"]``: :func:`read_docbin`
reads them back to the same tokens, entities and ids.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from docgraph.config.errors import DocgraphError
from docgraph.data.document import Document, make_document
from docgraph.data.errors import CorpusFormatError, DataNotFoundError
from docgraph.data.span_jsonl import ID_KEYS, is_document_id, joined_text, token_offsets
from docgraph.data.tags import SCHEMES, from_spans, validate_tag
from docgraph.data.tags import spans as tag_spans
from docgraph.data.tokenize import CONTROL_CHARACTERS, Span, is_blank, sentence_spans
from docgraph.runtime.atomic import atomic_write_bytes

SUFFIX = ".spacy"
"""The suffix of a DocBin file: what makes a file one for the readers that detect formats."""

EXTRA = "pip install 'docgraph[spacy]'"
"""How to install what reading and writing DocBin files needs."""

_INSIDE_RE = re.compile(rf"[\s{CONTROL_CHARACTERS}]")


class SpacyMissingError(DocgraphError, ImportError):
    """spaCy is not installed, and a DocBin file was to be read or written."""


def is_docbin(path: str | Path) -> bool:
    """Whether ``path`` names a DocBin file (its suffix is ``.spacy``, any case)."""
    return Path(path).suffix.lower() == SUFFIX


@dataclass(frozen=True)
class DocBinLayout:
    """One ``Doc`` of a DocBin as docgraph reads it.

    Args:
        doc_id: Its id.
        text: ``doc.text``.
        sentences: The character spans in ``text`` of the tokens of each sentence (whitespace
            tokens skipped, empty sentences dropped), before entities join any.
        entities: ``(type, start, end)`` of every entity of ``doc.ents``: the spans of its
            first and last non-whitespace token in ``text``.
        index: Its position in the file.
    """

    doc_id: str
    text: str
    sentences: tuple[tuple[Span, ...], ...]
    entities: tuple[tuple[str, int, int], ...]
    index: int


def _spacy() -> SimpleNamespace | None:
    """The spaCy classes the reader and writer use (``DocBin``, ``Doc``, ``Span``, ``Vocab``);
    ``None`` without spaCy."""
    try:
        from spacy import tokens, vocab
    except ImportError:
        return None
    return SimpleNamespace(DocBin=tokens.DocBin, Doc=tokens.Doc, Span=tokens.Span,
                           Vocab=vocab.Vocab)


def check_spacy(path: object, what: str = "reading") -> None:
    """Raise :class:`SpacyMissingError` naming ``path`` and the extra when spaCy is not
    installed, without importing it (a check before slow work)."""
    if find_spec("spacy") is None:
        raise SpacyMissingError(f"{path}: {what} a spaCy DocBin (.spacy) needs spaCy, which is "
                                f"not installed: {EXTRA}")


def _need_spacy(path: object, what: str) -> SimpleNamespace:
    """:func:`_spacy`, or :class:`SpacyMissingError` naming ``path`` and the extra."""
    found = _spacy()
    if found is None:
        raise SpacyMissingError(f"{path}: {what} a spaCy DocBin (.spacy) needs spaCy, which is "
                                f"not installed: {EXTRA}")
    return found


def _error(path: object, index: int | None, message: str) -> CorpusFormatError:
    where = f"{path}" if index is None else f"{path}: document {index}"
    return CorpusFormatError(f"{where}: {message}")


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a file, with the errors of the text readers.

    Raises:
        DataNotFoundError: The file does not exist.
        CorpusFormatError: It is a directory or cannot be read.
    """
    path = Path(path)
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise CorpusFormatError(f"{path}: expected a spaCy DocBin file, got a directory") \
            from None
    except FileNotFoundError:
        raise DataNotFoundError(f"{path}: file not found") from None
    except OSError as err:
        raise CorpusFormatError(f"{path}: cannot read the file ({err.strerror})") from None


def docbin_layouts(path: str | Path, data: bytes | None = None) -> Iterator[DocBinLayout]:
    """The :class:`DocBinLayout` of every ``Doc`` of a DocBin file, in order, by the rules of the
    module docstring (a ``Doc`` without tokens included, with no sentences). ``data``: the
    file's bytes, when already read (``path`` then only names it).

    Raises:
        SpacyMissingError: spaCy is not installed.
        DataNotFoundError: The file does not exist.
        CorpusFormatError: It is not a DocBin, a token has whitespace inside, an entity covers
            only whitespace or has a type with whitespace; naming the file and the document.
    """
    spacy = _need_spacy(path, "reading")
    data = read_bytes(path) if data is None else data
    try:
        docs = spacy.DocBin().from_bytes(data).get_docs(spacy.Vocab())
        docs = list(docs)
    except Exception as err:  # spaCy raises ValueError, KeyError, zlib and msgpack errors
        detail = str(err).split(". ")[0].removeprefix("[E1014] ")
        raise _error(path, None, f"expected a spaCy DocBin (.spacy) file, got data it cannot "
                                 f"read ({type(err).__name__}: {detail})") from None
    for index, doc in enumerate(docs):
        yield _layout(path, index, doc)


def _layout(path: object, index: int, doc: Any) -> DocBinLayout:
    """One ``Doc``'s id, tokens, sentences and entities."""
    text = doc.text
    kept = []
    for token in doc:
        if is_blank(token.text):
            continue
        if found := _INSIDE_RE.search(token.text):
            what = "whitespace" if found.group().isspace() else \
                f"control character U+{ord(found.group()):04X}"
            raise _error(path, index, f"token {token.i} {_shown(token.text)} has {what} inside "
                                      "it; expected tokens without (split or retokenize it)")
        kept.append(token.i)
    if doc.has_annotation("SENT_START"):
        groups = [[t.i for t in sent] for sent in doc.sents]
    else:
        starts = [start for start, _ in sentence_spans(text)] or [0]
        groups = [[] for _ in starts]
        for token in doc:
            groups[max(0, bisect.bisect_right(starts, token.idx) - 1)].append(token.i)
    keep = set(kept)
    sentences = tuple(s for s in (tuple((doc[i].idx, doc[i].idx + len(doc[i].text))
                                        for i in group if i in keep) for group in groups) if s)
    entities = []
    for ent in doc.ents:
        inside = [i for i in range(ent.start, ent.end) if i in keep]
        shown = f"entity {ent.start_char}-{ent.end_char} {ent.label_!r} ({_shown(ent.text)})"
        if not inside:
            raise _error(path, index, f"{shown} covers only whitespace")
        try:
            validate_tag(f"B-{ent.label_}")
        except ValueError:
            raise _error(path, index, f"{shown}: expected a type without whitespace") from None
        first, last = doc[inside[0]], doc[inside[-1]]
        entities.append((ent.label_, first.idx, last.idx + len(last.text)))
    return DocBinLayout(_doc_id(path, index, doc), text, sentences, tuple(entities), index)


def _shown(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _doc_id(path: object, index: int, doc: Any) -> str:
    """``user_data``'s id (plain key or custom attribute), else ``f"{stem}-{index}"``."""
    data = doc.user_data or {}
    for key in ID_KEYS:
        for stored in (key, ("._.", key, None, None)):
            value = data.get(stored)
            if value is None:
                continue
            if not is_document_id(value):
                raise _error(path, index, f"expected the id {key!r} of user_data to be a "
                                          f"non-empty string or an integer, got {value!r}")
            return str(value)
    return f"{Path(str(path)).stem}-{index}"


def layout_document(layout: DocBinLayout, path: object, scheme: str = "iob2") -> Document:
    """The document of a :class:`DocBinLayout`: its tokens, its entities as IOB2 tags, the
    sentences an entity crosses joined.

    Raises:
        CorpusFormatError: The ``Doc`` has no tokens.
    """
    if not layout.sentences:
        raise _error(path, layout.index, f"{layout.doc_id!r} has no tokens (text "
                                         f"{_shown(layout.text)})")
    starts, ends = {}, {}  # character start / end of a token -> (sentence, token)
    for s, spans in enumerate(layout.sentences):
        for t, (a, b) in enumerate(spans):
            starts[a] = ends[b] = (s, t)
    joined = [False] * len(layout.sentences)
    located = []
    for label, start, end in layout.entities:
        (s0, t0), (s1, t1) = starts[start], ends[end]
        for s in range(s0 + 1, s1 + 1):
            joined[s] = True
        located.append((label, s0, t0, s1, t1))
    groups: list[list[int]] = []
    for s in range(len(layout.sentences)):
        if joined[s]:
            groups[-1].append(s)
        else:
            groups.append([s])
    group_of = {s: g for g, members in enumerate(groups) for s in members}
    offset = {}
    for members in groups:
        count = 0
        for s in members:
            offset[s] = count
            count += len(layout.sentences[s])
    found: list[list[tuple[str, int, int]]] = [[] for _ in groups]
    for label, s0, t0, s1, t1 in located:
        found[group_of[s0]].append((label, offset[s0] + t0, offset[s1] + t1 + 1))
    sentences = []
    for members, entities in zip(groups, found):
        spans = [span for s in members for span in layout.sentences[s]]
        sentences.append(([layout.text[a:b] for a, b in spans], from_spans(entities, len(spans))))
    return make_document(layout.doc_id, sentences, source_scheme=scheme)


def read_docbin(path: str | Path, scheme: str = "iob2") -> list[Document]:
    """Read a DocBin file into documents with IOB2 tags, by the rules of the module docstring.

    Args:
        path: The file.
        scheme: The documents' ``source_scheme`` (the scheme their tags are written back in
            as CoNLL); the tags are IOB2.

    Returns:
        One document per ``Doc``, in file order.

    Raises:
        SpacyMissingError: spaCy is not installed (the message names the file and the extra).
        DataNotFoundError: The file does not exist.
        CorpusFormatError: For a file that is not a DocBin or has no documents, and a ``Doc``
            without tokens or with a token or entity the module docstring refuses, naming the
            file and the document index.
        ValueError: For an unknown ``scheme``.
    """
    scheme = scheme.lower()
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}: expected one of {', '.join(SCHEMES)}")
    documents = [layout_document(layout, path, scheme) for layout in docbin_layouts(path)]
    if not documents:
        raise _error(path, None, "expected a spaCy DocBin with documents: the file has none")
    return documents


# ------------------------------------------------------------------------------- writing
def _doc(spacy: Any, vocab: Any, document: Document, text: str | None,
         tags: Sequence[Sequence[str]] | None) -> Any:
    """A document as a spaCy ``Doc`` whose text is ``text`` (see :func:`docbin_bytes`)."""
    if text is None:
        text = joined_text(document)
    offsets = token_offsets(document, text)
    words: list[str] = []
    spaces: list[bool] = []
    starts: list[bool] = []
    index: list[list[int]] = []  # index[s][t]: the Doc token of token t of sentence s
    position = 0

    def fill(until: int) -> None:
        """The text from ``position`` to ``until``: a trailing space of the word before, the
        rest a whitespace token (which starts a sentence only as the Doc's first token)."""
        rest = text[position:until]
        if rest.startswith(" ") and words:
            spaces[-1] = True
            rest = rest[1:]
        if rest:
            if not is_blank(rest):
                raise ValueError(f"document {document.doc_id!r}: the text between two tokens "
                                 f"has more than whitespace ({_shown(rest)} at {position})")
            words.append(rest)
            spaces.append(False)
            starts.append(not words[:-1])

    for spans in offsets:
        index.append([])
        for t, (a, b) in enumerate(spans):
            fill(a)
            index[-1].append(len(words))
            words.append(text[a:b])
            spaces.append(False)
            starts.append(t == 0)
            position = b
    fill(len(text))
    doc = spacy.Doc(vocab, words=words, spaces=spaces, sent_starts=starts)
    entities = []
    for s, sentence in enumerate(document.sentences):
        for label, a, b in tag_spans(sentence.tags if tags is None else tags[s]):
            entities.append(spacy.Span(doc, index[s][a], index[s][b - 1] + 1, label=label))
    doc.ents = entities
    doc.user_data["id"] = document.doc_id
    return doc


def docbin_bytes(documents: Sequence[Document],
                 predictions: Sequence[Sequence[Sequence[str]]] | None = None,
                 texts: Sequence[str | None] | None = None, name: object = "DocBin") -> bytes:
    """Documents as the bytes of a DocBin file, one ``Doc`` each (see the module docstring).

    Args:
        documents: The documents.
        predictions: IOB2 tags to write instead of the gold ones, ``predictions[d][s]`` for
            sentence ``s`` of document ``d``.
        texts: The text each document's tokens were read from (the ``Doc``'s text, offsets
            into it); ``None`` (for all or for one): its tokens joined by spaces, sentences by
            blank lines (:func:`~docgraph.data.span_jsonl.span_record`'s rule).
        name: What the missing-spaCy error names (the file to be written).

    Raises:
        SpacyMissingError: spaCy is not installed.
        ValueError: ``predictions`` or ``texts`` do not match the documents, or a token is
            not in its text.
    """
    spacy = _need_spacy(name, "writing")
    for label, given in (("predictions", predictions), ("texts", texts)):
        if given is not None and len(given) != len(documents):
            raise ValueError(f"{len(given)} {label} for {len(documents)} documents")
    vocab = spacy.Vocab()
    out = spacy.DocBin(store_user_data=True)
    for d, document in enumerate(documents):
        tags = None if predictions is None else predictions[d]
        if tags is not None and (len(tags) != len(document.sentences) or any(
                len(t) != len(s) for t, s in zip(tags, document.sentences))):
            raise ValueError(f"document {document.doc_id!r}: the tags do not match its "
                             "sentences")
        out.add(_doc(spacy, vocab, document, None if texts is None else texts[d], tags))
    return out.to_bytes()


def write_docbin(path: str | Path, documents: Sequence[Document],
                 predictions: Sequence[Sequence[Sequence[str]]] | None = None,
                 texts: Sequence[str | None] | None = None) -> None:
    """Write documents as a DocBin file (:func:`docbin_bytes`), atomically
    (:func:`~docgraph.runtime.atomic.atomic_write`).

    Raises:
        SpacyMissingError: spaCy is not installed.
        ValueError: ``predictions`` or ``texts`` do not match the documents.
    """
    atomic_write_bytes(path, docbin_bytes(documents, predictions, texts, name=path))
