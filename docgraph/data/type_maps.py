"""Maps between the entity types of two corpora, applied to IOB2 tags and documents.

:data:`ONTONOTES_TO_CONLL` takes OntoNotes 5.0's 18 types to CoNLL-2003's four: ``PERSON`` is
``PER``; ``GPE``, ``LOC`` and ``FAC`` are ``LOC``; ``ORG`` is ``ORG``; the named types that
CoNLL-2003 annotates as miscellaneous (``NORP`` nationalities and groups, ``EVENT``,
``WORK_OF_ART``, ``LAW``, ``LANGUAGE``, ``PRODUCT``) are ``MISC``; the numeric and temporal
types (``DATE``, ``TIME``, ``PERCENT``, ``MONEY``, ``QUANTITY``, ``ORDINAL``, ``CARDINAL``),
which CoNLL-2003 does not annotate, become ``O``. A mapped entity keeps its span, so two
adjacent entities that map to one type stay two entities (IOB2 ``B-``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from docgraph.data.document import Document, Sentence

__all__ = ["ONTONOTES_TO_CONLL", "TYPE_MAPS", "genre", "map_document", "map_tags"]

ONTONOTES_TO_CONLL: Mapping[str, str | None] = {
    "PERSON": "PER",
    "GPE": "LOC", "LOC": "LOC", "FAC": "LOC",
    "ORG": "ORG",
    "NORP": "MISC", "EVENT": "MISC", "WORK_OF_ART": "MISC", "LAW": "MISC",
    "LANGUAGE": "MISC", "PRODUCT": "MISC",
    "DATE": None, "TIME": None, "PERCENT": None, "MONEY": None, "QUANTITY": None,
    "ORDINAL": None, "CARDINAL": None,
}

#: The type maps by name (``"ontonotes-conll"``).
TYPE_MAPS: Mapping[str, Mapping[str, str | None]] = {"ontonotes-conll": ONTONOTES_TO_CONLL}


def map_tags(tags: Sequence[str], mapping: Mapping[str, str | None]) -> list[str]:
    """IOB2 ``tags`` with each entity type replaced by ``mapping[type]`` (``None``: ``O``).

    Raises:
        ValueError: For a type that ``mapping`` does not name.
    """
    out = []
    for tag in tags:
        if tag == "O":
            out.append(tag)
            continue
        prefix, kind = tag[:2], tag[2:]
        if kind not in mapping:
            raise ValueError(f"tag {tag!r}: type {kind!r} is not in the type map (expected one "
                             f"of {', '.join(sorted(mapping))})")
        target = mapping[kind]
        out.append("O" if target is None else prefix + target)
    return out


def map_document(document: Document, mapping: Mapping[str, str | None]) -> Document:
    """``document`` with its gold tags mapped by :func:`map_tags`; tokens and ids kept."""
    return Document(
        document.doc_id,
        tuple(Sentence(s.tokens, tuple(map_tags(s.tags, mapping)), s.doc_id, s.index)
              for s in document.sentences),
        document.source_scheme,
    )


def genre(doc_id: str) -> str:
    """The OntoNotes genre of a document id (``"bc/cctv/00/cctv_0001"`` -> ``"bc"``)."""
    return doc_id.split("/", 1)[0]
