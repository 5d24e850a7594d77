"""Tests of :mod:`docgraph.config.graph`: how documents become graphs, its checks and the
seed of the neighbour sampling."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from docgraph.config import ConfigError, ExperimentConfig
from docgraph.config.graph import GraphConfig
from docgraph.data.document import make_document
from docgraph.data.vocab import Vocabularies
from docgraph.graph.build import documents_to_graphs


def test_the_defaults_are_the_papers():
    config = GraphConfig()
    assert (config.max_neighbours, config.lowercase, config.skip_tokens) == (5, True, frozenset())
    assert (config.seed, config.max_word_len, config.max_doc_tokens) == (None, 20, None)


def test_skip_tokens_become_a_frozenset():
    config = GraphConfig(skip_tokens=["the", ".", "the"])
    assert config.skip_tokens == frozenset({"the", "."})
    assert isinstance(config.skip_tokens, frozenset)


def test_optional_limits_take_none_and_zero_neighbours():
    assert GraphConfig(max_neighbours=None).max_neighbours is None
    assert GraphConfig(max_neighbours=0).max_neighbours == 0  # 0 keeps every neighbour
    assert GraphConfig(max_doc_tokens=1).max_doc_tokens == 1


@pytest.mark.parametrize(("changes", "message"), [
    ({"max_neighbours": -1}, "max_neighbours = -1: expected an integer >= 0 (or none)"),
    ({"seed": -1}, "seed = -1: expected an integer >= 0 (or none)"),
    ({"max_doc_tokens": 0}, "max_doc_tokens = 0: expected an integer >= 1 (or none)"),
    ({"max_word_len": 0}, "max_word_len = 0: expected an integer >= 1"),
    ({"lowercase": 1}, "lowercase = 1: expected true or false"),
    ({"skip_tokens": "the"}, "skip_tokens = 'the': expected a list of strings"),
])
def test_bad_values_name_the_graph_field(changes, message):
    with pytest.raises(ConfigError) as info:
        GraphConfig(**changes)
    assert str(info.value) == f"[graph] {message}"


def test_resolve_fills_an_unset_seed_with_the_run_seed_only():
    unset = GraphConfig(max_neighbours=3)
    resolved = unset.resolve(7)
    assert resolved.seed == 7 and resolved.max_neighbours == 3
    assert unset.seed is None  # a copy: the configuration itself is unchanged
    assert GraphConfig(seed=0).resolve(7).seed == 0


def test_an_unresolved_seed_samples_neighbours_as_seed_zero():
    doc = make_document("d", [(["a"] * 12, ["O"] * 12)])
    vocabs = Vocabularies.build([doc])

    def edges(config):
        return documents_to_graphs([doc], vocabs, config)[0].edge_index

    unresolved = edges(GraphConfig(max_neighbours=2))
    assert torch.equal(unresolved, edges(GraphConfig(max_neighbours=2, seed=0)))
    assert not torch.equal(unresolved, edges(GraphConfig(max_neighbours=2, seed=4)))
    assert torch.equal(edges(GraphConfig(max_neighbours=2).resolve(4)),
                       edges(GraphConfig(max_neighbours=2, seed=4)))


def test_graph_seed_defaults_to_the_run_seed():
    assert GraphConfig().seed is None
    one, two = ExperimentConfig(seed=1), ExperimentConfig(seed=2)
    assert one.graph_config().seed == 1 and two.graph_config().seed == 2
    assert one.graph.seed is None  # resolving does not mutate the configuration
    # run_seeds replaces the seed of one configuration: the graph seed follows it.
    assert replace(one, seed=7).graph_config().seed == 7
    # An explicit value pins the sampling across runs (the config.json of older runs holds 0).
    pinned = ExperimentConfig.from_dict({"seed": 5, "graph": {"seed": 0}})
    assert pinned.graph_config().seed == 0
    assert ExperimentConfig.from_dict(one.to_dict()).graph.seed is None  # round trip
