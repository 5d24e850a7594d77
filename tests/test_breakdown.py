"""Tests of the per-component breakdown of a GCDoc training step (docgraph_dev/breakdown.py)."""

from __future__ import annotations

from conftest import HAND_COUNT_MODEL, three_sentence_batch

from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph_dev.breakdown import component_parts


def test_component_parts_run() -> None:
    vocabs, batch = three_sentence_batch()
    model = build_model(GCDocConfig(**HAND_COUNT_MODEL), vocabs)
    parts = component_parts(model, batch)
    assert set(parts) == {
        "char_encoder",
        "cross_sentence",
        "context_bilstm",
        "uncertainty_mc",
        "uncertainty_train",
        "relation_graph",
        "emission_crf",
    }
    for fn in parts.values():
        fn()
