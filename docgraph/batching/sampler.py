"""Batches of graph indices within a token budget: length-bucketed shuffling, DDP shards.

Training batches its document graphs with :class:`TokenBudgetBatchSampler`; it sees only the
number of tokens of each graph. The steps are small pure functions: :func:`bucketed_order`,
:func:`shard` and the greedy packing that tagging uses alone
(:func:`~docgraph.batching.loader.pack_greedily`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
from torch.utils.data import Sampler

from docgraph.batching.loader import pack_greedily


def bucketed_order(lengths: np.ndarray, perm: np.ndarray, bucket_size: int) -> np.ndarray:
    """``perm`` cut into buckets of ``bucket_size`` indices, each sorted by length (stable),
    so that consecutive graphs have similar lengths."""
    n = perm.size
    if not n:
        return perm
    buckets = np.split(perm, range(bucket_size, n, bucket_size))
    return np.concatenate([b[np.argsort(lengths[b], kind="stable")] for b in buckets])


def shard(batches: list[list[int]], num_replicas: int, rank: int) -> list[list[int]]:
    """Every ``num_replicas``-th batch from ``rank`` on, after padding the list by repeating
    batches from its start so that all ranks get the same number of batches."""
    if num_replicas <= 1 or not batches:
        return batches
    total = math.ceil(len(batches) / num_replicas) * num_replicas
    padded = [batches[k % len(batches)] for k in range(total)]
    return padded[rank::num_replicas]


class TokenBudgetBatchSampler(Sampler[list[int]]):
    """Batches of graph indices whose total number of tokens stays within a budget.

    Without shuffling, graphs are packed greedily in order. With shuffling, each epoch permutes
    the graphs, sorts them by length within random buckets of ``bucket_size`` graphs (so a batch
    holds graphs of similar length), packs them greedily and shuffles the batches. A graph
    longer than the budget is a batch on its own. With ``num_replicas > 1`` (DDP) every rank
    takes every ``num_replicas``-th batch; the batch list is first padded by repeating batches
    from its start so that all ranks get the same number of batches.

    Args:
        lengths: Number of tokens of each graph.
        max_tokens: Token budget per batch.
        shuffle: Shuffle every epoch (see :meth:`set_epoch`).
        seed: Seed of the shuffling.
        num_replicas: Number of DDP processes.
        rank: This process's rank.
        bucket_size: Graphs per length-sorting bucket when shuffling.
    """

    def __init__(
        self,
        lengths: Sequence[int],
        max_tokens: int,
        shuffle: bool = True,
        seed: int = 0,
        num_replicas: int = 1,
        rank: int = 0,
        bucket_size: int = 100,
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if num_replicas < 1 or not 0 <= rank < num_replicas:
            raise ValueError(f"invalid rank {rank} for {num_replicas} replicas")
        if bucket_size < 1:
            raise ValueError(f"bucket_size must be >= 1, got {bucket_size}")
        self.lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
        self.max_tokens = max_tokens
        self.shuffle = shuffle
        self.seed = seed
        self.num_replicas = num_replicas
        self.rank = rank
        self.bucket_size = bucket_size
        self.epoch = 0
        self._cache: tuple[int, list[list[int]]] | None = None

    def set_epoch(self, epoch: int) -> None:
        """Select the shuffle of ``epoch`` (call before iterating, as with DDP samplers)."""
        self.epoch = epoch

    def all_batches(self) -> list[list[int]]:
        """The batches of the current epoch over all ranks (before DDP padding)."""
        n = self.lengths.size
        if not self.shuffle:
            return pack_greedily(self.lengths, range(n), self.max_tokens)
        rng = np.random.default_rng([self.seed, self.epoch])
        order = bucketed_order(self.lengths, rng.permutation(n), self.bucket_size)
        batches = pack_greedily(self.lengths, order, self.max_tokens)
        return [batches[k] for k in rng.permutation(len(batches))]

    def _rank_batches(self) -> list[list[int]]:
        if self._cache is None or self._cache[0] != self.epoch:
            self._cache = (self.epoch, shard(self.all_batches(), self.num_replicas, self.rank))
        return self._cache[1]

    def __iter__(self) -> Iterator[list[int]]:
        return iter([list(b) for b in self._rank_batches()])

    def __len__(self) -> int:
        return len(self._rank_batches())
