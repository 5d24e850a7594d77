"""Entity-level evaluation identical to the CoNLL ``conlleval`` script.

Entities are read from each sentence's tags with :func:`seqeval.metrics.sequence_labeling.
get_entities`, which is seqeval's *default* (non-strict) mode and reproduces conlleval's
``startOfChunk``/``endOfChunk`` logic. It therefore accepts IOB1, IOB2 and BIOES tags (also
mixed and invalid sequences) and reads them the way conlleval does:

* ``I-X`` after ``O`` (or after an entity of another type) starts a new entity of type ``X``;
* ``B-X`` always starts a new entity, so ``B-X B-X`` is two entities;
* ``E-X`` and ``S-X`` close the entity they belong to, ``S-X`` is a one-token entity;
* an entity ends at the end of its sentence.

A predicted entity is correct only if its type, first and last token all equal those of a gold
entity (a partial overlap or a wrong type is both a false positive and a false negative).
Scores are micro-averaged over all entities, given in percent (0..100), and 0.0 wherever a
denominator is zero.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from seqeval.metrics.sequence_labeling import get_entities

Entity = tuple[int, str, int, int]
"""An entity as ``(sentence index, type, first token, last token)``."""

_FIELDS = ("precision", "recall", "f1", "support", "predicted", "correct")


@dataclass
class TypeScores:
    """Scores of one entity type (or of all types together).

    Args:
        precision: ``100 * correct / predicted``.
        recall: ``100 * correct / support``.
        f1: Harmonic mean of precision and recall.
        support: Number of gold entities.
        predicted: Number of predicted entities.
        correct: Number of predicted entities that exactly match a gold entity.
    """

    precision: float
    recall: float
    f1: float
    support: int
    predicted: int
    correct: int

    def to_dict(self) -> dict[str, float | int]:
        """Return the scores as a plain dictionary (JSON serialisable).

        Returns:
            ``{"precision", "recall", "f1", "support", "predicted", "correct"}``.
        """
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TypeScores:
        """Build scores from the output of :meth:`to_dict`.

        Args:
            data: Mapping with the six score fields.

        Returns:
            The scores.
        """
        return cls(
            precision=float(data["precision"]),
            recall=float(data["recall"]),
            f1=float(data["f1"]),
            support=int(data["support"]),
            predicted=int(data["predicted"]),
            correct=int(data["correct"]),
        )


@dataclass
class Scores:
    """Micro-averaged entity-level scores with a per-type breakdown.

    Args:
        precision: Overall precision in percent.
        recall: Overall recall in percent.
        f1: Overall F1 in percent.
        per_type: Scores of each entity type occurring in gold or prediction, sorted by name.
        support: Number of gold entities.
        predicted: Number of predicted entities.
        correct: Number of correctly predicted entities.
    """

    precision: float
    recall: float
    f1: float
    per_type: dict[str, TypeScores] = field(default_factory=dict)
    support: int = 0
    predicted: int = 0
    correct: int = 0

    @property
    def overall(self) -> TypeScores:
        """The overall numbers as a :class:`TypeScores`."""
        return TypeScores(
            self.precision, self.recall, self.f1, self.support, self.predicted, self.correct
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the scores as a plain, JSON-serialisable dictionary.

        Returns:
            ``{"precision", "recall", "f1", "support", "predicted", "correct",
            "per_type": {TYPE: {...same six keys...}}}``.
        """
        result: dict[str, Any] = self.overall.to_dict()
        result["per_type"] = {name: ts.to_dict() for name, ts in self.per_type.items()}
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scores:
        """Build scores from the output of :meth:`to_dict`.

        Args:
            data: Mapping as produced by :meth:`to_dict`.

        Returns:
            The scores.
        """
        overall = TypeScores.from_dict(data)
        per_type = {
            str(name): TypeScores.from_dict(values)
            for name, values in data.get("per_type", {}).items()
        }
        return cls.from_overall(overall, per_type)

    @classmethod
    def from_overall(cls, overall: TypeScores, per_type: dict[str, TypeScores]) -> Scores:
        """Combine the overall counts and the per-type scores."""
        return cls(
            precision=overall.precision,
            recall=overall.recall,
            f1=overall.f1,
            per_type=per_type,
            support=overall.support,
            predicted=overall.predicted,
            correct=overall.correct,
        )


