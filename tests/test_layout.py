"""Host-planned sequence layouts (:mod:`docgraph.nn.layout`) against plain per-sequence runs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from docgraph.nn.layout import SequenceLayout, length_partition, run_bilstm, segment_means


def _padded_cost(lengths: np.ndarray, bucket: np.ndarray) -> int:
    return int(sum(lengths[bucket == b].max() * (bucket == b).sum() for b in np.unique(bucket)))


def test_length_partition_is_optimal_against_every_cut():
    rng = np.random.default_rng(0)
    for _ in range(150):
        lengths = rng.integers(1, 14, size=int(rng.integers(1, 11)))
        most = int(rng.integers(1, 5))
        bucket = length_partition(lengths, most)
        assert len(np.unique(bucket)) <= most
        order = np.argsort(lengths, kind="stable")
        assert np.all(np.diff(bucket[order]) >= 0)  # groups of consecutive lengths
        values = np.unique(lengths)
        best = min(
            _padded_cost(lengths, np.searchsorted(values[list(cut)], lengths))
            for k in range(min(most, values.size))
            for cut in itertools.combinations(range(values.size - 1), k)
        )
        assert _padded_cost(lengths, bucket) == best


@pytest.mark.parametrize("buckets", [1, 2, 6])
def test_run_bilstm_equals_each_sequence_alone(buckets):
    # Sequences anywhere in the source (overlapping, out of order), of lengths 1..9: every
    # output equals nn.LSTM run on that sequence alone, and so do the final states.
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(5, 4, batch_first=True, bidirectional=True).double()
    x = torch.randn(30, 5, dtype=torch.float64, requires_grad=True)
    starts = [3, 0, 20, 7, 7, 12, 1, 25]
    lengths = [4, 1, 9, 2, 5, 3, 7, 5]
    layout = SequenceLayout.from_lengths(lengths, starts, buckets=buckets)
    assert len(layout.buckets) <= buckets
    out = run_bilstm(lstm, x, layout)
    finals = run_bilstm(lstm, x, layout, final_states=True)
    expected, expected_final = [], []
    for s, n in zip(starts, lengths):
        alone, _ = lstm(x[s:s + n].unsqueeze(0))
        expected.append(alone[0])
        expected_final.append(torch.cat([alone[0, -1, :4], alone[0, 0, 4:]]))
    torch.testing.assert_close(out, torch.cat(expected))
    torch.testing.assert_close(finals, torch.stack(expected_final))
    grad = torch.autograd.grad(out.sum() + finals.sum(), x)[0]
    ref = torch.autograd.grad(torch.cat(expected).sum() + torch.stack(expected_final).sum(), x)[0]
    torch.testing.assert_close(grad, ref)
    means = segment_means(out, layout)
    torch.testing.assert_close(means, torch.stack([e.mean(0) for e in expected]))


def test_layout_indices_by_hand():
    layout = SequenceLayout.from_lengths([2, 3, 1], buckets=1)
    # sentences tile the source: rows 0-1, 2-4, 5
    assert layout.crf_index.tolist() == [[0, 1, 0], [2, 3, 4], [5, 5, 5]]
    assert layout.crf_mask.tolist() == [[True, True, False], [True, True, True],
                                        [True, False, False]]
    assert layout.crf_last.tolist() == [1, 5, 6]
    assert layout.crf_reverse.tolist() == [[1, 0, 2], [2, 1, 0], [0, 1, 2]]
    # packed: step 0 has all three (longest first: 1, 0, 2), step 1 two, step 2 one
    assert layout.batch_sizes == [3, 2, 1]
    assert layout.sort_order.tolist() == [1, 0, 2]
    assert layout.packed_index.tolist() == [2, 0, 5, 3, 1, 4]
    assert layout.packed_last.tolist() == [5, 4, 2]
    bucket = layout.buckets[0]
    assert bucket.forward_index.tolist() == [[0, 1, 0], [2, 3, 4], [5, 0, 0]]
    assert bucket.reverse_index.tolist() == [[1, 0, 0], [4, 3, 2], [5, 0, 0]]


def test_layout_rejects_empty_sequences_and_bad_bucket_counts():
    with pytest.raises(ValueError, match="length >= 1"):
        SequenceLayout.from_lengths([2, 0, 1])
    with pytest.raises(ValueError, match="buckets must be >= 1"):
        SequenceLayout.from_lengths([2, 1], buckets=0)
