"""Calibration of entity scores: how often an entity of score ``p`` is right, on labelled
documents, and the temperature that makes the scores say so.

An entity is *right* when a gold entity has its sentence, token span and type (conlleval's
exact match), so the scores are calibrated for precision: among the entities scored about
``p``, a share ``p`` should be right. The expected calibration error (ECE) weighs the gap
between the mean score and that share over equal-width bins of the score by the entities in
each. :func:`fit_temperature` chooses, among candidate temperatures, the one with the lowest
log loss of the scores as predictions of rightness on the documents it is given (dev): a
proper scoring rule, so the fit does not chase the bins. This module does not import torch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from docgraph.data.document import Document
from docgraph.data.tags import spans
from docgraph.tagging.result import Tagging

__all__ = ["Calibration", "ReliabilityBin", "calibration", "entity_outcomes",
           "fit_temperature", "precision_recall", "temperature_grid"]

Outcome = tuple[float, bool]
"""An entity's score and whether it is right."""


@dataclass(frozen=True)
class ReliabilityBin:
    """The entities scored in ``[low, high)`` (the last bin includes 1): how many, their mean
    score and the share of them that is right (``None`` for an empty bin)."""

    low: float
    high: float
    count: int
    confidence: float | None
    accuracy: float | None


@dataclass(frozen=True)
class Calibration:
    """How well scores match rightness.

    Attributes:
        count: Scored entities.
        ece: Expected calibration error over :attr:`bins`.
        log_loss: Mean negative log-likelihood of rightness under the scores.
        bins: The reliability diagram's bins.
    """

    count: int
    ece: float
    log_loss: float
    bins: tuple[ReliabilityBin, ...]

    def to_dict(self) -> dict:
        """A JSON-ready dictionary."""
        return {"count": self.count, "ece": self.ece, "log_loss": self.log_loss,
                "bins": [vars(b) for b in self.bins]}


def entity_outcomes(documents: Sequence[Document], taggings: Sequence[Tagging]
                    ) -> tuple[list[Outcome], int]:
    """Every predicted entity's score and whether it is right, and the number of gold
    entities, of labelled ``documents`` (IOB2 gold tags) and their scored ``taggings``.

    Raises:
        ValueError: The two do not match (document count, sentences, scores missing).
    """
    if len(documents) != len(taggings):
        raise ValueError(f"{len(documents)} documents but {len(taggings)} taggings")
    outcomes: list[Outcome] = []
    gold_count = 0
    for doc, tagging in zip(documents, taggings):
        if tagging.scores is None:
            raise ValueError(f"document {doc.doc_id!r}: its tagging has no scores")
        sentences = [s for s in doc.sentences if len(s)]
        if len(sentences) != len(tagging.tags):
            raise ValueError(f"document {doc.doc_id!r}: {len(sentences)} sentences but "
                             f"{len(tagging.tags)} tagged")
        gold = {(k, *span) for k, s in enumerate(sentences) for span in spans(list(s.tags))}
        gold_count += len(gold)
        outcomes += [(e.score, (e.sentence, e.type, e.start, e.end) in gold)
                     for e in tagging.entities()]
    return outcomes, gold_count


def calibration(outcomes: Sequence[Outcome], bins: int = 10) -> Calibration:
    """The ECE, log loss and reliability bins of ``outcomes``.

    Raises:
        ValueError: ``bins`` below 1.
    """
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    members: list[list[Outcome]] = [[] for _ in range(bins)]
    for score, right in outcomes:
        members[min(bins - 1, int(score * bins))].append((score, right))
    table, ece = [], 0.0
    for k, group in enumerate(members):
        confidence = accuracy = None
        if group:
            confidence = sum(s for s, _ in group) / len(group)
            accuracy = sum(r for _, r in group) / len(group)
            ece += len(group) / len(outcomes) * abs(confidence - accuracy)
        table.append(ReliabilityBin(k / bins, (k + 1) / bins, len(group), confidence, accuracy))
    return Calibration(len(outcomes), ece, _log_loss(outcomes), tuple(table))


def _log_loss(outcomes: Sequence[Outcome], eps: float = 1e-12) -> float:
    if not outcomes:
        return 0.0
    total = sum(-math.log(max(eps, s if right else 1.0 - s)) for s, right in outcomes)
    return total / len(outcomes)


def temperature_grid(low: float = 0.5, high: float = 4.0, steps: int = 22) -> list[float]:
    """Candidate temperatures spaced evenly in log scale from ``low`` to ``high``; 1 is
    always one of them."""
    if not 0 < low <= 1 <= high or steps < 2:
        raise ValueError("need 0 < low <= 1 <= high and steps >= 2")
    grid = {round(low * (high / low) ** (k / (steps - 1)), 4) for k in range(steps)}
    return sorted(grid | {1.0})


def fit_temperature(outcomes_by_temperature: dict[float, Sequence[Outcome]]) -> float:
    """The temperature whose outcomes have the lowest log loss (the lower temperature of a
    tie).

    Raises:
        ValueError: No temperature, or no scored entity.
    """
    if not outcomes_by_temperature:
        raise ValueError("no temperature to choose from")
    if not any(outcomes_by_temperature.values()):
        raise ValueError("no scored entity to fit a temperature on")
    return min(sorted(outcomes_by_temperature),
               key=lambda t: _log_loss(outcomes_by_temperature[t]))


def precision_recall(outcomes: Sequence[Outcome], gold_count: int,
                     thresholds: Sequence[float]) -> list[dict]:
    """Precision, recall and F1 (percent) of the entities scored at least each threshold:
    what ``--min-score`` trades."""
    rows = []
    for threshold in thresholds:
        kept = [right for score, right in outcomes if score >= threshold]
        right = sum(kept)
        precision = 100.0 * right / len(kept) if kept else 0.0
        recall = 100.0 * right / gold_count if gold_count else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rows.append({"threshold": threshold, "entities": len(kept), "precision": precision,
                     "recall": recall, "f1": f1})
    return rows
