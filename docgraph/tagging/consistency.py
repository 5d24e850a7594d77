"""Label consistency in decoding: one type for each name of a document.

Krishnan and Manning (ACL 2006) observe that the repeats of a name in a document nearly always
share its type, and enforce it. :func:`consistent_tagging` does so after decoding, with the
calibrated entity scores as votes:

* every predicted mention is keyed by its words, lowercased (the document graph's key);
* each key's type is the one whose mentions' scores sum highest; a mention of another type
  scored below ``relabel_below`` is relabelled to it;
* an occurrence of a key that the model left ``O`` becomes a mention of the key's type when
  the key's votes sum to at least ``min_votes``, its first word has the case shape of one of
  the key's mentions (so ``"us"`` never follows ``"US"``), and it does not touch an entity.

A mention that the step relabels or adds carries the mean score of the key's mentions of its
type. The step reads nothing but the tags, the scores and the words.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from docgraph.data.novel_names import case_shape
from docgraph.data.tags import spans
from docgraph.tagging.result import Tagging

__all__ = ["consistent_tagging"]


def _set_span(tags: list[str], start: int, end: int, type_: str) -> None:
    tags[start] = f"B-{type_}"
    for k in range(start + 1, end):
        tags[k] = f"I-{type_}"


def consistent_tagging(tokens: Sequence[Sequence[str]], tagging: Tagging,
                       min_votes: float = 1.0, relabel_below: float = 1.0) -> Tagging:
    """``tagging`` of the document (or chunk) whose sentences hold ``tokens``, with one type per
    name and the name's untagged repeats tagged.

    Args:
        tokens: The words of each sentence.
        tagging: Its tags and entity scores.
        min_votes: The summed score a name needs before its untagged repeats are tagged
            (``float("inf")``: never).
        relabel_below: A mention of another type than its key's keeps its type when its own
            score is at least this (above 1: every such mention is relabelled).

    Raises:
        ValueError: ``tagging`` has no scores.
    """
    if tagging.scores is None:
        raise ValueError("label consistency needs entity scores")
    votes: dict[tuple[str, ...], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    shapes: dict[tuple[str, ...], set[str]] = defaultdict(set)
    found = list(tagging.entities())
    for e in found:
        words = tokens[e.sentence][e.start:e.end]
        key = tuple(w.lower() for w in words)
        votes[key][e.type] += float(e.score or 0.0)
        shapes[key].add(case_shape(words[0]))
    winner = {key: max(v.items(), key=lambda item: (item[1], item[0])) for key, v in votes.items()}
    mean: dict[tuple[tuple[str, ...], str], list[float]] = defaultdict(list)
    for e in found:
        mean[(tuple(w.lower() for w in tokens[e.sentence][e.start:e.end]), e.type)].append(
            float(e.score or 0.0))
    tags = [list(t) for t in tagging.tags]
    given: dict[tuple[int, int, int], float] = {}  # (sentence, start, end) -> score
    for e in found:
        key = tuple(w.lower() for w in tokens[e.sentence][e.start:e.end])
        type_ = winner[key][0]
        if type_ != e.type and float(e.score or 0.0) < relabel_below:
            _set_span(tags[e.sentence], e.start, e.end, type_)
            scores = mean[(key, type_)]
            given[(e.sentence, e.start, e.end)] = sum(scores) / len(scores)
        else:
            given[(e.sentence, e.start, e.end)] = float(e.score or 0.0)
    for key, (type_, weight) in sorted(winner.items(), key=lambda item: -len(item[0])):
        if weight < min_votes:
            continue
        scores = mean[(key, type_)]
        for s, words in enumerate(tokens):
            lowered = [w.lower() for w in words]
            n = len(key)
            for start in range(len(words) - n + 1):
                end = start + n
                if tuple(lowered[start:end]) != key or case_shape(words[start]) not in shapes[key]:
                    continue
                touched = tags[s][max(start - 1, 0):min(end + 1, len(words))]
                if any(t != "O" for t in touched):
                    continue
                _set_span(tags[s], start, end, type_)
                given[(s, start, end)] = sum(scores) / len(scores)
    return Tagging(tags, [[given[(s, start, end)] for _, start, end in spans(sentence_tags)]
                          for s, sentence_tags in enumerate(tags)])
