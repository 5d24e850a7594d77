"""Tests of :class:`docgraph.nn.DocGraphConv`."""

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor

from docgraph.nn import DocGraphConv


def _gate(conv: DocGraphConv, a: Tensor, h: Tensor) -> Tensor:
    """Hand-written gate of the paper, one node at a time."""
    d = conv.channels
    Wz, Wr, Wo = conv.lin_w.weight[:d], conv.lin_w.weight[d : 2 * d], conv.lin_w.weight[2 * d :]
    Uz, Ur = conv.lin_u.weight[:d], conv.lin_u.weight[d:]
    Uo = conv.lin_uo.weight
    z = torch.sigmoid(Wz @ a + Uz @ h)
    r = torch.sigmoid(Wr @ a + Ur @ h)
    h_tilde = torch.tanh(Wo @ a + Uo @ (r * h))
    return (1 - z) * h + z * h_tilde


def _reference(conv, x, edge_index, edge_weight=None, source_mask=None):
    """Brute force: loop over nodes and edges."""
    out = []
    for i in range(x.size(0)):
        incoming = [e for e in range(edge_index.size(1)) if edge_index[1, e] == i]
        if not incoming and conv.isolated == "identity":
            out.append(x[i])
            continue
        msgs = []
        for e in incoming:
            j = int(edge_index[0, e])
            if source_mask is not None and not bool(source_mask[j]):
                continue
            w = 1.0 if edge_weight is None else edge_weight[e]
            msgs.append(w * conv.lin_a(x[j]))
        a = F.relu(torch.stack(msgs).sum(0) / len(msgs)) if msgs else x.new_zeros(x.size(1))
        out.append(_gate(conv, a, x[i]))
    return torch.stack(out)


@pytest.fixture
def graph():
    torch.manual_seed(0)
    x = torch.randn(4, 6)
    # 1->0, 2->0, 3->0, 0->1, 2->1 ; node 2 receives 3->2 ; node 3 receives nothing
    edge_index = torch.tensor([[1, 2, 3, 0, 2, 3], [0, 0, 0, 1, 1, 2]])
    return x, edge_index


def test_repr_and_shape(graph):
    x, edge_index = graph
    conv = DocGraphConv(6)
    assert str(conv) == "DocGraphConv(6, isolated=identity)"
    assert str(DocGraphConv(400, isolated="gate")) == "DocGraphConv(400, isolated=gate)"
    assert conv(x, edge_index).shape == (4, 6)
    with pytest.raises(ValueError):
        DocGraphConv(6, isolated="foo")
    with pytest.raises(ValueError):
        DocGraphConv(6, aggr="max")


def test_plain_mean(graph):
    x, edge_index = graph
    conv = DocGraphConv(6)
    out = conv(x, edge_index)
    torch.testing.assert_close(out, _reference(conv, x, edge_index))
    # Node 0 by hand: mean of W_a h_j + b_a over j in {1, 2, 3}.
    a0 = F.relu(conv.lin_a(x[1:4]).mean(0))
    torch.testing.assert_close(out[0], _gate(conv, a0, x[0]))
    # Isolated node 3 is unchanged.
    assert torch.equal(out[3], x[3])


def test_edge_weight_divides_by_count(graph):
    x, edge_index = graph
    conv = DocGraphConv(6)
    w = torch.tensor([0.2, 0.5, 0.9, 0.3, 0.7, 0.4])
    out = conv(x, edge_index, edge_weight=w)
    torch.testing.assert_close(out, _reference(conv, x, edge_index, edge_weight=w))
    m = conv.lin_a(x)
    a0 = F.relu((0.2 * m[1] + 0.5 * m[2] + 0.9 * m[3]) / 3)  # count, not weight sum
    torch.testing.assert_close(out[0], _gate(conv, a0, x[0]))


