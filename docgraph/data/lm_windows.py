"""Which subwords go into which transformer input, and back from subwords to words.

Pure functions over subword positions (no tokenizer, no model): the target ranges of a
document (:func:`split_targets`: one per sentence, long sentences split at word boundaries,
optionally packed), the context around a target (:func:`context_window`), and word vectors
from subword states (:func:`pool_words`). :class:`~docgraph.data.lm_encoder.ContextualEncoder`
runs the transformer on the :class:`Window` objects they describe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Window:
    """One transformer input: ``[left context | target | right context]`` of one document.

    ``start``/``end`` delimit the whole window and ``target_start``/``target_end`` the subwords
    that take their features from it, all as positions in the document's subword sequence.
    """

    doc: int
    start: int
    end: int
    target_start: int
    target_end: int


def split_targets(sentence_spans: Sequence[tuple[int, int]], word_spans: Sequence[tuple[int, int]],
                  budget: int, pack: int = 0) -> list[tuple[int, int]]:
    """Subword ranges to encode: one per sentence, long sentences split at word boundaries.

    Args:
        sentence_spans: ``(first_word, end_word)`` of every sentence.
        word_spans: ``(first_subword, end_subword)`` of every word of the document.
        budget: Most subwords of one window without special tokens.
        pack: When positive, consecutive ranges are merged while the merged range has at most
            ``pack`` subwords (sentences sharing a window).

    Returns:
        ``(start, end)`` subword ranges covering every subword exactly once, except the subwords
        past ``budget`` of a single word longer than ``budget`` (the caller warns about those).
    """
    targets: list[tuple[int, int]] = []
    for first, end in sentence_spans:
        start: int | None = None
        stop = 0
        for w in range(first, end):
            w_start, w_end = word_spans[w]
            w_end = min(w_end, w_start + budget)
            if start is not None and w_end - start > budget:  # close the window before word w
                targets.append((start, stop))
                start = None
            if start is None:
                start = w_start
            stop = w_end
        if start is not None:
            targets.append((start, stop))
    return _merge_targets(targets, min(pack, budget)) if pack > 0 else targets


def _merge_targets(targets: list[tuple[int, int]], pack: int) -> list[tuple[int, int]]:
    """Adjacent ranges merged while the merged range has at most ``pack`` subwords."""
    merged: list[tuple[int, int]] = []
    for a, b in targets:
        if merged and merged[-1][1] == a and b - merged[-1][0] <= pack:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


def context_window(target: tuple[int, int], num_subwords: int, budget: int, context: int
                   ) -> tuple[int, int]:
    """The window ``(start, end)`` around ``target``: up to ``context`` subwords each side.

    When both sides do not fit ``budget``, each gets half of the room and a side that needs less
    leaves the rest to the other.
    """
    a, b = target
    room = budget - (b - a)
    want_left, want_right = min(context, a), min(context, num_subwords - b)
    if want_left + want_right > room:
        left = min(want_left, max(room // 2, room - want_right))
        right = min(want_right, room - left)
    else:
        left, right = want_left, want_right
    return a - left, b + right


def pool_words(states: np.ndarray, word_spans: Sequence[tuple[int, int]], pooling: str
               ) -> np.ndarray:
    """Word vectors ``[W, H]`` from subword states ``[n, H]`` (mean or first subword).

    Args:
        states: Subword states of one document.
        word_spans: ``(first_subword, end_subword)`` per word, contiguous and non-empty.
        pooling: ``"mean"`` or ``"first"``.
    """
    if not word_spans:
        return np.zeros((0, states.shape[1]), dtype=states.dtype)
    starts = np.fromiter((s for s, _ in word_spans), dtype=np.int64, count=len(word_spans))
    if pooling == "first":
        return states[starts]
    ends = np.fromiter((e for _, e in word_spans), dtype=np.int64, count=len(word_spans))
    sums = np.add.reduceat(states, starts, axis=0)
    # reduceat sums up to the next start; words truncated to a window end earlier
    cut = np.flatnonzero(ends[:-1] < starts[1:])
    for w in cut:
        sums[w] = states[starts[w]:ends[w]].sum(axis=0)
    if len(word_spans) and ends[-1] < states.shape[0]:
        sums[-1] = states[starts[-1]:ends[-1]].sum(axis=0)
    return sums / (ends - starts)[:, None].astype(states.dtype)
