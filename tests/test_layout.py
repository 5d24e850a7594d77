"""Host-planned sequence layouts (:mod:`docgraph.nn.layout`) against plain per-sequence runs."""

from __future__ import annotations

import itertools
from dataclasses import fields

import numpy as np
import pytest
import torch

from docgraph.nn.layout import (
    CUDNN_LSTM,
    DirectionLSTM,
    SequenceLayout,
    ShapeGrid,
    length_partition,
    lstm_direction,
    run_bilstm,
    segment_means,
)


def _padded_cost(lengths: np.ndarray, bucket: np.ndarray, row_quantum: int = 1) -> int:
    return int(sum(lengths[bucket == b].max() * -(-(bucket == b).sum() // row_quantum)
                   * row_quantum for b in np.unique(bucket)))


@pytest.mark.parametrize("row_quantum", [1, 3, 8])
def test_length_partition_is_optimal_against_every_cut(row_quantum):
    rng = np.random.default_rng(0)
    for _ in range(150):
        lengths = rng.integers(1, 14, size=int(rng.integers(1, 11)))
        most = int(rng.integers(1, 5))
        bucket = length_partition(lengths, most, row_quantum)
        assert len(np.unique(bucket)) <= most
        order = np.argsort(lengths, kind="stable")
        assert np.all(np.diff(bucket[order]) >= 0)  # groups of consecutive lengths
        values = np.unique(lengths)
        best = min(
            _padded_cost(lengths, np.searchsorted(values[list(cut)], lengths), row_quantum)
            for k in range(min(most, values.size))
            for cut in itertools.combinations(range(values.size - 1), k)
        )
        assert _padded_cost(lengths, bucket, row_quantum) == best


def test_a_grid_buckets_small_batches_by_their_padded_rows():
    # three sequences of 8, 16 and 24 steps: in three calls of 8 rows each they pad 384 steps,
    # in one call of 8 rows 192
    layout = SequenceLayout.from_lengths([8, 16, 24], grid=ShapeGrid())
    assert [tuple(b.forward_index.shape) for b in layout.buckets] == [(8, 24)]
    assert length_partition(np.array([8, 16, 24]), 6).tolist() == [0, 1, 2]


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


def _same_layout(a: SequenceLayout, b: SequenceLayout) -> None:
    for f in fields(SequenceLayout):
        got, expected = getattr(a, f.name), getattr(b, f.name)
        if f.name == "buckets":
            assert len(got) == len(expected)
            for x, y in zip(got, expected):
                assert x.steps == y.steps
                for name in ("forward_index", "reverse_index", "mean_weights"):
                    assert torch.equal(getattr(x, name), getattr(y, name)), name
        elif isinstance(got, torch.Tensor):
            assert torch.equal(got, expected), f.name
        elif isinstance(got, np.ndarray):
            assert np.array_equal(got, expected), f.name
        else:
            assert got == expected, f.name


@pytest.mark.parametrize("buckets", [1, 3])
def test_tiled_is_the_layout_of_the_repeated_rows(buckets):
    # copies back to back: the layout of the tiled lengths, each copy starting where the
    # previous one ends (the default starts of from_lengths)
    lengths = [3, 1, 4, 2]
    for copies in (1, 2, 3):
        _same_layout(SequenceLayout.tiled(lengths, copies, buckets),
                     SequenceLayout.from_lengths(np.tile(lengths, copies), buckets=buckets))


def test_tiled_by_hand():
    layout = SequenceLayout.tiled([2, 1], 2, buckets=1)
    # x.repeat(2, 1) has rows 0-2 (copy 0) and 3-5 (copy 1): sequences at 0, 2, 3, 5
    assert layout.host_lengths.tolist() == [2, 1, 2, 1]
    assert layout.crf_index.tolist() == [[0, 1], [2, 2], [3, 4], [5, 5]]
    assert layout.segment_offsets.tolist() == [0, 2, 3, 5, 6]
    assert layout.buckets[0].forward_index.tolist() == [[0, 1], [2, 0], [3, 4], [5, 0]]
    assert layout.buckets[0].reverse_index.tolist() == [[1, 0], [2, 0], [4, 3], [5, 0]]
    assert layout.forward_positions.tolist() == [0, 1, 2, 4, 5, 6]


@pytest.mark.parametrize("buckets", [1, 2, 6])
def test_tiled_outputs_split_back_into_the_copies(buckets):
    # Monte-Carlo copies that differ (as their dropout masks make them): the outputs over the
    # tiled layout are copy after copy, each the outputs of that copy alone
    torch.manual_seed(0)
    lstm = DirectionLSTM(3, 2).double()
    lengths, copies = [3, 1, 4, 2], 3
    rows = sum(lengths)
    x = torch.randn(copies * rows, 3, dtype=torch.float64)
    tiled = SequenceLayout.tiled(lengths, copies, buckets)
    single = SequenceLayout.from_lengths(lengths, buckets=buckets)
    out = run_bilstm(lstm, x, tiled).view(copies, rows, 4)
    finals = run_bilstm(lstm, x, tiled, final_states=True).view(copies, len(lengths), 4)
    means = run_bilstm(lstm, x, tiled, reduce="mean").view(copies, len(lengths), 4)
    for c in range(copies):
        x_c = x[c * rows:(c + 1) * rows]
        torch.testing.assert_close(out[c], run_bilstm(lstm, x_c, single), rtol=0, atol=1e-14)
        torch.testing.assert_close(finals[c], run_bilstm(lstm, x_c, single, final_states=True),
                                   rtol=0, atol=1e-14)
        torch.testing.assert_close(means[c], run_bilstm(lstm, x_c, single, reduce="mean"),
                                   rtol=0, atol=1e-14)


def test_mean_weights_in_the_layouts_dtype():
    lengths = [3, 1, 7, 6]
    for dtype in (torch.float64, torch.float32):
        layout = SequenceLayout.from_lengths(lengths, buckets=2, dtype=dtype)
        assert layout.dtype == dtype
        for bucket in layout.buckets:
            assert bucket.mean_weights.dtype == dtype
            real = bucket.mean_weights > 0
            length = real.sum(dim=1, keepdim=True).to(dtype)
            # 1 / length rounded once, to dtype (1/3, 1/6 and 1/7 differ in float32)
            assert torch.equal(bucket.mean_weights[real],
                               (1 / length).expand_as(real)[real])
        assert SequenceLayout.tiled(lengths, 2, dtype=dtype).dtype == dtype
    moved = SequenceLayout.from_lengths(lengths, buckets=2, dtype=torch.float32).to(
        dtype=torch.float64)
    assert all(b.mean_weights.dtype == torch.float64 for b in moved.buckets)
    assert all(b.forward_index.dtype == torch.int64 for b in moved.buckets)
    assert moved.crf_mask.dtype == torch.bool and moved.lengths.dtype == torch.int64
    assert SequenceLayout.from_lengths(lengths).dtype == torch.get_default_dtype()


def test_float64_means_are_exact_to_float64_rounding():
    # a float32 1/7 is off by 1.5e-9 relative: far above float64 rounding
    torch.manual_seed(0)
    lstm = DirectionLSTM(3, 2).double()
    lengths = [7, 3, 6]
    x = torch.randn(sum(lengths), 3, dtype=torch.float64)
    layout = SequenceLayout.from_lengths(lengths, buckets=1, dtype=torch.float64)
    means = run_bilstm(lstm, x, layout, reduce="mean")
    expected = segment_means(run_bilstm(lstm, x, layout), layout)
    torch.testing.assert_close(means, expected, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("buckets", [1, 3])
def test_sums_are_each_sequences_outputs_summed(buckets):
    """``reduce="sum"`` adds a sequence's outputs over its own positions (the padding of its
    bucket left out), in float64 to rounding; ``reduce`` takes nothing else."""
    torch.manual_seed(0)
    lstm = DirectionLSTM(3, 2).double()
    lengths = [7, 1, 3, 6, 2]
    x = torch.randn(sum(lengths), 3, dtype=torch.float64)
    layout = SequenceLayout.from_lengths(lengths, buckets=buckets, dtype=torch.float64)
    sums = run_bilstm(lstm, x, layout, reduce="sum")
    outputs = run_bilstm(lstm, x, layout).split(lengths)
    expected = torch.stack([out.sum(dim=0) for out in outputs])
    torch.testing.assert_close(sums, expected, rtol=1e-14, atol=1e-15)
    with pytest.raises(ValueError, match="reduce must be"):
        run_bilstm(lstm, x, layout, reduce="max")


# ------------------------------------------------------------------ DirectionLSTM on the CPU
_FORWARD = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
_REVERSE = tuple(f"{name}_reverse" for name in _FORWARD)


def _pointers(tensors):
    return [t.data_ptr() for t in tensors]


def test_direction_lstm_flatten_calls_name_each_directions_weights_in_order():
    lstm = DirectionLSTM(3, 5)
    calls = lstm.flatten_calls()
    assert len(calls) == 2
    for (weights, args), names in zip(calls, (_FORWARD, _REVERSE)):
        assert _pointers(weights) == _pointers(getattr(lstm, n) for n in names)
        # 4 weights, input 3, LSTM, hidden 5, no projection, 1 layer, batch_first, 1 direction
        assert args == (4, 3, CUDNN_LSTM, 5, 0, 1, True, False)


def test_direction_lstm_calls_take_the_weights_it_flattens(monkeypatch):
    # each direction's call gets the weights of its flat buffer, in the buffer's order
    lstm = DirectionLSTM(3, 5)
    seen = []

    def fake_lstm(x, hx, weights, *args):
        seen.append(_pointers(weights))
        return x.new_zeros(x.size(0), x.size(1), 5), None, None

    monkeypatch.setattr(torch._VF, "lstm", fake_lstm)
    for suffix in ("", "_reverse"):
        lstm_direction(lstm, torch.zeros(2, 4, 3), suffix)
    assert seen == [_pointers(weights) for weights, _ in lstm.flatten_calls()]


def test_direction_lstm_flatten_parameters_hands_cudnn_each_direction(monkeypatch):
    # what flatten_parameters would do on CUDA, with cuDNN's flattening recorded
    import docgraph.nn.layout as layout_module

    lstm = DirectionLSTM(3, 5)
    recorded = []
    monkeypatch.setattr(layout_module, "_cudnn_takes", lambda weight: True)
    monkeypatch.setattr(torch, "_use_cudnn_rnn_flatten_weight", lambda: True)
    monkeypatch.setattr(torch, "_cudnn_rnn_flatten_weight",
                        lambda weights, *args: recorded.append((_pointers(weights), args)))
    lstm.flatten_parameters()
    assert recorded == [(_pointers(getattr(lstm, n) for n in names),
                         (4, 3, CUDNN_LSTM, 5, 0, 1, True, False))
                        for names in (_FORWARD, _REVERSE)]
    recorded.clear()
    monkeypatch.setattr(layout_module, "_cudnn_takes", lambda weight: False)  # a CPU weight
    lstm.flatten_parameters()
    assert recorded == []


def test_direction_lstm_weights_that_cannot_share_a_buffer_are_not_flattened():
    tied = DirectionLSTM(3, 5)
    tied.weight_hh_l0_reverse = tied.weight_hh_l0  # two names, one memory
    assert tied.flatten_calls() is None
    mixed = DirectionLSTM(3, 5)
    mixed.bias_hh_l0.data = mixed.bias_hh_l0.data.double()
    assert mixed.flatten_calls() is None


@pytest.mark.skipif(not torch.backends.cudnn.is_available(), reason="needs cuDNN")
def test_cudnn_lstm_mode_is_cudnns():
    import torch.backends.cudnn.rnn as cudnn_rnn

    assert cudnn_rnn.get_cudnn_mode("LSTM") == CUDNN_LSTM