def test_pruning(graph):
    x, edge_index = graph
    conv = DocGraphConv(6)
    w = torch.tensor([0.2, 0.5, 0.9, 0.3, 0.7, 0.4])
    mask = torch.tensor([True, True, False, False])  # nodes 2 and 3 in Drop
    out = conv(x, edge_index, edge_weight=w, source_mask=mask)
    torch.testing.assert_close(out, _reference(conv, x, edge_index, w, mask))
    m = conv.lin_a(x)
    # Node 0: only neighbour 1 remains -> Num(0) = 1.
    torch.testing.assert_close(out[0], _gate(conv, F.relu(0.2 * m[1]), x[0]))
    # Node 1: only neighbour 0 remains.
    torch.testing.assert_close(out[1], _gate(conv, F.relu(0.3 * m[0]), x[1]))
    # Node 2: its only neighbour (3) is pruned -> a = 0 through the gate.
    torch.testing.assert_close(out[2], _gate(conv, torch.zeros(6), x[2]))
    assert not torch.allclose(out[2], x[2])
    # Node 3: isolated -> unchanged.
    assert torch.equal(out[3], x[3])
    # Mask without weights.
    out = conv(x, edge_index, source_mask=mask)
    torch.testing.assert_close(out, _reference(conv, x, edge_index, None, mask))


def test_isolated_gate(graph):
    x, edge_index = graph
    conv = DocGraphConv(6, isolated="gate", gate_bias=True)
    torch.nn.init.uniform_(conv.lin_w.bias)
    out = conv(x, edge_index)
    assert not torch.allclose(out[3], x[3])  # isolated node goes through the gate
    torch.testing.assert_close(out, _reference_bias(conv, x, edge_index))


def _reference_bias(conv, x, edge_index):
    """Gate with biases, via the layer's linear maps on aggregated a."""
    a = []
    for i in range(x.size(0)):
        src = edge_index[0, edge_index[1] == i]
        a.append(F.relu(conv.lin_a(x[src]).mean(0)) if src.numel() else torch.zeros(6))
    a = torch.stack(a)
    wz, wr, wo = conv.lin_w(a).chunk(3, -1)
    uz, ur = conv.lin_u(x).chunk(2, -1)
    z, r = torch.sigmoid(wz + uz), torch.sigmoid(wr + ur)
    return (1 - z) * x + z * torch.tanh(wo + conv.lin_uo(r * x))


def test_init():
    conv = DocGraphConv(5)
    assert torch.count_nonzero(conv.lin_a.bias) == 0
    assert conv.lin_w.bias is None
    assert DocGraphConv(5, bias=False).lin_a.bias is None


def test_gradients(graph):
    x, edge_index = graph
    conv = DocGraphConv(6, gate_bias=True)
    w = torch.rand(6, requires_grad=True)
    x = x.clone().requires_grad_()
    conv(x, edge_index, edge_weight=w).pow(2).sum().backward()
    for name, p in conv.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name
    assert w.grad is not None and x.grad is not None


def test_options_are_keyword_only():
    """One channel size (input = output): ``DocGraphConv(16, 8)`` is not (in, out)."""
    with pytest.raises(TypeError, match="positional"):
        DocGraphConv(16, 8)
    assert DocGraphConv(16, bias=False).lin_a.bias is None


def test_x_of_the_wrong_width(graph):
    x, edge_index = graph
    with pytest.raises(ValueError, match=r"x must have shape \[N, 6\] \(channels=6\), got \[4, 5"):
        DocGraphConv(6)(x[:, :5], edge_index)
    with pytest.raises(ValueError, match=r"x must have shape \[N, 6\].*got \[24\]"):
        DocGraphConv(6)(x.view(-1), edge_index)


@pytest.mark.parametrize("mask", [torch.tensor([0, 1]), torch.tensor([1, 1, 0, 0])],
                         ids=["indices", "0-1 integers"])
def test_source_mask_of_indices(graph, mask):
    x, edge_index = graph
    with pytest.raises(TypeError, match=r"source_mask must be a boolean mask of shape \[N=4\]"):
        DocGraphConv(6)(x, edge_index, source_mask=mask)