def extract_entities(sentences: Sequence[Sequence[str]]) -> set[Entity]:
    """Read the entities of a sequence of sentences the way conlleval does.

    Args:
        sentences: One tag sequence per sentence (IOB1, IOB2 or BIOES).

    Returns:
        The set of ``(sentence index, type, first token, last token)`` tuples.
    """
    return {
        (index, type_, start, end)
        for index, tags in enumerate(sentences)
        for type_, start, end in get_entities(list(tags))
    }


def _safe_percent(numerator: int, denominator: int) -> float:
    """Return ``100 * numerator / denominator``, or 0.0 when the denominator is zero."""
    return 100.0 * numerator / denominator if denominator else 0.0


def _type_scores(support: int, predicted: int, correct: int) -> TypeScores:
    """Compute precision, recall and F1 (percent) from entity counts.

    Args:
        support: Number of gold entities.
        predicted: Number of predicted entities.
        correct: Number of exact matches.

    Returns:
        The scores; every ratio with a zero denominator is 0.0.
    """
    precision = _safe_percent(correct, predicted)
    recall = _safe_percent(correct, support)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return TypeScores(precision, recall, f1, support, predicted, correct)


def _check_lengths(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> None:
    """Raise ``ValueError`` unless gold and prediction have the same shape.

    Args:
        gold: Gold tag sequences.
        pred: Predicted tag sequences.

    Raises:
        ValueError: On a different number of sentences or of tags in a sentence.
    """
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} sentences but prediction has {len(pred)}")
    for index, (gold_tags, pred_tags) in enumerate(zip(gold, pred)):
        if len(gold_tags) != len(pred_tags):
            raise ValueError(
                f"sentence {index}: gold has {len(gold_tags)} tags but prediction has "
                f"{len(pred_tags)}"
            )


def score(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> Scores:
    """Compute conlleval entity-level micro precision, recall and F1.

    The overall numbers equal ``seqeval.metrics.precision_score``/``recall_score``/
    ``f1_score`` in default mode (times 100).

    Args:
        gold: Gold tags, one sequence per sentence (IOB1, IOB2 or BIOES).
        pred: Predicted tags with the same shape as ``gold``.

    Returns:
        Overall and per-type scores in percent.

    Raises:
        ValueError: If the number of sentences or the length of a sentence differs.
    """
    _check_lengths(gold, pred)
    gold_entities = extract_entities(gold)
    pred_entities = extract_entities(pred)
    correct_entities = gold_entities & pred_entities

    support = Counter(entity[1] for entity in gold_entities)
    predicted = Counter(entity[1] for entity in pred_entities)
    correct = Counter(entity[1] for entity in correct_entities)
    per_type = {
        name: _type_scores(support[name], predicted[name], correct[name])
        for name in sorted(set(support) | set(predicted))
    }
    overall = _type_scores(len(gold_entities), len(pred_entities), len(correct_entities))
    return Scores.from_overall(overall, per_type)


def format_table(scores: Scores, title: str | None = None) -> str:
    """Render scores as a fixed-width text table.

    One row per entity type, then an ``overall`` row; columns are precision, recall, F1 (percent,
    two decimals) and support (number of gold entities).

    Args:
        scores: The scores to render.
        title: Optional line printed above the table.

    Returns:
        The table, lines separated by ``"\\n"``, without a trailing newline.
    """
    names = [*scores.per_type, "overall"]
    width = max(len("type"), *(len(name) for name in names))
    header = f"{'type':<{width}}  {'P':>7}  {'R':>7}  {'F1':>7}  {'support':>7}"
    rule = "-" * len(header)

    def row(name: str, ts: TypeScores) -> str:
        return (
            f"{name:<{width}}  {ts.precision:7.2f}  {ts.recall:7.2f}  {ts.f1:7.2f}  {ts.support:7d}"
        )

    lines = [] if title is None else [title]
    lines += [header, rule]
    lines += [row(name, ts) for name, ts in scores.per_type.items()]
    lines += [rule, row("overall", scores.overall)]
    return "\n".join(lines)
