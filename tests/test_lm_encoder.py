"""The contextual encoder (:mod:`docgraph.data.lm_encoder`): its settings, the pooling of
subword states into word features, the document context of each window and the windows of long
sentences, checked against a manual computation with the tiny randomly initialised BERT of
``conftest.tiny_lm`` (4 layers, hidden 16, 32 positions, a 15-entry WordPiece vocabulary). How
the features reach GCDoc and the run end to end are ``test_contextual.py``'s.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
from conftest import (
    TINY_LM_POSITIONS,
    needs_transformers,
    plain_document,
)

from docgraph.data.document import make_document
from docgraph.data.lm_encoder import ContextualSettings


def _manual_states(enc, ids: list[int]) -> np.ndarray:
    """Mean of the last 4 hidden layers of [CLS] ids [SEP], special tokens removed."""
    full = torch.tensor([[2, *ids, 3]])
    with torch.no_grad():
        out = enc.model(input_ids=full, output_hidden_states=True)
    return torch.stack(out.hidden_states[-4:]).mean(0)[0, 1:-1].numpy()


def test_settings_validation():
    with pytest.raises(ValueError, match="lm_pooling"):
        ContextualSettings(pooling="max")
    with pytest.raises(ValueError, match="lm_context"):
        ContextualSettings(context=-1)


@needs_transformers
def test_pooling_matches_a_manual_computation(tiny_lm):
    from docgraph.data.lm_encoder import ContextualEncoder

    doc = plain_document("d", "The cats running dog .")
    for pooling in ("mean", "first"):
        enc = ContextualEncoder(tiny_lm, ContextualSettings(context=0, pooling=pooling))
        tokens = enc.tokenize(doc)
        assert tokens.ids == [5, 6, 13, 11, 12, 7, 14]
        assert tokens.word_spans == [(0, 1), (1, 3), (3, 5), (5, 6), (6, 7)]
        states = _manual_states(enc, tokens.ids)
        expected = ([states[0], states[1:3].mean(0), states[3:5].mean(0), states[5], states[6]]
                    if pooling == "mean" else states[[0, 1, 3, 5, 6]])
        got = enc.encode([doc])
        assert got.shape == (5, 16) and got.dtype == np.float32
        np.testing.assert_allclose(got, np.stack(expected), atol=1e-5)


@needs_transformers
def test_word_without_subwords_reads_as_unknown(encoder):
    tokens = encoder.tokenize(make_document("d", [(["the", "\u200b", "cat"], ["O"] * 3)]))
    assert tokens.ids == [5, 1, 6]


@needs_transformers
def test_document_context_stays_inside_the_document(tiny_lm):
    from docgraph.data.lm_encoder import ContextualEncoder

    enc = ContextualEncoder(tiny_lm, ContextualSettings(context=8))
    a = plain_document("a", "the cat sat", "on the mat")
    b = plain_document("b", "dog run the dog", "the mat")
    alone = enc.encode([a])
    together = enc.encode([b, a, b])
    n_b = b.num_tokens
    np.testing.assert_allclose(together[n_b:n_b + a.num_tokens], alone, atol=1e-5)
    # the neighbouring sentence of the same document is context: features change ...
    first_alone = enc.encode([plain_document("a", "the cat sat")])
    assert not np.allclose(alone[:3], first_alone, atol=1e-4)
    # ... and without context every sentence is encoded alone
    enc0 = ContextualEncoder(tiny_lm, ContextualSettings(context=0))
    np.testing.assert_allclose(enc0.encode([a])[:3],
                               enc0.encode([plain_document("x", "the cat sat")]), atol=1e-5)
    # the windows of one document never reach past its subwords
    tokens = enc.tokenize(a)
    for w in enc.windows(0, tokens):
        assert 0 <= w.start <= w.target_start < w.target_end <= w.end <= len(tokens.ids)


@needs_transformers
def test_packed_windows_equal_encoding_the_whole_document(tiny_lm):
    from docgraph.data.lm_encoder import ContextualEncoder

    doc = plain_document("d", "the cat sat", "on the mat", "dog run .")
    packed = ContextualEncoder(tiny_lm, ContextualSettings(context=4, pack=True))
    tokens = packed.tokenize(doc)
    assert len(tokens.ids) == 9 and len(packed.windows(0, tokens)) == 1
    states = _manual_states(packed, tokens.ids)  # the document as one sequence
    np.testing.assert_allclose(packed.encode([doc]), states, atol=1e-5)
    unpacked = ContextualEncoder(tiny_lm, ContextualSettings(context=4))
    assert len(unpacked.windows(0, tokens)) == 3
    assert not np.allclose(unpacked.encode([doc]), states, atol=1e-4)


@needs_transformers
def test_packed_windows_keep_the_context_and_encode_fewer_subwords(tiny_lm):
    from docgraph.data.lm_encoder import ContextualEncoder

    doc = plain_document("d", *["the cat sat ."] * 12)  # 48 subwords, windows of at most 30
    packed = ContextualEncoder(tiny_lm, ContextualSettings(context=4, pack=True))
    unpacked = ContextualEncoder(tiny_lm, ContextualSettings(context=4))
    tokens = packed.tokenize(doc)
    windows = packed.windows(0, tokens)
    assert [(w.target_start, w.target_end) for w in windows] == [(0, 20), (20, 40), (40, 48)]
    for w in windows:
        assert w.end - w.start <= packed.budget
        assert w.target_start - w.start == min(4, w.target_start)
        assert w.end - w.target_end == min(4, 48 - w.target_end)
    encoded = sum(w.end - w.start for w in windows)
    assert encoded == 24 + 28 + 12
    assert sum(w.end - w.start for w in unpacked.windows(0, tokens)) == 10 * 12 + 2 * 8
    features = packed.encode([doc])
    assert features.shape == (48, 16) and np.all(np.abs(features).sum(1) > 0)
    # the settings key: unchanged without packing (earlier caches stay valid), new with it
    assert "pack" not in unpacked.settings.cache_dict()
    assert packed.settings.cache_dict()["pack"] is True


@needs_transformers
def test_long_sentence_is_split_into_windows_not_truncated(encoder, caplog):
    words = ("the cats running dog . " * 14).split()  # 70 words, 98 subwords > 30
    doc = make_document("long", [(words, ["O"] * len(words))])
    tokens = encoder.tokenize(doc)
    windows = encoder.windows(0, tokens)
    assert encoder.budget == TINY_LM_POSITIONS - 2 and len(windows) >= 4
    assert all(w.end - w.start <= encoder.budget for w in windows)
    covered = sorted(i for w in windows for i in range(w.target_start, w.target_end))
    assert covered == list(range(len(tokens.ids)))
    features = encoder.encode([doc])
    assert features.shape == (70, 16)
    assert np.all(np.abs(features).sum(1) > 0)
    # a single word with more subwords than a window keeps its first ones, with a warning
    giant = make_document("giant", [(["cat" + "s" * 40, "dog"], ["O", "O"])])
    with caplog.at_level(logging.WARNING, logger="docgraph"):
        out = encoder.encode([giant])
    assert out.shape == (2, 16) and "more than 30 subwords" in caplog.text


@needs_transformers
def test_encoder_from_config_takes_the_lm_settings(tiny_lm):
    from docgraph.config import ExperimentConfig
    from docgraph.data.lm_encoder import ContextualEncoder

    config = ExperimentConfig(lm=str(tiny_lm), lm_context=5, lm_pooling="first", lm_layers=2,
                              lm_pack=True)
    assert ContextualEncoder.from_config(config).settings == ContextualSettings(
        context=5, pooling="first", layers=2, pack=True)
