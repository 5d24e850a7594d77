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

:func:`document_consistency` adds document-level diagnostics of GCDoc's hypothesis (repeated
mentions in a document tend to share a type): F1 on mentions with a recurring word vs the
others, and how consistently identical mention strings are typed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

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
    # imported here: seqeval.metrics loads scikit-learn (slow to import, docs/experiments.md,
    # 'Metrics'), which a process that never scores (a tagging worker, predict.py) skips
    from seqeval.metrics.sequence_labeling import get_entities

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


# ---------------------------------------------------------------------------- document consistency
Mention = tuple[int, str, int, int]
"""A mention inside one document as ``(sentence index, type, first token, last token)``."""


@dataclass
class TypeConsistency:
    """How consistently the mentions of one tag source (gold or prediction) are typed.

    Mentions are grouped by their string within each document (see
    :func:`document_consistency` for the key); a *group* is a string with at least two mentions
    in its document.

    Args:
        mentions: Number of mentions.
        groups: Number of strings with at least two mentions in their document.
        consistent_groups: Groups whose mentions all have the same type.
        grouped_mentions: Mentions that belong to a group.
        majority_disagreements: Mentions whose type is not the majority type of their string in
            their document: :math:`\\sum_g (|g| - \\max_t |g_t|)` over the groups :math:`g`,
            where :math:`g_t` are the mentions of type :math:`t` (the fewest relabellings that
            make every group consistent; in a tie, one of the most frequent types counts as the
            majority).
    """

    mentions: int = 0
    groups: int = 0
    consistent_groups: int = 0
    grouped_mentions: int = 0
    majority_disagreements: int = 0

    @property
    def consistency(self) -> float:
        """Percentage of groups labelled with a single type (0.0 without groups)."""
        return _safe_percent(self.consistent_groups, self.groups)

    @property
    def mixed(self) -> float | None:
        """Percentage of groups with more than one type (``None`` without groups)."""
        return mixed_share(self.to_dict())

    def mixed_text(self) -> str:
        """The share of groups with more than one type, as ``"7.6%"``; ``"n/a"`` without
        groups (no string was mentioned twice in a document)."""
        return _percent_text(self.mixed, 1)

    @property
    def disagreement(self) -> float:
        """Percentage of all mentions that disagree with their string's majority type."""
        return _safe_percent(self.majority_disagreements, self.mentions)

    def __add__(self, other: TypeConsistency) -> TypeConsistency:
        return TypeConsistency(
            self.mentions + other.mentions,
            self.groups + other.groups,
            self.consistent_groups + other.consistent_groups,
            self.grouped_mentions + other.grouped_mentions,
            self.majority_disagreements + other.majority_disagreements,
        )

    def to_dict(self) -> dict[str, float | int]:
        """The counts and the two percentages as a plain dictionary."""
        return {
            "consistency": self.consistency,
            "disagreement": self.disagreement,
            "mentions": self.mentions,
            "groups": self.groups,
            "consistent_groups": self.consistent_groups,
            "grouped_mentions": self.grouped_mentions,
            "majority_disagreements": self.majority_disagreements,
        }


