"""Gathers and segment sums with deterministic backward passes (docgraph.nn.gather), and the
layers built on them: each checked against plain advanced indexing / index_add."""

from __future__ import annotations

import pytest
import torch

from docgraph.nn import DocGraphConv
from docgraph.nn.gather import gather_rows, segment_sum
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
