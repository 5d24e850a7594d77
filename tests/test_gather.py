"""Gathers and segment sums with deterministic backward passes (docgraph.nn.gather), and the
layers built on them: each checked against plain advanced indexing / index_add."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from docgraph.nn import DocGraphConv
from docgraph.nn.gather import csr_segments, gather_rows, segment_sum
from docgraph.nn.layout import DirectionLSTM, SequenceLayout, run_bilstm, segment_means


@pytest.mark.parametrize("shape", [(7,), (7, 3), (7, 2, 3)])
def test_gather_rows_equals_indexing_forward_and_backward(shape):
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    index = torch.tensor([[0, 0, 0, 6], [3, 0, 1, 1]])  # heavy repeats of row 0
    out = gather_rows(x, index)
    reference = x[index]
    assert torch.equal(out, reference)
    grad = torch.randn_like(reference)
    (got,) = torch.autograd.grad(out, x, grad)
    (expected,) = torch.autograd.grad(reference, x, grad)
    torch.testing.assert_close(got, expected)
    assert got[2].abs().sum() == 0  # a row nobody reads gets no gradient


def test_segment_sum_by_hand_with_empty_segments():
    values = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    ptr = torch.tensor([0, 2, 2, 3])
    out = segment_sum(values, ptr)
    assert torch.equal(out, torch.tensor([[4.0, 6.0], [0.0, 0.0], [5.0, 6.0]]))
    out.backward(torch.tensor([[1.0, 1.0], [7.0, 7.0], [2.0, 3.0]]))
    assert torch.equal(values.grad, torch.tensor([[1.0, 1.0], [1.0, 1.0], [2.0, 3.0]]))


@pytest.mark.parametrize("shape", [(6,), (6, 3), (6, 2, 3)])
def test_gather_rows_gradcheck(shape):
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    index = torch.tensor([[5, 0, 0], [0, 2, 5]])  # repeats; rows 1, 3 and 4 unread
    assert torch.autograd.gradcheck(lambda t: gather_rows(t, index), (x,))
    grad = torch.randn(index.shape + x.shape[1:], dtype=torch.float64)
    (got,) = torch.autograd.grad(gather_rows(x, index), x, grad)
    expected = torch.zeros_like(x)
    for i, row in enumerate(index.flatten().tolist()):  # one addition per read
        expected[row] += grad.reshape(index.numel(), *x.shape[1:])[i]
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-15)


def _segment_sums_by_loop(values, ptr):
    return torch.stack([values[ptr[k]:ptr[k + 1]].sum(dim=0) for k in range(len(ptr) - 1)])


@pytest.mark.parametrize("ptr", [[0, 2, 2, 5, 6], [0, 0, 3, 6, 6], [0, 6], [0, 1, 2, 3, 4, 5, 6]],
                         ids=["inner-empty", "outer-empty", "one", "singletons"])
@pytest.mark.parametrize("shape", [(6,), (6, 2, 3)])
def test_segment_sum_equals_a_loop_and_gradcheck(ptr, shape):
    torch.manual_seed(0)
    values = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    ptr = torch.tensor(ptr)
    torch.testing.assert_close(segment_sum(values, ptr), _segment_sums_by_loop(values, ptr))
    assert torch.autograd.gradcheck(lambda v: segment_sum(v, ptr), (values,))
    grad = torch.randn(len(ptr) - 1, *shape[1:], dtype=torch.float64)
    (got,) = torch.autograd.grad(segment_sum(values, ptr), values, grad)
    (expected,) = torch.autograd.grad(_segment_sums_by_loop(values, ptr), values, grad)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_csr_segments_by_hand():
    values, ptr = csr_segments(np.array([0, 0, 2, 2, 2, 5]))
    assert values.tolist() == [0, 2, 5]
    assert ptr.tolist() == [0, 2, 5, 6]
    assert ptr.dtype == torch.int64
    values, ptr = csr_segments(np.array([4, 4, 4]))  # one segment
    assert values.tolist() == [4] and ptr.tolist() == [0, 3]
    values, ptr = csr_segments(np.array([7]))  # one key
    assert values.tolist() == [7] and ptr.tolist() == [0, 1]
    values, ptr = csr_segments(np.array([1, 3, 8]))  # every segment of one
    assert values.tolist() == [1, 3, 8] and ptr.tolist() == [0, 1, 2, 3]
    values, ptr = csr_segments(np.zeros(0, dtype=np.int64))  # no key
    assert values.tolist() == [] and ptr.tolist() == [0]


@pytest.mark.parametrize("keys", [[1, 0], [0, 2, 1, 2], [3, 3, 1, 1], [0, 1, 1, 0]])
def test_csr_segments_of_unsorted_keys_is_none(keys):
    assert csr_segments(np.array(keys)) is None


def test_csr_segments_against_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(50):
        keys = np.sort(rng.integers(0, 6, size=int(rng.integers(1, 15))))
        values, ptr = csr_segments(keys)
        assert ptr[0] == 0 and ptr[-1] == keys.size and len(ptr) == len(values) + 1
        for k, value in enumerate(values.tolist()):
            run = keys[ptr[k]:ptr[k + 1]]
            assert run.size > 0 and np.all(run == value)
        assert values.tolist() == sorted(set(keys.tolist()))
        # segment_sum over the offsets counts each key's rows
        counts = segment_sum(torch.ones(keys.size, dtype=torch.float64), ptr)
        assert counts.tolist() == [float((keys == v).sum()) for v in values.tolist()]


def test_run_bilstm_means_equal_the_mean_of_each_sequence_alone():
    torch.manual_seed(0)
    lstm = DirectionLSTM(3, 4).double()
    lengths = [3, 1, 5, 2, 5]
    x = torch.randn(sum(lengths), 3, dtype=torch.float64)
    layout = SequenceLayout.from_lengths(lengths, buckets=2)
    means = run_bilstm(lstm, x, layout, reduce="mean")
    start = 0
    for b, n in enumerate(lengths):
        alone, _ = lstm(x[start:start + n].unsqueeze(0))
        torch.testing.assert_close(means[b], alone[0].mean(dim=0))
        start += n
    torch.testing.assert_close(segment_means(run_bilstm(lstm, x, layout), layout), means)
    with pytest.raises(ValueError, match="reduce"):
        run_bilstm(lstm, x, layout, reduce="max")


def test_direction_lstm_is_an_lstm_with_the_same_state_dict():
    torch.manual_seed(0)
    plain = torch.nn.LSTM(3, 4, batch_first=True, bidirectional=True)
    split = DirectionLSTM(3, 4)
    split.load_state_dict(plain.state_dict())
    assert list(split.state_dict()) == list(plain.state_dict())
    x = torch.randn(2, 5, 3)
    torch.testing.assert_close(split(x)[0], plain(x)[0])
    split.flatten_parameters()  # a no-op off CUDA


def _edges_sorted_by_target(edge_index):
    order = torch.sort(edge_index[1] * 100 + edge_index[0])[1]
    return edge_index[:, order], order


@pytest.mark.parametrize("isolated", ["identity", "gate"])
def test_doc_graph_conv_planned_segments_equal_unplanned(isolated):
    torch.manual_seed(0)
    conv = DocGraphConv(5, isolated=isolated).double()
    x = torch.randn(7, 5, dtype=torch.float64, requires_grad=True)
    # unsorted edges, node 6 receives none, node 0 sends many
    edge_index = torch.tensor([[0, 2, 0, 0, 5, 3, 0], [3, 1, 1, 4, 1, 0, 2]])
    weight = torch.rand(edge_index.size(1), dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([True, True, False, True, True, True, True])
    unplanned = conv(x, edge_index, weight, mask)
    sorted_edges, order = _edges_sorted_by_target(edge_index)
    gated, counts = torch.unique(sorted_edges[1], return_counts=True)
    ptr = torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)])
    planned = conv(x, sorted_edges, weight[order], mask, gated_nodes=gated, ptr=ptr)
    torch.testing.assert_close(planned, unplanned)
    grads_unplanned = torch.autograd.grad(unplanned.sum(), (x, weight))
    grads_planned = torch.autograd.grad(planned.sum(), (x, weight))
    torch.testing.assert_close(grads_planned, grads_unplanned)
    if isolated == "identity":
        assert torch.equal(unplanned[6], x[6])  # no incoming edge: passed through
