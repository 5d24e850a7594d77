"""Plain data classes for corpora: a document is an ordered tuple of sentences.

Tags are stored in IOB2 whatever scheme the file used (the readers convert, repairing
invalid sequences the way ``conlleval`` reads them); ``Document.source_scheme`` remembers the
scheme of the file so predictions can be written back in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Sentence:
    """One sentence of a document.

    Args:
        tokens: The words of the sentence.
        tags: One IOB2 tag per token (``"O"``, ``"B-PER"``, ``"I-PER"``, ...).
        doc_id: Identifier of the document the sentence belongs to.
        index: Position of the sentence within its document (0-based).
    """

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    doc_id: str = ""
    index: int = 0

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.tags):
            raise ValueError(
                f"sentence {self.index} of document {self.doc_id!r} has {len(self.tokens)} "
                f"tokens but {len(self.tags)} tags"
            )

    def __len__(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True)
class Document:
    """A document: the unit over which GCDoc builds its graph and cross-sentence windows.

    Args:
        doc_id: Identifier, e.g. ``"train-17"`` or ``"bc/cctv/00/cctv_0001/part-000"``.
        sentences: The sentences in reading order.
        source_scheme: Tag scheme of the file the document was read from
            (``"iob1"``, ``"iob2"``, ``"bioes"``); tags are stored as IOB2 regardless.
    """

    doc_id: str
    sentences: tuple[Sentence, ...]
    source_scheme: str = "iob2"

    @property
    def num_tokens(self) -> int:
        """Number of tokens over all sentences."""
        return sum(len(s) for s in self.sentences)

    @property
    def tokens(self) -> list[str]:
        """All tokens of the document, sentence after sentence."""
        return [t for s in self.sentences for t in s.tokens]

    @property
    def tags(self) -> list[str]:
        """All IOB2 tags of the document, sentence after sentence."""
        return [t for s in self.sentences for t in s.tags]

    def __len__(self) -> int:
        return len(self.sentences)


def make_document(
    doc_id: str,
    sentences: Iterable[tuple[Sequence[str], Sequence[str]]],
    source_scheme: str = "iob2",
) -> Document:
    """Build a :class:`Document` from ``(tokens, iob2_tags)`` pairs, numbering the sentences."""
    return Document(
        doc_id=doc_id,
        sentences=tuple(
            Sentence(tuple(toks), tuple(tags), doc_id, i)
            for i, (toks, tags) in enumerate(sentences)
        ),
        source_scheme=source_scheme,
    )
