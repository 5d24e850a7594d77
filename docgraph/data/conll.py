"""Reader and writer for CoNLL column files (CoNLL-2003 and similar).

One token per line, the word in the first column and the NER tag in the last one, any number of
columns in between (the same number on every line of a file). Blank lines separate sentences and
``-DOCSTART-`` lines start documents. Tags are converted to IOB2 while reading. A word with a
control character (Unicode category Cc, e.g. a NUL byte) is an error naming the file and line:
such a word is never a token.

:func:`check_text_head` and :func:`has_tokens` tell, quickly and without reading a whole file,
whether an input file can be tagged: the command-line tools check their inputs with them before
torch loads.
"""

from __future__ import annotations

import codecs
import io
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from docgraph.config.fields import UsageError
from docgraph.data.document import Document, make_document
from docgraph.data.errors import CorpusFormatError, DataNotFoundError, format_error
from docgraph.data.tags import SCHEMES, convert, detect_scheme, to_iob2, validate_tag
from docgraph.data.tokenize import CONTROL_CHARACTERS, is_blank
from docgraph.runtime.atomic import atomic_write_text

DOCSTART = "-DOCSTART-"

#: How many bytes of an input file :func:`check_text_head` reads.
HEAD_BYTES = 8192

# A raw sentence: (tokens, tags, line number of its first token).
_RawSentence = tuple[list[str], list[str], int]

_CONTROL_RE = re.compile(f"[{CONTROL_CHARACTERS}]")
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def read_text(path: str | Path, encoding: str = "utf-8") -> str:
    """Read a whole text file, with errors that name the file and the offending line.

    A UTF-8 byte-order mark at the start of the file is dropped.

    Args:
        path: The file.
        encoding: Its text encoding.

    Returns:
        The decoded text (line breaks as in the file).

    Raises:
        DataNotFoundError: The file does not exist (a :class:`FileNotFoundError`).
        CorpusFormatError: ``path`` is a directory or unreadable, or its bytes are not valid
            ``encoding`` text (the message gives the line and column of the first bad byte).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise CorpusFormatError(f"{path}: expected a text file, got a directory") from None
    except FileNotFoundError:
        raise DataNotFoundError(f"{path}: file not found") from None
    except OSError as err:
        raise CorpusFormatError(f"{path}: cannot read the file ({err.strerror})") from None
    return decode_text(data, path, encoding)


def decode_text(data: bytes, path: str | Path, encoding: str = "utf-8") -> str:
    """The bytes of a text file (or of stdin) decoded as :func:`read_text` decodes them, a
    UTF-8 byte-order mark dropped; ``path`` names them in errors.

    Raises:
        CorpusFormatError: They are not valid ``encoding`` text (the message gives the line
            and column of the first bad byte).
    """
    path = Path(path)
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    try:
        return data.decode(codec)
    except UnicodeDecodeError as err:
        raise _decode_error(path, data, err, encoding) from None


def _decode_error(path: Path, data: bytes, err: UnicodeDecodeError,
                  encoding: str) -> CorpusFormatError:
    """The :class:`CorpusFormatError` of an undecodable byte, located by line and column."""
    line_start = data.rfind(b"\n", 0, err.start) + 1
    line_no = data.count(b"\n", 0, err.start) + 1
    column = err.start - line_start + 1
    name = "UTF-8" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    return format_error(path, line_no, f"expected {name} text, got byte "
                                       f"0x{data[err.start]:02x} at column {column} (byte offset "
                                       f"{err.start}); convert the file to {name}")


def check_input_file(path: str | Path, flag: str | None = None, head: bool = True) -> None:
    """The one check of an input file, before it is read: raise
    :class:`~docgraph.config.fields.UsageError` unless ``path`` is an existing file (``flag``:
    the flag that names it, e.g. ``--data``; none for positional inputs), and, with ``head``,
    :class:`~docgraph.data.errors.CorpusFormatError` when its first bytes cannot begin UTF-8
    text or CoNLL columns (:func:`check_text_head`: a NUL byte, bytes that are not UTF-8)."""
    if not Path(path).exists():
        raise UsageError("file not found" if flag else "input file not found", flag, path)
    if not Path(path).is_file():
        raise UsageError(f"expected {'a text file' if flag else 'an input file'}, got a "
                         "directory", flag, path)
    if head:
        check_text_head(path)


def check_text_head(path: str | Path, size: int = HEAD_BYTES) -> None:
    """Refuse an input file whose first ``size`` bytes cannot begin UTF-8 text or CoNLL columns:
    a UTF-16 byte-order mark, a NUL byte (a binary file) or bytes that are not UTF-8.

    Raises:
        CorpusFormatError: Naming the file, the line and the byte offset of the first bad byte.
    """
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(size)
    except OSError as err:
        raise CorpusFormatError(f"{path}: cannot read the file ({err.strerror})") from None
    expected = "expected UTF-8 text or CoNLL columns"
    if data.startswith(_UTF16_BOMS):
        raise format_error(path, 1, f"{expected}, got UTF-16 text (byte-order mark "
                                    f"0x{data[0]:02x} 0x{data[1]:02x} at byte offset 0); convert "
                                    "the file to UTF-8")
    nul = data.find(b"\0")
    if nul >= 0:
        column = nul - (data.rfind(b"\n", 0, nul) + 1) + 1
        raise format_error(path, data.count(b"\n", 0, nul) + 1,
                           f"{expected}, got a NUL byte at column {column} (byte offset {nul}): "
                           "a binary file?")
    try:  # a character cut at the end of what was read is not an error
        codecs.getincrementaldecoder("utf-8")().decode(data, final=len(data) < size)
    except UnicodeDecodeError as err:
        raise _decode_error(path, data, err, "utf-8") from None


def has_tokens(path: str | Path, input_format: str = "auto", text: str | None = None) -> bool:
    """Whether ``predict.py`` finds a token in the file, told without tokenizing it: a line
    with a character other than whitespace and control characters that is not a
    ``-DOCSTART-`` line (unless the file is read as plain text, ``input_format="text"``).
    Reads the file up to that line (``text``: its content, when already read); bytes that
    are not UTF-8 count as text (the reader says what is wrong with them)."""
    with (open(path, encoding="utf-8-sig", errors="replace", newline="") if text is None
          else io.StringIO(text, newline="")) as handle:
        for line in handle:
            if is_blank(line):
                continue
            if input_format != "text" and line.split()[0] == DOCSTART:
                continue
            return True
    return False


def _parse_lines(path: Path, encoding: str, text: str | None = None
                 ) -> list[list[_RawSentence]]:
    """Split a column file into documents of raw sentences, checking every line."""
    docs: list[list[_RawSentence]] = [[]]
    tokens: list[str] = []
    tags: list[str] = []
    first_line = 0
    ncols = 0
    saw_docstart = False

    def flush() -> None:
        nonlocal tokens, tags
        if tokens:
            docs[-1].append((tokens, tags, first_line))
            tokens, tags = [], []

    text = read_text(path, encoding) if text is None else text
    for line_no, line in enumerate(text.split("\n"), 1):
        cols = line.split()
        if not cols:
            flush()
            continue
        if len(cols) < 2:
            raise format_error(
                path, line_no, f"expected a word and a tag, got one column {_shorten(cols[0])!r}"
            )
        if ncols == 0:
            ncols = len(cols)
        elif len(cols) != ncols:
            raise format_error(
                path, line_no, f"expected {ncols} columns like the first line, got {len(cols)}"
            )
        if cols[0] == DOCSTART:
            flush()
            saw_docstart = True
            if docs[-1]:
                docs.append([])
            continue
        if control := _CONTROL_RE.search(cols[0]):
            raise format_error(
                path, line_no, f"expected a word of text in the first column, got control "
                               f"character U+{ord(control.group()):04X} in "
                               f"{_shorten(cols[0])!r}")
        tag = cols[-1]
        try:
            validate_tag(tag)
        except ValueError:
            raise format_error(
                path, line_no, f"invalid tag {_shorten(tag)!r} in the last column: expected 'O' "
                               "or B-/I-/E-/S- followed by an entity type") from None
        if not tokens:
            first_line = line_no
        tokens.append(cols[0])
        tags.append(tag)
    flush()
    docs = [d for d in docs if d]
    if not docs:
        what = "documents after -DOCSTART-" if saw_docstart else "token lines"
        raise format_error(path, 1, f"expected {what}: the file has no tokens")
    return docs


def _shorten(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters (with ``...``) for an error message."""
    return text if len(text) <= limit else text[:limit] + "..."


