"""Reader for OntoNotes 5.0 in the CoNLL-2012 ``*gold_conll`` format.

Each ``#begin document (<id>); part NNN`` ... ``#end document`` block becomes one
:class:`~docgraph.data.document.Document` with id ``"<id>/part-NNN"``. The word is column 4 and
the named entity column 11, in bracket notation (``(TYPE)``, ``(TYPE*``, ``*``, ``*)``), which is
converted to IOB2. The files come from the official ``skeleton2conll`` conversion of LDC2013T19.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from docgraph.data.document import Document, make_document
from docgraph.data.errors import CorpusFormatError, DataNotFoundError, format_error

WORD_COL = 3
NER_COL = 10
_BEGIN = "#begin document"
_END = "#end document"


def normalise_word(word: str) -> str:
    """Undo the treebank slash escape of a word (``/.`` -> ``.``, ``/?`` -> ``?``, ``/-`` -> ``-``).

    Args:
        word: The word as written in the file.

    Returns:
        The word without a leading escaping slash (a lone ``/`` is kept).
    """
    if len(word) > 1 and word[0] == "/":
        return word[1:]
    return word


def parse_begin(line: str) -> str | None:
    """Parse a ``#begin document (<id>); part NNN`` line.

    Args:
        line: The line, without its newline.

    Returns:
        The document id ``"<id>/part-NNN"``, or ``None`` if the line is malformed.
    """
    rest = line[len(_BEGIN):].strip()
    if not rest.startswith("(") or ")" not in rest:
        return None
    close = rest.index(")")
    doc = rest[1:close].strip()
    tail = rest[close + 1:].strip().lstrip(";").split()
    if not doc or len(tail) != 2 or tail[0] != "part" or not tail[1].isdigit():
        return None
    return f"{doc}/part-{int(tail[1]):03d}"


def _open(path: Path) -> TextIO:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def find_gold_conll(path: str | Path) -> list[Path]:
    """List the CoNLL-2012 files under ``path``.

    Args:
        path: A ``*gold_conll`` file, its ``.gz``, or a directory searched recursively for
            ``*gold_conll`` (and ``*gold_conll.gz``) files.

    Returns:
        The files, sorted by path.

    Raises:
        DataNotFoundError: If ``path`` does not exist or the directory holds no such file.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(
            p for p in path.rglob("*")
            if p.is_file() and (p.name.endswith("gold_conll") or p.name.endswith("gold_conll.gz"))
        )
        if not files:
            raise DataNotFoundError(
                f"{path}: no *gold_conll files found (expected the output of the official "
                "skeleton2conll conversion of OntoNotes 5.0, LDC2013T19)"
            )
        return files
    if not path.exists():
        raise DataNotFoundError(f"{path}: no such file or directory")
    return [path]


def _read_file(path: Path, include_pt: bool) -> Iterator[Document]:
    """Yield the document parts of one ``gold_conll`` file."""
    doc_id: str | None = None
    sentences: list[tuple[list[str], list[str]]] = []
    words: list[str] = []
    tags: list[str] = []
    open_type: str | None = None
    open_line = 0
    found = False

    def err(line_no: int, what: str) -> CorpusFormatError:
        return format_error(path, line_no, what)

    with _open(path) as f:
        line_no = 0
        for line_no, line in enumerate(f, 1):
            if line[0] == "#":
                if line.startswith(_BEGIN):
                    if doc_id is not None:
                        raise err(line_no, f"expected '{_END}' before a new '{_BEGIN}'")
                    doc_id = parse_begin(line.rstrip("\n"))
                    if doc_id is None:
                        raise err(line_no, f"expected '{_BEGIN} (<id>); part NNN'")
                    found = True
                    continue
                if line.startswith(_END):
                    if doc_id is None:
                        raise err(line_no, f"'{_END}' without a '{_BEGIN}' line")
                    if open_type is not None:
                        raise err(open_line, f"entity ({open_type}* is never closed")
                    if words:
                        sentences.append((words, tags))
                        words, tags = [], []
                    if include_pt or not doc_id.startswith("pt/"):
                        yield make_document(doc_id, sentences, source_scheme="iob2")
                    doc_id, sentences = None, []
                    continue
            cols = line.split(None, NER_COL + 1)
            if not cols:
                if words:
                    if open_type is not None:
                        raise err(open_line, f"entity ({open_type}* is never closed")
                    sentences.append((words, tags))
                    words, tags = [], []
                continue
            if doc_id is None:
                raise err(line_no, f"token line outside a document: expected '{_BEGIN}' first")
            if len(cols) <= NER_COL:
                raise err(line_no, f"expected at least {NER_COL + 1} columns, got {len(cols)}")
            ner = cols[NER_COL] if len(cols) > NER_COL + 1 else cols[NER_COL].rstrip()
            words.append(normalise_word(cols[WORD_COL]))
            if ner == "*":
                tags.append("O" if open_type is None else f"I-{open_type}")
            elif ner[0] == "(":
                if open_type is not None:
                    raise err(line_no, f"entity {ner} opened while ({open_type}* is still open")
                closes = ner[-1] == ")"
                typ = ner[1:].rstrip(")").rstrip("*")
                if not typ or not (closes or ner[-1] == "*"):
                    raise err(line_no, f"expected '(TYPE)', '(TYPE*', '*' or '*)', got {ner!r}")
                tags.append(f"B-{typ}")
                if not closes:
                    open_type, open_line = typ, line_no
            elif ner == "*)":
                if open_type is None:
                    raise err(line_no, "'*)' closes an entity that was never opened")
                tags.append(f"I-{open_type}")
                open_type = None
            else:
                raise err(line_no, f"expected '(TYPE)', '(TYPE*', '*' or '*)', got {ner!r}")
    if doc_id is not None:
        raise err(line_no, f"expected '{_END}' before the end of the file")
    if not found:
        raise err(max(line_no, 1), f"expected at least one '{_BEGIN}' block (empty file?)")


def read_ontonotes(path: str | Path, include_pt: bool = False) -> list[Document]:
    """Read OntoNotes 5.0 CoNLL-2012 data into documents, one per ``#begin`` part.

    Args:
        path: A ``*gold_conll`` file, a ``.gz`` of it, or a directory tree searched
            recursively for ``*gold_conll`` files (sorted by path), as left by the official
            ``skeleton2conll`` conversion of LDC2013T19.
        include_pt: Keep the New Testament documents (ids starting with ``pt/``).

    Returns:
        The document parts with IOB2 tags, ids like ``"bc/cctv/00/cctv_0001/part-000"``.

    Raises:
        CorpusFormatError: For unbalanced entity brackets, misplaced ``#begin``/``#end``
            lines, token lines outside a document, lines with fewer than 11 columns, or files
            without documents.
        DataNotFoundError: If ``path`` does not exist.
    """
    docs: list[Document] = []
    for file in find_gold_conll(path):
        docs.extend(_read_file(file, include_pt))
    return docs
