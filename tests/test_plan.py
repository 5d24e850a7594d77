"""Tests of :mod:`docgraph.batching.plan`: what a batch's shapes ask of the model, planned on
the host (sentence layouts, Monte-Carlo copies and keys, distinct words, cross-sentence
windows, the nodes that receive edges)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch

from docgraph.batching.plan import (
    CPU_BUCKETS,
    GPU_BUCKETS,
    BatchPlan,
    buckets_for,
    monte_carlo_keys,
    plan_batch,
    plan_key,
)
from docgraph.config.fields import PLAN, fields_marked
from docgraph.config.graph import GraphConfig
from docgraph.data.document import make_document
from docgraph.data.vocab import Vocabularies
from docgraph.graph.build import documents_to_graphs
from docgraph.model import GCDocConfig

#: Two documents: "Paris" twice in the first, "Rome" twice in the second ("paris" once).
SENTENCES = (
    [(["Paris", "is", "big"], ["B-LOC", "O", "O"]), (["Paris", "again"], ["B-LOC", "O"])],
    [(["Rome"], ["B-LOC"]), (["paris", "x", "Rome"], ["B-LOC", "O", "B-LOC"]), (["y"], ["O"])],
)


def _graphs(sentences=SENTENCES):
    docs = [make_document(f"d{k}", s) for k, s in enumerate(sentences)]
    vocabs = Vocabularies.build([make_document(f"d{k}", s) for k, s in enumerate(SENTENCES)])
    return documents_to_graphs(docs, vocabs, GraphConfig(max_neighbours=None))


@pytest.fixture(scope="module")
def batch():
    return Batch.from_data_list(_graphs())


def test_buckets_for_the_device():
    assert buckets_for(torch.device("cuda")) == GPU_BUCKETS == 1
    assert buckets_for(torch.device("cpu")) == CPU_BUCKETS > 1


def test_plan_key_is_the_plan_fields_of_the_configuration():
    config = GCDocConfig(window=3, num_samples=4)
    assert plan_key(config) == tuple(getattr(config, f) for f in fields_marked(GCDocConfig,
                                                                                 PLAN))
    assert plan_key(config) == plan_key(replace(config, hidden=7, threshold=2.0))


def test_a_plan_fits_the_configuration_it_was_made_for(batch):
    config = GCDocConfig()
    plan = plan_batch(batch, config)
    assert plan.fits(config) and plan.fits(replace(config, hidden=3))
    assert not plan.fits(replace(config, window=1))
    assert not plan.fits(replace(config, mc_dropout="output"))


def test_the_sentences_of_the_plan_and_their_documents(batch):
    plan = plan_batch(batch, GCDocConfig())
    assert plan.sentences.host_lengths.tolist() == [3, 2, 1, 3, 1]
    assert plan.sentence_doc.tolist() == [0, 0, 1, 1, 1]
    single = plan_batch(_graphs()[1], GCDocConfig())  # a graph that is not a Batch
    assert single.sentence_doc.tolist() == [0, 0, 0]


def test_the_full_model_plans_every_part(batch):
    config = GCDocConfig(num_samples=3)
    plan = plan_batch(batch, config)
    assert plan.monte_carlo is not None
    assert plan.monte_carlo.host_lengths.tolist() == [3, 2, 1, 3, 1] * 3  # T copies
    assert plan.mc_keys.sizes == (5, 5)
    assert plan.previous is not None and plan.next is not None
    assert plan.sentence_windows is None
    # the first sentence of each document has no previous window, the last no next one
    assert plan.previous.has_window.tolist() == [False, True, False, True, True]
    assert plan.next.has_window.tolist() == [True, False, True, True, False]


def test_the_nodes_that_receive_edges_against_brute_force(batch):
    plan = plan_batch(batch, GCDocConfig())
    words = [w.lower() for doc in SENTENCES for tokens, _ in doc for w in tokens]
    doc_of = [0] * 5 + [1] * 5
    receives = [i for i in range(10) if any(
        j != i and doc_of[j] == doc_of[i] and words[j] == words[i] for j in range(10))]
    assert plan.gated_nodes.tolist() == receives == [0, 3, 5, 8]
    targets = batch.edge_index[1].tolist()
    counts = [targets.count(i) for i in receives]
    assert plan.edge_ptr.tolist() == np.concatenate([[0], np.cumsum(counts)]).tolist()


def test_edges_not_sorted_by_target_plan_no_segments(batch):
    shuffled = batch.clone()
    shuffled.edge_index = shuffled.edge_index.flip(1)
    plan = plan_batch(shuffled, GCDocConfig())
    assert plan.gated_nodes is None and plan.edge_ptr is None


def test_the_distinct_words_of_the_character_encoder(batch):
    chars = plan_batch(batch, GCDocConfig()).chars
    inverse = chars.inverse.tolist()
    assert inverse[0] == inverse[3]  # "Paris" twice
    assert inverse[5] == inverse[8]  # "Rome" twice
    assert inverse[6] != inverse[0]  # "paris" is other characters
    assert len(chars.unique_tokens) == len(set(inverse)) == 8


@pytest.mark.parametrize(("changes", "absent"), [
    ({"graph": False, "cross_sentence": False},
     ("monte_carlo", "mc_keys", "previous", "next", "sentence_windows", "gated_nodes")),
    ({"graph": False}, ("monte_carlo", "mc_keys", "sentence_windows", "gated_nodes")),
    ({"pruning": False}, ("monte_carlo", "mc_keys", "sentence_windows")),
    ({"mc_dropout": "output"}, ("monte_carlo", "sentence_windows")),
    ({"window": 0}, ("previous", "next", "sentence_windows")),
    ({"use_previous": False}, ("previous", "sentence_windows")),
    ({"use_next": False}, ("next", "sentence_windows")),
    ({"window_encoding": "per_sentence"}, ("previous", "next")),
])
def test_a_model_without_a_part_gets_no_plan_of_it(batch, changes, absent):
    plan = plan_batch(batch, GCDocConfig(**changes))
    parts = ("monte_carlo", "mc_keys", "previous", "next", "sentence_windows", "gated_nodes")
    assert {p for p in parts if getattr(plan, p) is None} == set(absent)


def test_the_floating_tensors_of_a_plan_take_the_models_dtype(batch):
    plan = plan_batch(batch, GCDocConfig(), dtype=torch.float64)
    assert plan.dtype == torch.float64
    assert plan.sentences.buckets[0].mean_weights.dtype == torch.float64
    assert plan_batch(batch, GCDocConfig()).dtype == torch.get_default_dtype()
    moved = plan.to("cpu", dtype=torch.float32)
    assert isinstance(moved, BatchPlan) and moved is not plan
    assert moved.dtype == torch.float32 and moved.key == plan.key
    assert moved.sentences.buckets[0].mean_weights.dtype == torch.float32
    assert moved.sentences.buckets[0].forward_index.dtype == torch.long  # integers stay
    assert moved.mc_keys == plan.mc_keys
    assert plan.to("cpu").dtype == torch.float64  # no dtype: unchanged


def test_monte_carlo_keys_follow_the_document_not_the_batch(sample_splits, sample_vocabs):
    graphs = documents_to_graphs(sample_splits["dev"][:3], sample_vocabs, GraphConfig(seed=1))
    alone = [monte_carlo_keys(Batch.from_data_list([g])) for g in graphs]
    together = monte_carlo_keys(Batch.from_data_list(graphs))
    assert together.sizes == tuple(int(g.num_nodes) for g in graphs)
    assert together.keys == tuple(k.keys[0] for k in alone)
    assert len(set(together.keys)) == 3
    single = monte_carlo_keys(graphs[1])  # a graph that is not a Batch: one segment
    assert single == alone[1]


def test_monte_carlo_keys_hash_the_words_characters_and_sentences_only():
    same = monte_carlo_keys(Batch.from_data_list(_graphs((SENTENCES[0], SENTENCES[0]))))
    assert same.keys[0] == same.keys[1]  # equal documents, whatever their ids
    other_word = [(["Paris", "is", "small"], ["B-LOC", "O", "O"]), SENTENCES[0][1]]
    resplit = [(["Paris", "is"], ["B-LOC", "O"]), (["big", "Paris", "again"], ["O", "B-LOC", "O"])]
    keys = monte_carlo_keys(Batch.from_data_list(_graphs((SENTENCES[0], other_word, resplit))))
    assert len(set(keys.keys)) == 3  # another word, or other sentence boundaries
