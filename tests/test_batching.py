"""Tests of :mod:`docgraph.batching`: the token-budget sampler and the batches of the loader."""

from __future__ import annotations

import itertools
import random

import pytest
import torch
from conftest import TINY_MODEL

from docgraph.batching.sampler import TokenBudgetBatchSampler
from docgraph.model import GCDocConfig


def test_token_budget_sampler():
    rng = random.Random(0)
    lengths = [rng.randint(1, 60) for _ in range(200)] + [500]
    for shuffle in (False, True):
        sampler = TokenBudgetBatchSampler(lengths, 100, shuffle=shuffle, seed=1)
        batches = list(sampler)
        assert len(batches) == len(sampler)
        flat = sorted(i for b in batches for i in b)
        assert flat == list(range(len(lengths)))
        for b in batches:
            assert sum(lengths[i] for i in b) <= 100 or b == [200]
    plain = list(TokenBudgetBatchSampler(lengths, 100, shuffle=False))
    assert [i for b in plain for i in b] == list(range(len(lengths)))
    s = TokenBudgetBatchSampler(lengths, 100, seed=1)
    s.set_epoch(0)
    e0 = list(s)
    s.set_epoch(1)
    e1 = list(s)
    s.set_epoch(0)
    assert list(s) == e0 and e0 != e1


def test_token_budget_sampler_ddp():
    lengths = [5] * 37
    for replicas in (2, 3, 4):
        shards = [
            list(TokenBudgetBatchSampler(lengths, 10, seed=0, num_replicas=replicas, rank=r))
            for r in range(replicas)
        ]
        assert len({len(s) for s in shards}) == 1
        covered = {i for s in shards for b in s for i in b}
        assert covered == set(range(37))
    # an evenly divisible number of batches: disjoint shards
    even = [
        list(TokenBudgetBatchSampler([5] * 40, 10, seed=0, num_replicas=4, rank=r))
        for r in range(4)
    ]
    sets = [{i for b in s for i in b} for s in even]
    assert all(a.isdisjoint(b) for a, b in itertools.combinations(sets, 2))
    assert len({len(s) for s in even}) == 1


def test_prefetched_batches_equal_the_plain_ones_and_errors_reach_the_loop(sample_splits,
                                                                          sample_vocabs):
    from docgraph.batching.loader import iterate_batches
    from docgraph.batching.sampler import TokenBudgetBatchSampler
    from docgraph.graph import GraphConfig, documents_to_graphs
    from docgraph.persistence.model_dir import build_model

    graphs = documents_to_graphs(sample_splits["train"], sample_vocabs, GraphConfig())
    model = build_model(GCDocConfig(**TINY_MODEL), sample_vocabs)
    sampler = TokenBudgetBatchSampler([int(g.num_nodes) for g in graphs], 800, seed=3)
    plain = list(iterate_batches(graphs, sampler, torch.device("cpu"), model))
    ahead = list(iterate_batches(graphs, sampler, torch.device("cpu"), model, prefetch=2))
    assert [i for i, _ in plain] == [i for i, _ in ahead] and len(plain) > 2
    for (_, a), (_, b) in zip(plain, ahead):
        assert torch.equal(a.word, b.word) and b.plan.fits(model.config)
        assert b.plan.sentences.buckets[0].forward_index.equal(
            a.plan.sentences.buckets[0].forward_index)
    broken = [[0], [10**6]]  # the second batch names a graph that does not exist
    with pytest.raises(IndexError):
        list(iterate_batches(graphs, broken, torch.device("cpu"), model, prefetch=1))
