"""Tag schemes (IOB1, IOB2, BIOES): detection, validation, span reading and conversion.

All functions are pure and work on plain lists of tag strings. Spans are read exactly the way
``conlleval`` reads them, whatever the scheme, so invalid sequences are repaired consistently:

* ``B-X`` and ``S-X`` always start an entity;
* ``I-X`` or ``E-X`` start a new entity after ``O``, after the start of the sentence, after an
  entity of another type, or after an entity that was closed by ``E-``/``S-``;
* an entity ends before ``O``, ``B-``, ``S-``, a tag of another type, or after ``E-``/``S-``.

On valid input every conversion is exact, and round trips between the schemes are lossless.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

SCHEMES = ("iob1", "iob2", "bioes")
_PREFIXES = ("B-", "I-", "E-", "S-")

Span = tuple[str, int, int]


def validate_tag(tag: str) -> None:
    """Check that ``tag`` is ``"O"`` or ``P-TYPE`` with ``P`` in ``B I E S``.

    Args:
        tag: The tag string.

    Raises:
        ValueError: If the tag has any other shape (empty type, whitespace, unknown prefix).
    """
    if tag == "O":
        return
    if (
        not isinstance(tag, str)
        or len(tag) < 3
        or tag[:2] not in _PREFIXES
        or any(c.isspace() for c in tag)
    ):
        raise ValueError(
            f"invalid tag {tag!r}: expected 'O' or B-/I-/E-/S- followed by an entity type"
        )


def entity_type(tag: str) -> str:
    """Return the entity type of a tag (``"PER"`` for ``"B-PER"``), ``"O"`` for ``"O"``.

    Args:
        tag: A valid tag.

    Returns:
        The type part of the tag.
    """
    return "O" if tag == "O" else tag[2:]


def _check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}: expected one of {', '.join(SCHEMES)}")


def _ends(prev: str, tag: str) -> bool:
    """conlleval's ``endOfChunk``: does the chunk open at ``prev`` end before ``tag``?"""
    if prev == "O":
        return False
    p = prev[0]
    if p in "ES":
        return True
    if tag == "O":
        return True
    t = tag[0]
    if t in "BS":
        return True
    return prev[2:] != tag[2:]


def _starts(prev: str, tag: str) -> bool:
    """conlleval's ``startOfChunk``: does a chunk start at ``tag``?"""
    if tag == "O":
        return False
    t = tag[0]
    if t in "BS":
        return True
    if prev == "O" or prev[0] in "ES":
        return True
    return prev[2:] != tag[2:]


def spans(tags: Sequence[str], scheme: str = "iob2") -> list[Span]:
    """Read the entities of a tag sequence, conlleval-style.

    Args:
        tags: One tag per token (``"O"``, ``"B-PER"``, ...).
        scheme: ``"iob1"``, ``"iob2"`` or ``"bioes"``. conlleval reads all three with the same
            rules, so the scheme only gets validated; invalid sequences are repaired.

    Returns:
        ``(type, start, end)`` triples with ``end`` exclusive, in order.

    Raises:
        ValueError: For an unknown scheme or a malformed tag.
    """
    _check_scheme(scheme)
    result: list[Span] = []
    prev = "O"
    start = -1
    for i, tag in enumerate(tags):
        validate_tag(tag)
        if start >= 0 and _ends(prev, tag):
            result.append((prev[2:], start, i))
            start = -1
        if _starts(prev, tag):
            start = i
        prev = tag
    if start >= 0:
        result.append((prev[2:], start, len(tags)))
    return result


def from_spans(entities: Iterable[Span], length: int, scheme: str = "iob2") -> list[str]:
    """Write non-overlapping entity spans as a tag sequence in ``scheme``.

    Args:
        entities: ``(type, start, end)`` triples (end exclusive), in order, not overlapping.
        length: Number of tokens.
        scheme: Target scheme.

    Returns:
        The tag sequence.
    """
    _check_scheme(scheme)
    tags = ["O"] * length
    last_end, last_type = -1, ""
    for typ, start, end in entities:
        if scheme == "bioes":
            if end - start == 1:
                tags[start] = f"S-{typ}"
            else:
                tags[start] = f"B-{typ}"
                for i in range(start + 1, end - 1):
                    tags[i] = f"I-{typ}"
                tags[end - 1] = f"E-{typ}"
        else:
            first = "B" if scheme == "iob2" or (last_end == start and last_type == typ) else "I"
            tags[start] = f"{first}-{typ}"
            for i in range(start + 1, end):
                tags[i] = f"I-{typ}"
        last_end, last_type = end, typ
    return tags


def convert(tags: Sequence[str], source: str, target: str) -> list[str]:
    """Convert a tag sequence between schemes, repairing invalid input conlleval-style.

    Args:
        tags: Tags in the ``source`` scheme.
        source: ``"iob1"``, ``"iob2"`` or ``"bioes"``.
        target: ``"iob1"``, ``"iob2"`` or ``"bioes"``.

    Returns:
        The tags in the ``target`` scheme, with the same entities.
    """
    _check_scheme(target)
    return from_spans(spans(tags, source), len(tags), target)


def to_iob2(tags: Sequence[str], scheme: str) -> list[str]:
    """Convert ``tags`` from ``scheme`` (iob1/iob2/bioes) to IOB2.

    Args:
        tags: Tags in ``scheme``.
        scheme: Source scheme.

    Returns:
        IOB2 tags.
    """
    return convert(tags, scheme, "iob2")


def iob2_to_bioes(tags: Sequence[str]) -> list[str]:
    """Convert IOB2 tags to BIOES.

    Args:
        tags: IOB2 tags.

    Returns:
        BIOES tags.
    """
    return convert(tags, "iob2", "bioes")


def bioes_to_iob2(tags: Sequence[str]) -> list[str]:
    """Convert BIOES tags to IOB2.

    Args:
        tags: BIOES tags.

    Returns:
        IOB2 tags.
    """
    return convert(tags, "bioes", "iob2")


def iob2_to_iob1(tags: Sequence[str]) -> list[str]:
    """Convert IOB2 tags to IOB1 (``B-`` only between adjacent entities of the same type).

    Args:
        tags: IOB2 tags.

    Returns:
        IOB1 tags.
    """
    return convert(tags, "iob2", "iob1")


def detect_scheme(tag_sequences: Iterable[Sequence[str]]) -> str:
    """Guess the scheme of a corpus from its tag sequences.

    Args:
        tag_sequences: One tag sequence per sentence.

    Returns:
        ``"bioes"`` if any tag has an ``E-``/``S-`` prefix; ``"iob1"`` if some entity starts with
        ``I-`` (after ``O``, the sentence start or another type), as in conlleval IOB1 files;
        otherwise ``"iob2"``.

    Raises:
        ValueError: For a malformed tag.
    """
    iob1 = False
    for seq in tag_sequences:
        prev = "O"
        for tag in seq:
            validate_tag(tag)
            p = tag[0]
            if p in "ES":
                return "bioes"
            if p == "I" and (prev == "O" or prev[2:] != tag[2:]):
                iob1 = True
            prev = tag
    return "iob1" if iob1 else "iob2"
