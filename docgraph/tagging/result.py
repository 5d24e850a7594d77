"""The typed result of tagging: what one pass of the model gives for a chunk
(:class:`Tagging`), and what a document becomes (:class:`TaggedDocument` with its
:class:`Entity` spans), read by every interface (``predict.py``'s formats, :class:`Tagger
<docgraph.tagging.tagger.Tagger>`, the spaCy component, the HTML view).

An entity's ``score`` is its probability under the model: the marginal of the CRF that the
entity's tokens carry the labels they were decoded with, in the document's context
(:meth:`CRFDecoder.path_log_probs <docgraph.nn.CRFDecoder.path_log_probs>`, at the model's
calibrated temperature). Under BIOES labels that is the probability that exactly this span,
with this type, is an entity.

This module does not import torch.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field

from docgraph.data.tags import spans

__all__ = ["Entity", "EntitySpan", "GraphEdge", "TaggedDocument", "TaggedSentence", "Tagging",
           "entity_records"]


@dataclass(frozen=True)
class EntitySpan:
    """An entity of a :class:`Tagging`: tokens ``start`` to ``end`` (exclusive) of its
    ``sentence``-th sentence (piece), with its ``score`` (``None``: not computed)."""

    sentence: int
    type: str
    start: int
    end: int
    score: float | None


@dataclass(frozen=True)
class Tagging:
    """What one tagging pass gives for a chunk.

    Attributes:
        tags: IOB2 tags, one list per sentence (piece) of the chunk.
        scores: Per sentence, the score of each entity of its tags in reading order (the
            spans of :func:`docgraph.data.tags.spans`); ``None`` when scores were not asked for.
    """

    tags: list[list[str]]
    scores: list[list[float]] | None = None

    def __post_init__(self) -> None:
        if self.scores is not None:
            if len(self.scores) != len(self.tags):
                raise ValueError(f"{len(self.scores)} score lists for {len(self.tags)} "
                                 "sentences")
            for k, (tags, scores) in enumerate(zip(self.tags, self.scores)):
                if len(spans(tags)) != len(scores):
                    raise ValueError(f"sentence {k}: {len(scores)} scores for "
                                     f"{len(spans(tags))} entities")

    def entities(self) -> Iterator[EntitySpan]:
        """The entities of every sentence, in reading order."""
        for k, tags in enumerate(self.tags):
            found = spans(tags)
            scores = self.scores[k] if self.scores is not None else [None] * len(found)
            for (etype, start, end), score in zip(found, scores):
                yield EntitySpan(k, etype, start, end, score)

    def above(self, min_score: float) -> Tagging:
        """The tagging without the entities scored below ``min_score`` (their tokens ``O``).

        Raises:
            ValueError: The tagging has no scores.
        """
        if self.scores is None:
            raise ValueError("min_score needs a tagging with scores")
        tags, scores = [], []
        for sent_tags, sent_scores in zip(self.tags, self.scores):
            kept_tags, kept = list(sent_tags), []
            for (_, start, end), score in zip(spans(sent_tags), sent_scores):
                if score >= min_score:
                    kept.append(score)
                else:
                    kept_tags[start:end] = ["O"] * (end - start)
            tags.append(kept_tags)
            scores.append(kept)
        return Tagging(tags, scores)


@dataclass(frozen=True)
class Entity:
    """A predicted entity: tokens ``start`` to ``end`` (exclusive) of sentence ``sentence`` of
    document ``doc``.

    Attributes:
        doc: The document's id.
        sentence: The sentence's index in the document.
        start, end: The token span in the sentence (``end`` exclusive).
        type: The entity type.
        text: The entity as it stands in the input text (the tokens joined by spaces when the
            input had no text, e.g. token lists or CoNLL files).
        start_char, end_char: Its character span in the input text (``None`` without text).
        score: Its probability under the model (``None``: not computed).
    """

    doc: str
    sentence: int
    start: int
    end: int
    type: str
    text: str
    start_char: int | None = None
    end_char: int | None = None
    score: float | None = None

    def to_dict(self) -> dict:
        """``{"doc", "sentence", "start", "end", "type", "text", "start_char", "end_char"}``,
        and ``"score"`` when it was computed: a line of ``predict.py``'s JSON lines."""
        record = {"doc": self.doc, "sentence": self.sentence, "start": self.start,
                  "end": self.end, "type": self.type, "text": self.text,
                  "start_char": self.start_char, "end_char": self.end_char}
        if self.score is not None:
            record["score"] = self.score
        return record


@dataclass(frozen=True)
class TaggedSentence:
    """A sentence of a :class:`TaggedDocument`: its tokens, their character spans in the
    document's text (``None`` without text) and their IOB2 tags; with the inspection, each
    token's Monte-Carlo uncertainty and whether it was pruned (``None``: not asked for, or a
    model that does not prune)."""

    index: int
    tokens: tuple[str, ...]
    spans: tuple[tuple[int, int], ...] | None
    tags: tuple[str, ...]
    uncertainty: tuple[float, ...] | None = None
    pruned: tuple[bool, ...] | None = None


TokenRef = tuple[int, int]
"""A token of a document: ``(sentence, token)``."""


@dataclass(frozen=True)
class GraphEdge:
    """An edge of the document graph the model tagged with: ``source``'s state is a message
    to ``target`` (two repeats of a word), ``weight`` the learnt same-type score
    :math:`r_{ij}` (``None`` for a model without edge weights)."""

    source: TokenRef
    target: TokenRef
    weight: float | None


@dataclass(frozen=True)
class TaggedDocument:
    """A tagged document: its text (``None`` when it came as tokens), sentences and entities.

    Attributes:
        doc: The document's id.
        text: The input text the character spans point into.
        sentences: The sentences with their tokens, spans and tags.
        entities: The entities, in reading order.
        edges: With the inspection, the document graph's edges (none across the chunks a
            long document is tagged in); ``None`` otherwise or for a model without a graph.
    """

    doc: str
    text: str | None
    sentences: tuple[TaggedSentence, ...]
    entities: tuple[Entity, ...] = field(default=())
    edges: tuple[GraphEdge, ...] | None = None

    @property
    def tags(self) -> list[list[str]]:
        """IOB2 tags, one list per sentence."""
        return [list(s.tags) for s in self.sentences]



def entity_records(tagged: TaggedDocument | Iterable[Entity], *, scores: bool = True,
                   min_score: float | None = None,
                   types: Collection[str] | None = None) -> list[dict]:
    """The entities of a tagged document as ``predict.py`` writes them, one JSON lines record
    each (:meth:`Entity.to_dict`): the one serialiser of entities.

    Args:
        tagged: A tagged document (:meth:`Tagger.pipe <docgraph.tagging.tagger.Tagger.pipe>`),
            or entities (those of a part of one, as ``predict.py`` streams them).
        scores: Keep each record's ``"score"`` (there when the entities were scored).
        min_score: Keep only the entities scored at least this.
        types: Keep only the entities of these types (``None``: all).

    Raises:
        ValueError: ``min_score`` for entities that were not scored.
    """
    records = []
    for entity in tagged.entities if isinstance(tagged, TaggedDocument) else tagged:
        if min_score is not None:
            if entity.score is None:
                raise ValueError("min_score needs entities with scores (scores=True)")
            if entity.score < min_score:
                continue
        if types is not None and entity.type not in types:
            continue
        record = entity.to_dict()
        if not scores:
            record.pop("score", None)
        records.append(record)
    return records