def first_line_of_type(path: str | Path, kind: str, encoding: str = "utf-8") -> int | None:
    """The number of the first line of a column file whose tag (last column) is of entity
    type ``kind`` (``None`` when none is)."""
    suffix = f"-{kind}"
    for line_no, line in enumerate(read_text(Path(path), encoding).split("\n"), 1):
        cols = line.split()
        if len(cols) >= 2 and cols[-1].endswith(suffix) and cols[-1][1:2] == "-":
            return line_no
    return None


def read_conll(
    path: str | Path,
    scheme: str | None = None,
    doc_per_sentence: bool = False,
    encoding: str = "utf-8",
    text: str | None = None,
) -> list[Document]:
    """Read a CoNLL column file into documents with IOB2 tags.

    Args:
        path: The file.
        scheme: Tag scheme of the file (``"iob1"``, ``"iob2"``, ``"bioes"``); detected over the
            whole file when ``None``.
        doc_per_sentence: Make every sentence its own document (for files without
            ``-DOCSTART-`` lines, or for sentence-level baselines).
        encoding: Text encoding of the file.
        text: The file's content, when already read (``path`` then only names it).

    Returns:
        The documents in file order, with ids ``f"{path.stem}-{n}"`` (``n`` from 0).

    Raises:
        FileNotFoundError: The file does not exist.
        CorpusFormatError: For a line with one column, a column count that differs from the
            first line, a word with a control character, a malformed tag, a file without
            tokens, bytes that are not ``encoding`` text, or a directory.
        ValueError: For an unknown ``scheme``.
    """
    path = Path(path)
    if scheme is not None and scheme not in SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}: expected one of {', '.join(SCHEMES)}")
    raw_docs = _parse_lines(path, encoding, text)
    if scheme is None:
        scheme = detect_scheme(tags for doc in raw_docs for _, tags, _ in doc)
    if doc_per_sentence:
        raw_docs = [[sent] for doc in raw_docs for sent in doc]
    return [
        make_document(
            f"{path.stem}-{n}",
            ((tokens, to_iob2(tags, scheme)) for tokens, tags, _ in doc),
            source_scheme=scheme,
        )
        for n, doc in enumerate(raw_docs)
    ]


