"""examples/: code that puts docgraph into models we did not write for it, run as tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_gru_tagger_with_the_document_graph_module_learns_on_the_sample_corpus():
    example = _load("gru_document_graph")
    losses = example.train(steps=12)
    assert len(losses) == 12
    assert sum(losses[-3:]) / 3 < 0.7 * sum(losses[:3]) / 3, losses
