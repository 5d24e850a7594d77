"""Tests of the batches a measurement times (docgraph_dev/batches.py)."""

from __future__ import annotations

from docgraph_dev.batches import split_batch


def test_split_batch_balances_tokens_and_keeps_order() -> None:
    lengths = [10, 1, 7, 3, 3]
    parts = split_batch([0, 1, 2, 3, 4], lengths, 2)
    assert sorted(i for p in parts for i in p) == [0, 1, 2, 3, 4]
    assert all(p == sorted(p) for p in parts)
    loads = [sum(lengths[i] for i in p) for p in parts]
    assert sorted(loads) == [11, 13]  # greedy longest-first: 10+3 | 7+3+1
    assert split_batch([3], lengths, 2) == [[3], []]