def write_conll(
    path: str | Path,
    documents: Sequence[Document],
    predicted: Sequence[Sequence[Sequence[str]]] | None = None,
    scheme: str = "iob2",
) -> None:
    """Write documents as a column file ``WORD GOLD [PRED]``, readable by conlleval.

    Each document starts with a ``-DOCSTART-`` line (with as many columns as the token lines)
    followed by a blank line. The file is written atomically (temporary file + ``os.replace``).

    Args:
        path: Output file.
        documents: Documents with IOB2 gold tags.
        predicted: Optional IOB2 predictions, ``predicted[d][s]`` for sentence ``s`` of
            document ``d``.
        scheme: Scheme of the written tags (``"iob1"``, ``"iob2"`` or ``"bioes"``).

    Raises:
        ValueError: If ``predicted`` does not match the documents' shape, or for an unknown scheme.
    """
    path = Path(path)
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}: expected one of {', '.join(SCHEMES)}")
    if predicted is not None and len(predicted) != len(documents):
        raise ValueError(f"{len(predicted)} predicted documents for {len(documents)} documents")
    lines: list[str] = []
    for d, doc in enumerate(documents):
        if predicted is not None and len(predicted[d]) != len(doc.sentences):
            raise ValueError(f"document {doc.doc_id!r}: predictions for {len(predicted[d])} "
                             f"sentences, expected {len(doc.sentences)}")
        sentences = []
        for s, sent in enumerate(doc.sentences):
            columns: list[Sequence[str]] = [sent.tokens, convert(sent.tags, "iob2", scheme)]
            if predicted is not None:
                pred = predicted[d][s]
                if len(pred) != len(sent):
                    raise ValueError(f"document {doc.doc_id!r}, sentence {s}: {len(pred)} "
                                     f"predicted tags for {len(sent)} tokens")
                columns.append(convert(pred, "iob2", scheme))
            sentences.append((columns, True))
        lines += conll_lines(sentences, docstart=3 if predicted is not None else 2)
    atomic_write_text(path, "".join(f"{line}\n" for line in lines) or "\n")


def conll_lines(sentences: Iterable[tuple[Sequence[Sequence[str]], bool]],
                docstart: int | None = 2) -> Iterator[str]:
    """The lines of a CoNLL column file for one document, or a part of one: the writer of
    :func:`write_conll` and of ``predict.py --format conll``.

    Args:
        sentences: ``(columns, ends)`` per sentence (or part of a sentence): the columns of its
            token lines (words, tags, ...), each as long as the others, and whether the
            sentence ends there (a blank line follows).
        docstart: Start with a ``-DOCSTART-`` line of this many columns (``O`` after the first)
            and a blank line; ``None``: no such line (a document continued).
    """
    if docstart is not None:
        yield " ".join([DOCSTART] + ["O"] * (docstart - 1))
        yield ""
    for columns, ends in sentences:
        yield from (" ".join(row) for row in zip(*columns))
        if ends:
            yield ""


CONLL_TAGGED_SHARE = 0.9
"""Share of non-blank lines whose last column must be a tag for a file to be read as CoNLL."""


def _is_tag(field: str) -> bool:
    """Whether ``field`` is a NER tag: ``O`` or ``B-X``, ``I-X``, ``E-X``, ``S-X``."""
    return field == "O" or (len(field) > 2 and field[0] in "BIES" and field[1] == "-")


def looks_like_conll(text: str, max_lines: int = 200) -> bool:
    """Whether ``text`` is a CoNLL column file rather than prose.

    It is when a line starts with ``-DOCSTART-``, or when (nearly) all of its first
    ``max_lines`` non-blank lines have at least two columns and a tag (``O``, ``B-X``, ``I-X``,
    ``E-X``, ``S-X``) in the last one. Plain or pre-tokenised text (``... went well.``) is not.
    """
    rows = (line.split() for line in text.split("\n"))
    content = list(itertools.islice((cols for cols in rows if cols), max_lines))
    if not content:
        return False
    if any(cols[0] == "-DOCSTART-" for cols in content):
        return True
    tagged = sum(len(cols) >= 2 and _is_tag(cols[-1]) for cols in content)
    return tagged >= CONLL_TAGGED_SHARE * len(content)
