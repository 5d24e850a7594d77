"""Tests of :mod:`docgraph.batching.sampler`: length buckets, DDP shards and the token-budget
batch sampler built from them."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from docgraph.batching.sampler import TokenBudgetBatchSampler, bucketed_order, shard


# --------------------------------------------------------------------------- bucketed_order
def test_bucketed_order_sorts_each_bucket_by_length_stably():
    lengths = np.array([5, 1, 3, 3, 2])
    order = bucketed_order(lengths, np.arange(5), 2)
    # buckets [0, 1] [2, 3] [4]: sorted within, the two 3s keep their order
    assert order.tolist() == [1, 0, 2, 3, 4]
    assert bucketed_order(lengths, np.array([3, 2]), 2).tolist() == [3, 2]


def test_bucketed_order_with_one_bucket_sorts_everything():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 50, size=30)
    perm = rng.permutation(30)
    order = bucketed_order(lengths, perm, 100)
    assert sorted(order.tolist()) == list(range(30))
    assert lengths[order].tolist() == sorted(lengths.tolist())


def test_bucketed_order_of_nothing_is_empty():
    assert bucketed_order(np.array([], dtype=np.int64), np.array([], dtype=np.int64), 3).size == 0


# ------------------------------------------------------------------------------------ shard
def test_shard_pads_by_repeating_batches_from_the_start():
    batches = [[0], [1], [2], [3], [4]]
    assert shard(batches, 2, 0) == [[0], [2], [4]]
    assert shard(batches, 2, 1) == [[1], [3], [0]]  # padded with the first batch
    assert shard([[0], [1]], 3, 2) == [[0]]


def test_shard_of_one_replica_or_no_batches_is_unchanged():
    batches = [[0], [1]]
    assert shard(batches, 1, 0) is batches
    assert shard([], 4, 3) == []


# ------------------------------------------------------------------ TokenBudgetBatchSampler
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


def test_sampler_without_shuffling_is_greedy_packing_in_order():
    lengths = [3, 4, 2, 6, 1]
    sampler = TokenBudgetBatchSampler(lengths, 6, shuffle=False)
    assert list(sampler) == [[0], [1, 2], [3], [4]]
    assert sampler.all_batches() == [[0], [1, 2], [3], [4]]


def test_shuffled_batches_hold_graphs_of_neighbouring_lengths():
    # one bucket over all graphs: every batch is a run of the graphs sorted by length
    lengths = list(range(1, 41))
    sampler = TokenBudgetBatchSampler(lengths, 30, seed=2, bucket_size=len(lengths))
    batches = list(sampler)
    assert sorted(i for b in batches for i in b) == list(range(40))
    for batch in batches:
        sizes = sorted(lengths[i] for i in batch)
        assert sizes == list(range(sizes[0], sizes[-1] + 1))
    # the batches themselves come in a shuffled order
    firsts = [min(lengths[i] for i in b) for b in batches]
    assert firsts != sorted(firsts)


def test_same_seed_and_epoch_give_the_same_batches_another_seed_others():
    lengths = [random.Random(3).randint(1, 30) for _ in range(60)]
    a = TokenBudgetBatchSampler(lengths, 50, seed=7)
    b = TokenBudgetBatchSampler(lengths, 50, seed=7)
    c = TokenBudgetBatchSampler(lengths, 50, seed=8)
    assert list(a) == list(b) != list(c)


def test_sampler_hands_out_copies_of_its_batches():
    sampler = TokenBudgetBatchSampler([1, 1, 1], 2, shuffle=False)
    first = list(sampler)
    first[0].append(99)
    assert list(sampler) == [[0, 1], [2]]


def test_sampler_of_no_graphs_has_no_batches():
    for shuffle in (False, True):
        sampler = TokenBudgetBatchSampler([], 10, shuffle=shuffle, num_replicas=2, rank=1)
        assert len(sampler) == 0 and list(sampler) == []


def test_rank_shards_of_the_sampler_are_every_nth_batch_of_all_batches():
    lengths = [4, 4, 4, 4, 4, 4, 4]  # one graph per batch with a budget of 5
    whole = TokenBudgetBatchSampler(lengths, 5, seed=1).all_batches()
    ranks = [list(TokenBudgetBatchSampler(lengths, 5, seed=1, num_replicas=3, rank=r))
             for r in range(3)]
    padded = whole + whole[:2]
    assert ranks == [padded[r::3] for r in range(3)]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_tokens": 0}, "max_tokens must be >= 1, got 0"),
    ({"num_replicas": 0}, "invalid rank 0 for 0 replicas"),
    ({"num_replicas": 2, "rank": 2}, "invalid rank 2 for 2 replicas"),
    ({"rank": -1}, "invalid rank -1 for 1 replicas"),
    ({"bucket_size": 0}, "bucket_size must be >= 1, got 0"),
])
def test_sampler_refuses_bad_settings(kwargs, message):
    settings = {"max_tokens": 10, **kwargs}
    with pytest.raises(ValueError, match=f"^{message}$"):
        TokenBudgetBatchSampler([1, 2, 3], **settings)