@dataclass
class DocumentConsistency:
    """Document-level consistency scores (see :func:`document_consistency`).

    Args:
        recurrent: P/R/F1 (percent) on the mentions with a word that recurs in their document.
        singleton: P/R/F1 (percent) on the mentions whose words all occur once in their
            document.
        gold: Type consistency of the gold mentions.
        pred: Type consistency of the predicted mentions.
    """

    recurrent: TypeScores
    singleton: TypeScores
    gold: TypeConsistency
    pred: TypeConsistency

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dictionary.

        Returns:
            ``{"recurrent": {P/R/F1...}, "singleton": {...}, "gold": {...}, "pred": {...}}``
            with the fields of :meth:`TypeScores.to_dict` and :meth:`TypeConsistency.to_dict`.
        """
        return {
            "recurrent": self.recurrent.to_dict(),
            "singleton": self.singleton.to_dict(),
            "gold": self.gold.to_dict(),
            "pred": self.pred.to_dict(),
        }


def mixed_share(record: Mapping[str, Any]) -> float | None:
    """The percentage of string groups with more than one type in a record of
    :meth:`TypeConsistency.to_dict`; ``None`` when it counts no group (a record without the
    count, written before it was kept, is taken to have groups)."""
    if record.get("groups", 1) == 0:
        return None
    return 100.0 - float(record["consistency"])


def against_majority(record: Mapping[str, Any]) -> float | None:
    """The percentage of mentions against their string's majority type in a record of
    :meth:`TypeConsistency.to_dict`; ``None`` when it counts no group (no string to disagree
    with)."""
    if record.get("groups", 1) == 0:
        return None
    return float(record["disagreement"])


def bucket_f1(record: Mapping[str, Any]) -> float | None:
    """The F1 of a record of :meth:`TypeScores.to_dict` for a bucket of mentions (recurring
    or once-seen words); ``None`` when the bucket holds no gold and no predicted mention."""
    if record.get("support", 1) == 0 and record.get("predicted", 1) == 0:
        return None
    return float(record["f1"])


def _percent_text(value: float | None, digits: int = 2, unit: str = "%") -> str:
    return "n/a" if value is None else f"{value:.{digits}f}{unit}"


def consistency_text(consistency: DocumentConsistency) -> str:
    """The document-consistency figures in one line, as ``evaluate.py`` prints them; a
    figure without anything to count (no string group, no mention in a bucket) reads
    ``n/a``."""
    figures = consistency.to_dict()
    return (f"document consistency: F1 on mentions with a recurring word "
            f"{_percent_text(bucket_f1(figures['recurrent']), unit='')}, on once-seen mentions "
            f"{_percent_text(bucket_f1(figures['singleton']), unit='')}; string groups with "
            f"more than one type {consistency.pred.mixed_text()} (gold "
            f"{consistency.gold.mixed_text()}); entities against their string's majority type "
            f"{_percent_text(against_majority(figures['pred']))}")


def word_key(word: str, lowercase: bool = True) -> str:
    """The key under which the document graph connects words (lowercased by default)."""
    return word.lower() if lowercase else word


def recurrent_words(sentences: Sequence[Sequence[str]], lowercase: bool = True) -> set[str]:
    """Keys (:func:`word_key`) of the words occurring at least twice in a document.

    These are exactly the words whose tokens have a neighbour in the unsampled document graph.

    Args:
        sentences: The tokens of the document, one sequence per sentence.
        lowercase: Compare words case-insensitively (the graph's default).

    Returns:
        The set of recurring keys.
    """
    counts = Counter(word_key(w, lowercase) for tokens in sentences for w in tokens)
    return {key for key, count in counts.items() if count >= 2}


def mention_string(tokens: Sequence[str], start: int, end: int, lowercase: bool = True) -> str:
    """The string of the mention ``tokens[start:end + 1]`` (keys joined by spaces)."""
    return " ".join(word_key(w, lowercase) for w in tokens[start : end + 1])


def is_recurrent_mention(
    tokens: Sequence[str], start: int, end: int, recurring: set[str], lowercase: bool = True
) -> bool:
    """Whether a word of ``tokens[start:end + 1]`` is in ``recurring`` (:func:`recurrent_words`)."""
    return any(word_key(w, lowercase) in recurring for w in tokens[start : end + 1])


def type_consistency(mentions: Sequence[tuple[str, str]]) -> TypeConsistency:
    """Type consistency of the mentions of *one* document.

    Args:
        mentions: ``(mention string, type)`` of every mention of the document.

    Returns:
        The counts of :class:`TypeConsistency`.
    """
    by_string: dict[str, Counter[str]] = {}
    for string, type_ in mentions:
        by_string.setdefault(string, Counter())[type_] += 1
    out = TypeConsistency(mentions=len(mentions))
    for types in by_string.values():
        size = sum(types.values())
        if size < 2:
            continue
        out.groups += 1
        out.grouped_mentions += size
        out.consistent_groups += int(len(types) == 1)
        out.majority_disagreements += size - max(types.values())
    return out


def _mention_strings(sentences: Sequence[Sequence[str]], mentions: set[Mention],
                     lowercase: bool) -> list[tuple[str, str]]:
    """``(mention string, type)`` of every mention of a document, in reading order."""
    return [(mention_string(sentences[s], start, end, lowercase), type_)
            for s, type_, start, end in sorted(mentions)]


def document_consistency(
    documents_tokens: Sequence[Sequence[Sequence[str]]],
    gold: Sequence[Sequence[Sequence[str]]],
    pred: Sequence[Sequence[Sequence[str]]],
    lowercase: bool = True,
) -> DocumentConsistency:
    """Document-consistency scores of predicted against gold tags, micro-averaged over documents.

    Mentions are read per sentence like :func:`score` (conlleval rules). Within each document:

    * **Recurrent vs singleton buckets.** A mention (gold *or* predicted) is *recurrent* when at
      least one of its words recurs in the document, i.e. its key (:func:`word_key`: lowercased,
      the document graph's key) occurs at least twice among all the document's tokens (the
      mention's own tokens included), so at least one of its tokens is connected in the
      unsampled document graph; otherwise it is a *singleton* mention. A predicted mention is
      put in a bucket by the same rule applied to its own span, so an exactly matching
      prediction always falls in its gold mention's bucket: ``correct`` counts the exact
      matches (type, sentence, first and last token) in the bucket, precision divides by the
      predicted mentions of the bucket, recall by its gold mentions, and the two buckets' counts
      add up to those of :func:`score`.
    * **Type consistency.** Mentions are grouped by their string (the keys of their words joined
      by spaces, so case-insensitive by default); for gold and for predictions separately,
      :class:`TypeConsistency` counts the groups of at least two mentions labelled with a single
      type and the mentions that disagree with their string's majority type.

    Args:
        documents_tokens: Per document, per sentence, the tokens.
        gold: Gold tags (IOB1, IOB2 or BIOES), same shape as ``documents_tokens``.
        pred: Predicted tags, same shape.
        lowercase: Compare words case-insensitively (the graph's default).

    Returns:
        The scores.

    Raises:
        ValueError: If the number of documents, sentences or tokens differs.
    """
    if not len(documents_tokens) == len(gold) == len(pred):
        raise ValueError(
            f"{len(documents_tokens)} documents of tokens, {len(gold)} of gold tags and "
            f"{len(pred)} of predicted tags"
        )
    counts = {bucket: Counter[str]() for bucket in (True, False)}
    gold_consistency, pred_consistency = TypeConsistency(), TypeConsistency()
    for index, (sentences, gold_doc, pred_doc) in enumerate(zip(documents_tokens, gold, pred)):
        try:
            _check_lengths(sentences, gold_doc)
            _check_lengths(gold_doc, pred_doc)
        except ValueError as err:
            raise ValueError(f"document {index}: {err}") from None
        recurring = recurrent_words(sentences, lowercase)
        gold_mentions, pred_mentions = extract_entities(gold_doc), extract_entities(pred_doc)
        for name, mentions in (("support", gold_mentions), ("predicted", pred_mentions),
                               ("correct", gold_mentions & pred_mentions)):
            for s, _, start, end in mentions:
                recurrent = is_recurrent_mention(sentences[s], start, end, recurring, lowercase)
                counts[recurrent][name] += 1
        gold_consistency += type_consistency(_mention_strings(sentences, gold_mentions, lowercase))
        pred_consistency += type_consistency(_mention_strings(sentences, pred_mentions, lowercase))
    recurrent, singleton = (
        _type_scores(counts[b]["support"], counts[b]["predicted"], counts[b]["correct"])
        for b in (True, False)
    )
    return DocumentConsistency(recurrent, singleton, gold_consistency, pred_consistency)


@dataclass
class NameGroups:
    """How the gold mentions of each repeated name of a document were tagged.

    A *group* is the gold mentions of a document that share one string (:func:`mention_string`)
    and one gold type, at least two of them. Each mention counts as found with the type of the
    predicted mention of exactly its span, or as missed. A group is ``one_type`` when every
    mention is found with a single type (the gold type or not), ``mixed`` when its found
    mentions carry more than one type, ``partly_missed`` when some but not all are found (with
    one type), and ``missed`` when none is.
    """

    groups: int = 0
    one_type: int = 0
    correct: int = 0
    mixed: int = 0
    partly_missed: int = 0
    missed: int = 0

    @property
    def inconsistent(self) -> int:
        """The groups with more than one type or partly missed."""
        return self.mixed + self.partly_missed

    def to_dict(self) -> dict[str, Any]:
        """The counts and the shares of all groups, in percent."""
        counts = {f.name: getattr(self, f.name) for f in fields(self)}
        shares = {f"{name}_share": _safe_percent(value, self.groups)
                  for name, value in (*counts.items(), ("inconsistent", self.inconsistent))
                  if name != "groups"}
        return {**counts, "inconsistent": self.inconsistent, **shares}


def name_groups(documents_tokens: Sequence[Sequence[Sequence[str]]],
                gold: Sequence[Sequence[Sequence[str]]], pred: Sequence[Sequence[Sequence[str]]],
                lowercase: bool = True) -> NameGroups:
    """:class:`NameGroups` of predicted against gold tags (same shapes as
    :func:`document_consistency`), summed over documents; ``correct`` counts the ``one_type``
    groups whose type is the gold one."""
    out = NameGroups()
    for sentences, gold_doc, pred_doc in zip(documents_tokens, gold, pred, strict=True):
        predicted = {(s, start, end): type_ for s, type_, start, end in extract_entities(pred_doc)}
        groups: dict[tuple[str, str], list[str | None]] = {}
        for s, type_, start, end in sorted(extract_entities(gold_doc)):
            key = (mention_string(sentences[s], start, end, lowercase), type_)
            groups.setdefault(key, []).append(predicted.get((s, start, end)))
        for (_, type_), found in groups.items():
            if len(found) < 2:
                continue
            out.groups += 1
            types = {t for t in found if t is not None}
            if len(types) > 1:
                out.mixed += 1
            elif not types:
                out.missed += 1
            elif None in found:
                out.partly_missed += 1
            else:
                out.one_type += 1
                out.correct += types == {type_}
    return out
