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

from docgraph.data.tokenize import case_shape
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
    lowered = [[w.lower() for w in words] for words in tokens]
    found = [(e, tuple(lowered[e.sentence][e.start:e.end]), float(e.score or 0.0))
             for e in tagging.entities()]
    votes: dict[tuple[str, ...], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    shapes: dict[tuple[str, ...], set[str]] = defaultdict(set)
    mean: dict[tuple[tuple[str, ...], str], list[float]] = defaultdict(list)
    for e, key, score in found:
        votes[key][e.type] += score
        shapes[key].add(case_shape(tokens[e.sentence][e.start]))
        mean[(key, e.type)].append(score)
    winner = {key: max(v.items(), key=lambda item: (item[1], item[0])) for key, v in votes.items()}
    tags = [list(t) for t in tagging.tags]
    given: dict[tuple[int, int, int], float] = {}  # (sentence, start, end) -> score
    for e, key, score in found:
        type_ = winner[key][0]
        if type_ != e.type and score < relabel_below:
            _set_span(tags[e.sentence], e.start, e.end, type_)
            scores = mean[(key, type_)]
            given[(e.sentence, e.start, e.end)] = sum(scores) / len(scores)
        else:
            given[(e.sentence, e.start, e.end)] = score
    voted = sorted(((key, type_) for key, (type_, weight) in winner.items() if weight >= min_votes),
                   key=lambda item: -len(item[0]))
    places = _places(lowered, {key for key, _ in voted})
    for key, type_ in voted:
        scores = mean[(key, type_)]
        n = len(key)
        for s, start in places.get(key, ()):
            end = start + n
            if case_shape(tokens[s][start]) not in shapes[key]:
                continue
            if any(t != "O" for t in tags[s][max(start - 1, 0):end + 1]):
                continue
            _set_span(tags[s], start, end, type_)
            given[(s, start, end)] = sum(scores) / len(scores)
    scored: list[list[tuple[int, float]]] = [[] for _ in tags]
    for (s, start, _), score in given.items():  # the mentions never overlap
        scored[s].append((start, score))
    return Tagging(tags, [[score for _, score in sorted(row)] for row in scored])


def _places(lowered: Sequence[Sequence[str]], keys: set[tuple[str, ...]]
            ) -> dict[tuple[str, ...], list[tuple[int, int]]]:
    """Where each of ``keys`` occurs in the lowercased sentences, as ``(sentence, first token)``
    in reading order."""
    lengths = {len(key) for key in keys}
    firsts = {key[0] for key in keys}
    places: dict[tuple[str, ...], list[tuple[int, int]]] = defaultdict(list)
    for s, words in enumerate(lowered):
        for start, word in enumerate(words):
            if word not in firsts:
                continue
            for n in lengths:
                if start + n > len(words):
                    continue
                key = tuple(words[start:start + n])
                if key in keys:
                    places[key].append((s, start))
    return places
