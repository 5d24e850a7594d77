"""Tests of :mod:`docgraph.data.lm_windows`: the windows of a document's subwords and the
pooling of subword states into word vectors (pure functions, no transformer)."""

from __future__ import annotations

import numpy as np

from docgraph.data.lm_windows import context_window, pool_words, split_targets


def test_split_targets_short_sentences_and_long_ones_at_word_boundaries():
    words = [(0, 2), (2, 3), (3, 6), (6, 7)]  # subwords per word: 2, 1, 3, 1
    assert split_targets([(0, 2), (2, 4)], words, budget=10) == [(0, 3), (3, 7)]
    # one sentence of 7 subwords, windows of 4: split before word 2 and word 3 fits with it
    assert split_targets([(0, 4)], words, budget=4) == [(0, 3), (3, 7)]
    assert split_targets([(0, 4)], words, budget=3) == [(0, 3), (3, 6), (6, 7)]
    # every subword exactly once ...
    covered = [i for a, b in split_targets([(0, 4)], words, budget=3) for i in range(a, b)]
    assert covered == list(range(7))
    # ... but the subwords past the budget of a word longer than a whole window
    assert split_targets([(0, 4)], words, budget=2) == [(0, 2), (2, 3), (3, 5), (6, 7)]


def test_split_targets_packs_consecutive_sentences():
    words = [(i, i + 1) for i in range(14)]  # one subword per word
    sentences = [(0, 3), (3, 7), (7, 9), (9, 14)]  # 3, 4, 2 and 5 subwords
    assert split_targets(sentences, words, budget=20, pack=7) == [(0, 7), (7, 14)]
    assert split_targets(sentences, words, budget=20, pack=14) == [(0, 14)]
    assert split_targets(sentences, words, budget=20, pack=3) == [(0, 3), (3, 7), (7, 9),
                                                                  (9, 14)]
    # never more than a window: pack is capped at the budget
    assert split_targets(sentences, words, budget=6, pack=100) == [(0, 3), (3, 9), (9, 14)]


def test_context_window_shares_room_between_the_sides():
    assert context_window((10, 20), 100, budget=50, context=8) == (2, 28)
    assert context_window((10, 20), 100, budget=50, context=0) == (10, 20)
    assert context_window((3, 20), 22, budget=50, context=8) == (0, 22)  # document edges
    assert context_window((10, 20), 100, budget=14, context=8) == (8, 22)  # 2 + 2
    assert context_window((2, 20), 100, budget=30, context=8) == (0, 28)  # left needs 2 only


def test_pool_words_mean_and_first():
    states = np.arange(12, dtype=np.float32).reshape(6, 2)
    spans = [(0, 1), (1, 4), (4, 5)]  # the last subword belongs to no word (truncated)
    np.testing.assert_allclose(pool_words(states, spans, "first"), states[[0, 1, 4]])
    np.testing.assert_allclose(pool_words(states, spans, "mean"),
                               [states[0], states[1:4].mean(0), states[4]])