def test_source_mask_of_the_wrong_length(graph):
    x, edge_index = graph
    with pytest.raises(ValueError, match=r"source_mask must have shape \[N=4\].*got \[3\]"):
        DocGraphConv(6)(x, edge_index, source_mask=torch.ones(3, dtype=torch.bool))


def test_edge_index_of_the_wrong_shape_or_range(graph):
    x, edge_index = graph
    conv = DocGraphConv(6)
    with pytest.raises(ValueError, match=r"edge_index must have shape \[2, E\], got \[6, 2\]"):
        conv(x, edge_index.t())
    with pytest.raises(TypeError, match="edge_index must hold integer node indices"):
        conv(x, edge_index.float())
    with pytest.raises(TypeError, match="edge_index must be a tensor"):
        conv(x, edge_index.tolist())
    with pytest.raises(ValueError, match=r"edge_index must hold node indices in \[0, 4\)"):
        conv(x, torch.tensor([[0, 4], [1, 1]]))
    with pytest.raises(ValueError, match=r"edge_index must hold node indices.*from -1 to 2"):
        conv(x, torch.tensor([[0, -1], [1, 2]]))


def test_edge_weight_of_the_wrong_length(graph):
    x, edge_index = graph
    with pytest.raises(ValueError, match=r"edge_weight must have shape \[E=6\].*got \[5\]"):
        DocGraphConv(6)(x, edge_index, edge_weight=torch.rand(5))
    with pytest.raises(ValueError, match=r"edge_weight must have shape \[E=6\].*got \[6, 1\]"):
        DocGraphConv(6)(x, edge_index, edge_weight=torch.rand(6, 1))


def test_gated_nodes_without_ptr(graph):
    x, edge_index = graph
    conv = DocGraphConv(6)
    with pytest.raises(ValueError, match="gated_nodes and ptr go together"):
        conv(x, edge_index, gated_nodes=torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match=r"ptr must have shape \[G \+ 1\]"):
        conv(x, edge_index, gated_nodes=torch.tensor([0, 1, 2]), ptr=torch.tensor([0, 3, 5]))


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")
def test_jit_script(graph):
    x, edge_index = graph
    conv = DocGraphConv(6)
    jit = torch.jit.script(conv)
    w = torch.rand(6)
    mask = torch.tensor([True, False, True, True])
    torch.testing.assert_close(jit(x, edge_index), conv(x, edge_index))
    torch.testing.assert_close(jit(x, edge_index, w, mask), conv(x, edge_index, w, mask))


def test_torch_compile(graph):
    x, edge_index = graph
    conv = DocGraphConv(6)
    torch._dynamo.reset()
    compiled = torch.compile(conv, backend="aot_eager", fullgraph=True)
    w = torch.rand(6)
    mask = torch.tensor([True, False, True, True])
    torch.testing.assert_close(compiled(x, edge_index, w, mask), conv(x, edge_index, w, mask))
    torch.testing.assert_close(compiled(x, edge_index), conv(x, edge_index))


def test_empty_graph():
    x = torch.randn(3, 4)
    conv = DocGraphConv(4)
    out = conv(x, torch.empty(2, 0, dtype=torch.long))
    assert torch.equal(out, x)


def test_karate_club():
    from torch_geometric.datasets import KarateClub

    torch.manual_seed(12345)
    data = KarateClub()[0]

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin_in = torch.nn.Linear(data.num_features, 16)
            self.conv1 = DocGraphConv(16)
            self.conv2 = DocGraphConv(16)
            self.lin_out = torch.nn.Linear(16, 4)

        def forward(self, x, edge_index):
            h = torch.tanh(self.lin_in(x))
            h = self.conv2(self.conv1(h, edge_index), edge_index)
            return self.lin_out(h)

    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(60):
        opt.zero_grad()
        loss = F.cross_entropy(model(data.x, data.edge_index), data.y)
        loss.backward()
        opt.step()
    acc = (model(data.x, data.edge_index).argmax(-1) == data.y).float().mean()
    assert acc > 0.9
