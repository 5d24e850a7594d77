"""Tests of :mod:`docgraph.batching.loader`: greedy packing, collation with the host-side plan
and the prefetching of batches in a background thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from conftest import TINY_MODEL

from docgraph.batching.loader import PlanSettings, collate, iterate_batches, pack_greedily
from docgraph.batching.sampler import TokenBudgetBatchSampler
from docgraph.config.graph import GraphConfig
from docgraph.data.document import make_document
from docgraph.data.vocab import Vocabularies
from docgraph.graph.build import documents_to_graphs
from docgraph.model import GCDocConfig

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def graphs():
    docs = [make_document(f"d{k}", [(["the", "cat", "sat"][: k + 1], ["O"] * (k + 1)),
                                    (["the", "end"], ["O", "O"])]) for k in range(3)]
    return documents_to_graphs(docs, Vocabularies.build(docs), GraphConfig())


# ---------------------------------------------------------------------------- pack_greedily
def test_pack_greedily_fills_each_batch_up_to_the_budget_inclusive():
    lengths = np.array([3, 4, 2, 6, 1])
    # 3 | 4 + 2 = 6 (exactly the budget) | 6 | 1
    assert pack_greedily(lengths, range(5), 6) == [[0], [1, 2], [3], [4]]


def test_pack_greedily_follows_the_given_order():
    lengths = np.array([3, 4, 2, 6, 1])
    assert pack_greedily(lengths, [4, 3, 2, 1, 0], 6) == [[4], [3], [2, 1], [0]]


def test_pack_greedily_gives_a_graph_over_the_budget_a_batch_of_its_own():
    lengths = np.array([2, 10, 2, 2])
    assert pack_greedily(lengths, range(4), 5) == [[0], [1], [2, 3]]
    assert pack_greedily(np.array([10]), [0], 5) == [[0]]


def test_pack_greedily_of_nothing_is_no_batch():
    assert pack_greedily(np.array([], dtype=np.int64), [], 5) == []


def test_pack_greedily_returns_python_ints():
    batches = pack_greedily(np.array([1, 1]), np.array([1, 0]), 5)
    assert batches == [[1, 0]] and all(type(i) is int for i in batches[0])


# ---------------------------------------------------------------------------- collate
def test_collate_batches_the_graphs_in_the_order_of_the_indices(graphs):
    batch = collate(graphs, [2, 0], CPU)
    assert batch.num_graphs == 2
    assert torch.equal(batch.word, torch.cat([graphs[2].word, graphs[0].word]))
    assert batch.ptr.tolist() == [0, 5, 8]
    assert not hasattr(batch, "plan")  # no model, no plan


def test_collate_attaches_the_plan_of_the_model(graphs):
    settings = PlanSettings(GCDocConfig(**TINY_MODEL), torch.float64)
    batch = collate(graphs, [0, 1], CPU, settings)
    assert batch.plan.fits(settings.config)
    assert not batch.plan.fits(GCDocConfig(**TINY_MODEL, window=1))
    assert batch.plan.dtype == torch.float64
    assert batch.plan.sentences.buckets[0].mean_weights.dtype == torch.float64
    assert batch.plan.sentences.host_lengths.tolist() == [1, 2, 2, 2]
    assert batch.plan.mc_keys.sizes == (3, 4)


def test_iterate_batches_yields_the_sampler_indices_with_their_batches(graphs):
    batches = [[1], [0, 2]]
    for prefetch in (0, 1, 3):
        got = list(iterate_batches(graphs, batches, CPU, prefetch=prefetch))
        assert [indices for indices, _ in got] == batches, prefetch
        assert [b.num_graphs for _, b in got] == [1, 2]
        assert torch.equal(got[1][1].word, torch.cat([graphs[0].word, graphs[2].word]))


def test_iterate_batches_of_no_batches_yields_nothing(graphs):
    assert list(iterate_batches(graphs, [], CPU)) == []
    assert list(iterate_batches(graphs, [], CPU, prefetch=2)) == []


def test_a_prefetching_loop_left_early_stops_its_thread(graphs):
    loop = iterate_batches(graphs, [[0], [1], [2], [0], [1]], CPU, prefetch=1)
    indices, _ = next(loop)
    assert indices == [0]
    loop.close()
    assert not any(t.name == "collate" and t.is_alive() for t in threading.enumerate())


def test_prefetched_batches_equal_the_plain_ones_and_errors_reach_the_loop(sample_splits,
                                                                          sample_vocabs):
    from docgraph.graph import GraphConfig, documents_to_graphs
    from docgraph.persistence.model_dir import build_model

    graphs = documents_to_graphs(sample_splits["train"], sample_vocabs, GraphConfig())
    model = build_model(GCDocConfig(**TINY_MODEL), sample_vocabs)
    sampler = TokenBudgetBatchSampler([int(g.num_nodes) for g in graphs], 800, seed=3)
    settings = model.plan_settings()
    plain = list(iterate_batches(graphs, sampler, CPU, settings))
    ahead = list(iterate_batches(graphs, sampler, CPU, settings, prefetch=2))
    assert [i for i, _ in plain] == [i for i, _ in ahead] and len(plain) > 2
    for (_, a), (_, b) in zip(plain, ahead):
        assert torch.equal(a.word, b.word) and b.plan.fits(model.config)
        assert b.plan.sentences.buckets[0].forward_index.equal(
            a.plan.sentences.buckets[0].forward_index)
    broken = [[0], [10**6]]  # the second batch names a graph that does not exist
    with pytest.raises(IndexError):
        list(iterate_batches(graphs, broken, CPU, settings, prefetch=1))
