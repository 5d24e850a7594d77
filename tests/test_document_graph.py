"""Tests of :class:`docgraph.nn.DocumentGraphModule` and of GCDoc's use of it."""

import math

import pytest
import torch
import torch.nn.functional as F
from conftest import TINY_MODEL
from torch import Tensor
from torch_geometric.data import Batch

from docgraph.data.vocab import label_types
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDoc, GCDocConfig, upgrade_state_dict_key
from docgraph.nn import DocumentGraphModule, DocumentGraphOutput

D, F_U, C = 6, 5, 4  # node features, token features of the tagger, labels
LABEL_TYPE = [0, 1, 1, 2]  # label -> entity type; label 0 is O (type 0)


@pytest.fixture
def graph():
    """Six tokens in two sentences of three: "A B . A B A" -- A at 0, 3, 5, B at 1 and 4, the
    full stop 2 has no neighbour. Edges j -> i between every two occurrences of a word."""
    torch.manual_seed(0)
    h = torch.randn(6, D)
    token_x = torch.randn(6, F_U)
    sent_len = torch.tensor([3, 3])
    pairs = [(0, 3), (0, 5), (3, 5), (1, 4)]
    edge_index = torch.tensor([[j for a, b in pairs for j in (a, b)],
                               [i for a, b in pairs for i in (b, a)]])
    y = torch.tensor([1, 0, 0, 2, 3, 0])  # A: type 1, O, O, type 1, type 2; B: O, type 2
    return h, token_x, sent_len, edge_index, y


def _module(seed: int = 1, **kwargs) -> DocumentGraphModule:
    torch.manual_seed(seed)
    return DocumentGraphModule(D, F_U, C, num_samples=3, uncertainty_hidden=4, **kwargs)


def _gate(conv, a: Tensor, h: Tensor) -> Tensor:
    """Eqs. (19)-(22) of the paper for one node."""
    d = conv.channels
    Wz, Wr, Wo = conv.lin_w.weight[:d], conv.lin_w.weight[d:2 * d], conv.lin_w.weight[2 * d:]
    Uz, Ur, Uo = conv.lin_u.weight[:d], conv.lin_u.weight[d:], conv.lin_uo.weight
    z = torch.sigmoid(Wz @ a + Uz @ h)
    r = torch.sigmoid(Wr @ a + Ur @ h)
    h_tilde = torch.tanh(Wo @ a + Uo @ (r * h))
    return (1 - z) * h + z * h_tilde


def _by_hand(module, h, edge_index, drop, node_type):
    """Brute force of Eqs. (26), (27), (28) and (19)-(22): loops over nodes and edges."""
    w_c, b_c = module.relation.lin.weight.view(-1), module.relation.lin.bias
    r, loss = {}, 0.0
    for e in range(edge_index.size(1)):
        j, i = int(edge_index[0, e]), int(edge_index[1, e])
        r[e] = torch.sigmoid(w_c @ torch.cat([h[i], h[j]]) + b_c).squeeze()
        t_i, t_j = int(node_type[i]), int(node_type[j])
        if t_i != 0 or t_j != 0:  # relation_labels="entity": O--O edges have no target
            y_ij = float(t_i == t_j)
            loss -= y_ij * math.log(r[e]) + (1 - y_ij) * math.log(1 - r[e])
    conv = module.graph_conv
    out = []
    for i in range(h.size(0)):
        incoming = [e for e in range(edge_index.size(1)) if edge_index[1, e] == i]
        if not incoming:  # isolated="identity"
            out.append(h[i])
            continue
        msgs = [r[e] * conv.lin_a(h[int(edge_index[0, e])]) for e in incoming
                if not drop[int(edge_index[0, e])]]
        a = F.relu(torch.stack(msgs).sum(0) / len(msgs)) if msgs else h.new_zeros(D)
        out.append(_gate(conv, a, h[i]))
    return torch.stack(out), torch.stack([r[e] for e in sorted(r)]), loss


@torch.no_grad()
def test_output_equals_the_papers_equations_by_hand(graph):
    h, token_x, sent_len, edge_index, y = graph
    module = _module().eval()
    node_type = torch.tensor(LABEL_TYPE)[y]
    # a threshold between the tokens' uncertainties, so that some tokens are pruned
    torch.manual_seed(5)
    u, probs = module.uncertainty.uncertainty(token_x, sent_len)
    module.uncertainty.threshold = float(u.median())
    drop = u > module.uncertainty.threshold
    assert 0 < int(drop.sum()) < 6

    torch.manual_seed(5)  # the same Monte-Carlo masks
    out = module(h, edge_index, token_x, sent_len, y=y, node_type=node_type)
    assert isinstance(out, DocumentGraphOutput)
    # Eqs. (24), (25) and Drop
    torch.testing.assert_close(out.uncertainty, -(probs * probs.log()).sum(-1))
    assert torch.equal(out.drop, drop)
    expected, r, relation_loss = _by_hand(module, h, edge_index, drop, node_type)
    torch.testing.assert_close(out.edge_weight, r)
    torch.testing.assert_close(out.x, expected)
    torch.testing.assert_close(out.relation_loss, torch.tensor(relation_loss))
    # the tagger's loss: token cross-entropy, summed (eval mode: no dropout)
    logits = module.uncertainty.lin(module.uncertainty.encoder(token_x, sent_len))
    torch.testing.assert_close(out.uncertainty_loss,
                               -logits.log_softmax(-1).gather(1, y.view(-1, 1)).sum())
    # the full stop has no neighbour: unchanged; a pruned token still receives messages
    assert torch.equal(out.x[2], h[2])


def test_same_random_draws_as_calling_the_children_in_turn(graph):
    """Training mode: the module draws its dropout and Monte-Carlo masks as GCDoc's forward
    called the three children before the module existed."""
    h, token_x, sent_len, edge_index, y = graph
    module = _module(threshold=1.2).train()
    node_type = torch.tensor(LABEL_TYPE)[y]
    torch.manual_seed(3)
    out = module(h, edge_index, token_x, sent_len, y=y, node_type=node_type)

    from docgraph.nn.relation import relation_loss, relation_targets

    unc, rel, conv = module.uncertainty, module.relation, module.graph_conv
    torch.manual_seed(3)
    u, _ = unc.uncertainty(token_x.detach(), sent_len)
    drop = unc.drop_mask(u)
    unc_loss = unc.loss(unc(token_x.detach(), sent_len), y, reduction="sum")
    logits = rel(h, edge_index, return_logits=True)
    same, mask = relation_targets(node_type, edge_index, "entity", outside=0)
    x = conv(h, edge_index, edge_weight=torch.sigmoid(logits), source_mask=~drop)
    assert torch.equal(out.uncertainty, u) and torch.equal(out.drop, drop)
    assert torch.equal(out.uncertainty_loss, unc_loss)
    assert torch.equal(out.edge_weight, torch.sigmoid(logits))
    assert torch.equal(out.relation_loss, relation_loss(logits, same, "sum", mask))
    assert torch.equal(out.x, x)


def test_shapes_and_gradients(graph):
    h, token_x, sent_len, edge_index, y = graph
    module = _module()
    h = h.clone().requires_grad_()
    token_x = token_x.clone().requires_grad_()
    out = module(h, edge_index, token_x, sent_len, y=y, node_type=y)
    E = edge_index.size(1)
    assert out.x.shape == (6, D)
    assert out.uncertainty.shape == (6,) and out.drop.shape == (6,)
    assert out.drop.dtype == torch.bool
    assert out.edge_weight.shape == (E,)
    assert out.uncertainty_loss.dim() == 0 and out.relation_loss.dim() == 0
    (out.x.sum() + out.uncertainty_loss + out.relation_loss).backward()
    assert h.grad is not None
    assert token_x.grad is None  # detach_uncertainty_input
    assert all(p.grad is not None for p in module.uncertainty.parameters())
    attached = _module(detach_uncertainty_input=False)
    attached(h, edge_index, token_x, sent_len, y=y).uncertainty_loss.backward()
    assert token_x.grad is not None and token_x.grad.abs().sum() > 0


def test_without_targets_no_losses(graph):
    h, token_x, sent_len, edge_index, y = graph
    out = _module()(h, edge_index, token_x, sent_len)
    assert out.uncertainty_loss is None and out.relation_loss is None
    assert out.uncertainty is not None and out.edge_weight is not None
    only_tagger = _module()(h, edge_index, token_x, sent_len, y=y)
    assert only_tagger.uncertainty_loss is not None and only_tagger.relation_loss is None


@torch.no_grad()
def test_optional_parts_switched_off(graph):
    h, token_x, sent_len, edge_index, y = graph
    weighted = _module(pruning=False)
    assert weighted.uncertainty is None and weighted.relation is not None
    assert not any(n.startswith("uncertainty.") for n, _ in weighted.named_parameters())
    out = weighted(h, edge_index, y=y, node_type=y)  # no token features needed
    assert out.uncertainty is None and out.drop is None and out.uncertainty_loss is None
    assert out.relation_loss is not None
    r = weighted.relation(h, edge_index)
    torch.testing.assert_close(out.edge_weight, r)
    torch.testing.assert_close(out.x, weighted.graph_conv(h, edge_index, edge_weight=r))

    pruned = _module(edge_weights=False, threshold=0.0).eval()  # every token in Drop
    assert pruned.relation is None and pruned.uncertainty is not None
    out = pruned(h, edge_index, token_x, sent_len, y=y, node_type=y)
    assert out.edge_weight is None and out.relation_loss is None and out.drop.all()
    torch.testing.assert_close(out.x, pruned.graph_conv(h, edge_index,
                                                        source_mask=~out.drop))

    plain = _module(pruning=False, edge_weights=False)  # Eq. (18), "+Doc Graph"
    assert list(dict(plain.named_children())) == ["graph_conv"]
    out = plain(h, edge_index, y=y, node_type=y)
    assert out[1:] == (None,) * 5
    torch.testing.assert_close(out.x, plain.graph_conv(h, edge_index))


@torch.no_grad()
def test_unpruned_pass_skips_monte_carlo_and_keeps_the_tagger_loss(graph):
    h, token_x, sent_len, edge_index, y = graph
    module = _module(threshold=0.0).eval()
    unpruned = module(h, edge_index, token_x, sent_len, y=y, node_type=y, prune=False)
    assert unpruned.uncertainty is None and unpruned.drop is None
    assert unpruned.uncertainty_loss is not None
    module.uncertainty.threshold = 1e9  # pruning that drops nothing
    kept = module(h, edge_index, token_x, sent_len, y=y, node_type=y)
    torch.testing.assert_close(kept.x, unpruned.x)
    torch.testing.assert_close(kept.uncertainty_loss, unpruned.uncertainty_loss)


def test_invalid_arguments(graph):
    h, _, _, edge_index, _ = graph
    with pytest.raises(ValueError, match="token_channels and num_labels"):
        DocumentGraphModule(D)
    with pytest.raises(ValueError, match="relation_labels"):
        DocumentGraphModule(D, pruning=False, relation_labels="same")
    with pytest.raises(ValueError, match="isolated"):
        DocumentGraphModule(D, pruning=False, isolated="drop")
    with pytest.raises(ValueError, match="token_x and sent_len"):
        _module()(h, edge_index)


@pytest.mark.parametrize("width", [4, 16, 100])
def test_token_x_of_the_wrong_width(graph, width):
    h, _, sent_len, edge_index, y = graph
    token_x = torch.randn(6, width)
    with pytest.raises(ValueError, match=rf"token_x must have shape \[N=6, 5\] "
                                         rf"\(token_channels=5\), got \[6, {width}\]"):
        _module()(h, edge_index, token_x, sent_len, y=y)


def test_x_and_per_node_targets_of_the_wrong_shape(graph):
    h, token_x, sent_len, edge_index, y = graph
    with pytest.raises(ValueError, match=r"x must have shape \[N, 6\] \(channels=6\)"):
        _module()(h[:, :5], edge_index, token_x, sent_len)
    with pytest.raises(ValueError, match=r"token_x must have shape \[N=6, 5\].*got \[5, 5\]"):
        _module()(h, edge_index, token_x[:5], sent_len)
    with pytest.raises(ValueError, match=r"y must have shape \[N=6\].*got \[5\]"):
        _module()(h, edge_index, token_x, sent_len, y=y[:5])
    with pytest.raises(ValueError, match=r"node_type must have shape \[N=6\].*got \[7\]"):
        _module(pruning=False)(h, edge_index, node_type=torch.zeros(7, dtype=torch.long))
    with pytest.raises(ValueError, match=r"edge_index must hold node indices in \[0, 6\)"):
        _module()(h, torch.tensor([[0, 6], [6, 0]]), token_x, sent_len)


@pytest.mark.parametrize("sent_len", [torch.tensor([3, 2]), torch.tensor([3, 3, 2]), [4, 4]],
                         ids=["short", "long", "list"])
def test_sent_len_not_summing_to_n(graph, sent_len):
    h, token_x, _, edge_index, _ = graph
    with pytest.raises(ValueError, match=r"sent_len must sum to N=6 \(the number of nodes\)"):
        _module()(h, edge_index, token_x, sent_len)


@torch.no_grad()
@pytest.mark.parametrize("as_list", [list, tuple])
def test_sent_len_as_a_list(graph, as_list):
    h, token_x, sent_len, edge_index, y = graph
    module = _module().eval()
    torch.manual_seed(5)
    expected = module(h, edge_index, token_x, sent_len, y=y)
    torch.manual_seed(5)
    out = module(h, edge_index, token_x, as_list(sent_len.tolist()), y=y)
    for a, b in zip(out, expected):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("sent_len", [[3.0, 3.0], torch.tensor([3.0, 3.0]), "33"],
                         ids=["list of floats", "float tensor", "str"])
def test_sent_len_of_the_wrong_type(graph, sent_len):
    h, token_x, _, edge_index, _ = graph
    with pytest.raises(TypeError, match="sent_len must"):
        _module()(h, edge_index, token_x, sent_len)


def test_sent_len_on_an_accelerator_is_summed_from_the_plan():
    """Lengths that are not on the CPU are checked against the plan's host copy."""
    from docgraph.nn.document_graph import _check_planned_lengths
    from docgraph.nn.layout import SequenceLayout

    layout = SequenceLayout.from_lengths([3, 2])
    _check_planned_lengths(torch.tensor([3, 2]), layout, 5)
    with pytest.raises(ValueError, match=r"sent_len must sum to N=6 .*summing to 5"):
        _check_planned_lengths(torch.tensor([3, 2]), layout, 6)
    with pytest.raises(ValueError, match="plan.sentences has 2 sentences for the 3 lengths"):
        _check_planned_lengths(torch.tensor([3, 2, 1]), layout, 6)


def test_reset_parameters_redraws_each_child():
    module = _module()
    with torch.no_grad():
        for param in module.parameters():
            param.fill_(0.123)
    module.reset_parameters()
    for name, param in module.named_parameters():
        assert not torch.all(param == 0.123), name
    # the children are reset in the order they were built
    other = _module(seed=2)
    torch.manual_seed(9)
    module.reset_parameters()
    torch.manual_seed(9)
    for child in (other.uncertainty, other.relation, other.graph_conv):
        child.reset_parameters()
    for (name, a), (_, b) in zip(module.named_parameters(), other.named_parameters()):
        assert torch.equal(a, b), name


def test_repr():
    module = _module()
    assert module.extra_repr() == ("6, pruning=True, edge_weights=True, "
                                   "detach_uncertainty_input=True, relation_labels='entity', "
                                   "outside_type=0")
    assert repr(module).startswith("DocumentGraphModule(\n  6, pruning=True")
    assert "(graph_conv): DocGraphConv(6, isolated=identity)" in repr(module)
    plain = DocumentGraphModule(8, pruning=False, edge_weights=False, isolated="gate")
    assert plain.extra_repr() == "8, pruning=False, edge_weights=False"


# ---------------------------------------------------------------------------- inside GCDoc


def _gcdoc(vocabs, seed: int, **switches) -> GCDoc:
    torch.manual_seed(seed)
    _, label_to_type = label_types(vocabs.labels)
    return GCDoc(GCDocConfig(**{**TINY_MODEL, **switches}), len(vocabs.words),
                 len(vocabs.chars), len(vocabs.labels), label_to_type)


@pytest.fixture(scope="module")
def batch(sample_splits, sample_vocabs):
    graphs = documents_to_graphs(sample_splits["train"][:3], sample_vocabs, GraphConfig())
    return Batch.from_data_list(graphs)


def _old_names(state: dict) -> dict:
    """``state`` as GCDoc saved it before the document graph module was a class."""
    return {k.removeprefix("document_graph."): v for k, v in state.items()}


def test_gcdoc_has_one_document_graph_child(sample_vocabs):
    model = _gcdoc(sample_vocabs, 0)
    assert isinstance(model.document_graph, DocumentGraphModule)
    children = dict(model.named_children())
    assert not {"uncertainty", "relation", "graph_conv"} & set(children)
    assert {k.split(".")[1] for k in model.state_dict() if k.startswith("document_graph.")} \
        == {"uncertainty", "relation", "graph_conv"}
    assert _gcdoc(sample_vocabs, 0, graph=False).document_graph is None
    assert _gcdoc(sample_vocabs, 0, pruning=False).document_graph.uncertainty is None
    assert _gcdoc(sample_vocabs, 0, edge_weights=False).document_graph.relation is None
    # the module is built from the configuration: one value of the threshold
    model = _gcdoc(sample_vocabs, 0, threshold=1.5)
    assert model.document_graph.uncertainty.threshold == 1.5 and model.config.threshold == 1.5


def test_upgrade_state_dict_key():
    assert upgrade_state_dict_key("uncertainty.lin.weight") == \
        "document_graph.uncertainty.lin.weight"
    assert upgrade_state_dict_key("graph_conv.lin_a.bias") == "document_graph.graph_conv.lin_a.bias"
    assert upgrade_state_dict_key("relation.lin.bias") == "document_graph.relation.lin.bias"
    for key in ("document_graph.relation.lin.bias", "emission.weight", "label_to_type",
                "context_encoder.lstm.weight_ih_l0"):
        assert upgrade_state_dict_key(key) == key


@pytest.mark.parametrize("switches", [{}, {"pruning": False}, {"edge_weights": False}])
def test_state_dict_with_the_old_keys_loads_strictly(batch, sample_vocabs, switches):
    saved = _gcdoc(sample_vocabs, 0, **switches)
    old = _old_names(saved.state_dict())
    assert "graph_conv.lin_a.weight" in old
    assert not any(k.startswith("document_graph.") for k in old)
    model = _gcdoc(sample_vocabs, 1, **switches)
    assert not torch.equal(model.document_graph.graph_conv.lin_a.weight,
                           saved.document_graph.graph_conv.lin_a.weight)
    model.load_state_dict(old)  # strict
    for (name, a), (_, b) in zip(model.state_dict().items(), saved.state_dict().items()):
        assert torch.equal(a, b), name
    assert "graph_conv.lin_a.weight" in old  # the caller's dict is left as it was
    saved.eval()
    model.eval()
    torch.manual_seed(4)
    expected = saved(batch)
    torch.manual_seed(4)
    got = model(batch)
    for field in ("loss", "emissions", "uncertainty", "edge_weight", "relation_loss",
                  "uncertainty_loss"):
        a, b = getattr(got, field), getattr(expected, field)
        assert (a is None) == (b is None), field
        if a is not None:
            assert torch.equal(a, b), field


def test_old_keys_load_under_a_prefix_and_new_keys_are_unchanged(sample_vocabs):
    saved = _gcdoc(sample_vocabs, 0)
    wrapper = torch.nn.ModuleDict({"module": _gcdoc(sample_vocabs, 1)})  # as inside DDP
    wrapper.load_state_dict({f"module.{k}": v for k, v in _old_names(saved.state_dict()).items()})
    for (name, a), (_, b) in zip(wrapper["module"].state_dict().items(),
                                 saved.state_dict().items()):
        assert torch.equal(a, b), name
    today = _gcdoc(sample_vocabs, 1)
    today.load_state_dict(saved.state_dict())
    assert torch.equal(today.document_graph.relation.lin.weight,
                       saved.document_graph.relation.lin.weight)
    # a key saved under both names is not renamed over the new one: strict loading refuses it
    both = {**saved.state_dict(), "relation.lin.bias": torch.zeros(1)}
    with pytest.raises(RuntimeError, match="Unexpected key.*relation.lin.bias"):
        today.load_state_dict(both)
    baseline = _gcdoc(sample_vocabs, 0, graph=False)
    baseline.load_state_dict(_gcdoc(sample_vocabs, 1, graph=False).state_dict())


def test_a_plan_made_beforehand_gives_what_the_module_plans_itself(sample_splits, sample_vocabs):
    """DocumentGraphModule on what a PyG model has (x, edge_index, token features, sentence
    lengths) equals the same call with GCDoc's host-side plan; per-graph masks by seed."""
    from docgraph.batching.loader import collate
    from docgraph.graph import GraphConfig, documents_to_graphs
    from docgraph.model import GCDocConfig
    from docgraph.nn import DocumentGraphPlan
    from docgraph.persistence.model_dir import build_model

    graphs = documents_to_graphs(sample_splits["train"], sample_vocabs, GraphConfig())
    torch.manual_seed(0)
    model = build_model(GCDocConfig(hidden=8, char_hidden=4, char_dim=4, sent_dim=8,
                                    uncertainty_hidden=4, num_samples=3), sample_vocabs).eval()
    batch = collate(graphs, [0, 1, 2], torch.device("cpu"), model.plan_settings())
    plan = model.plan(batch)
    module = model.document_graph
    h = torch.randn(batch.num_nodes, module.channels)
    token_x = model._token_features(batch, plan).detach()
    seeds = [11, 12, 13]
    planned = DocumentGraphPlan(
        sentences=plan.sentences, monte_carlo=plan.monte_carlo, gated_nodes=plan.gated_nodes,
        edge_ptr=plan.edge_ptr, segment_sizes=[int(n) for n in batch.ptr.diff()],
        segment_seeds=seeds)
    built = DocumentGraphPlan.build(batch.edge_index, batch.sent_len, num_samples=3,
                                    batch=batch.batch, segment_seeds=seeds)
    assert torch.equal(built.gated_nodes, plan.gated_nodes)
    assert torch.equal(built.edge_ptr, plan.edge_ptr)
    a = module(h, batch.edge_index, token_x, batch.sent_len, plan=planned)
    b = module(h, batch.edge_index, token_x, batch.sent_len, plan=built)
    assert torch.equal(a.drop, b.drop)
    torch.testing.assert_close(a.x, b.x)
    torch.testing.assert_close(a.uncertainty, b.uncertainty)
    # without a plan: the same graph computation (masks from the global stream, so compare
    # with pruning off)
    c = module(h, batch.edge_index, token_x, batch.sent_len, prune=False)
    d = module(h, batch.edge_index, token_x, batch.sent_len, prune=False, plan=planned)
    torch.testing.assert_close(c.x, d.x)
    with pytest.raises(ValueError, match="segment_seeds for"):
        DocumentGraphPlan.build(batch.edge_index, batch.sent_len, batch=batch.batch,
                                segment_seeds=[1])


#: Runs in a fresh interpreter where ``docgraph.config`` cannot be imported: builds both layers
#: with their literal defaults on the hand-made graph of :func:`graph` and prints their outputs.
_STANDALONE = """
import importlib.abc, json, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "docgraph.config" or name.startswith("docgraph.config."):
            raise ImportError(f"{name} is unimportable here")
        return None

sys.meta_path.insert(0, Refuse())
import torch
from docgraph.nn import DocGraphConv, DocumentGraphModule

torch.set_num_threads(1)  # as the tests run
torch.manual_seed(0)
h, token_x = torch.randn(6, 6), torch.randn(6, 5)
pairs = [(0, 3), (0, 5), (3, 5), (1, 4)]
edge_index = torch.tensor([[j for a, b in pairs for j in (a, b)],
                           [i for a, b in pairs for i in (b, a)]])
torch.manual_seed(1)
conv = DocGraphConv(6)
module = DocumentGraphModule(6, 5, 4).eval()
with torch.no_grad():
    conv_out = conv(h, edge_index)
    out = module(h, edge_index, token_x, torch.tensor([3, 3]))
loaded = sorted(m for m in sys.modules if m.startswith("docgraph.config"))
print(json.dumps({"conv": conv_out.tolist(), "x": out.x.tolist(),
                  "uncertainty": out.uncertainty.tolist(), "loaded": loaded}))
"""


def test_the_layers_stand_alone_without_the_configuration(graph):
    """``DocGraphConv`` and ``DocumentGraphModule`` import and run where ``docgraph.config``
    cannot be imported, and compute what they compute beside the whole library."""
    import json
    import subprocess
    import sys

    from docgraph.nn import DocGraphConv

    result = subprocess.run([sys.executable, "-c", _STANDALONE], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    alone = json.loads(result.stdout)
    assert alone["loaded"] == []
    h, token_x, sent_len, edge_index, _ = graph
    torch.manual_seed(1)
    conv, module = DocGraphConv(D), DocumentGraphModule(D, F_U, C).eval()
    with torch.no_grad():
        out = module(h, edge_index, token_x, sent_len)
        assert torch.equal(torch.tensor(alone["conv"]), conv(h, edge_index))
    assert torch.equal(torch.tensor(alone["x"]), out.x)
    assert torch.equal(torch.tensor(alone["uncertainty"]), out.uncertainty)
    # the refusal is real: the same interpreter set-up cannot import the configuration
    refused = subprocess.run(
        [sys.executable, "-c", _STANDALONE.split("import torch")[0] + "import docgraph.config"],
        capture_output=True, text=True)
    assert refused.returncode != 0 and "unimportable" in refused.stderr


def test_the_layers_literal_defaults_are_the_models():
    """A layer's literal default equals the model configuration's default of that setting, so
    a layer built alone is the layer of a default GCDoc."""
    import inspect

    from docgraph.nn import CharEncoder, CrossSentenceEncoder, DocGraphConv, UncertaintyTagger

    settings = {  # (layer, argument) -> GCDocConfig field
        (DocGraphConv, "isolated"): "isolated",
        (CharEncoder, "char_dim"): "char_dim", (CharEncoder, "hidden_channels"): "char_hidden",
        (CrossSentenceEncoder, "sent_channels"): "sent_dim",
        (CrossSentenceEncoder, "window"): "window",
        (CrossSentenceEncoder, "use_previous"): "use_previous",
        (CrossSentenceEncoder, "use_next"): "use_next",
        (CrossSentenceEncoder, "window_encoding"): "window_encoding",
        (UncertaintyTagger, "hidden_channels"): "uncertainty_hidden",
        **{(DocumentGraphModule, name): name for name in (
            "pruning", "edge_weights", "uncertainty_hidden", "dropout", "num_samples",
            "threshold", "mc_dropout", "detach_uncertainty_input", "relation_labels",
            "isolated")},
        **{(UncertaintyTagger, name): name for name in (
            "dropout", "num_samples", "threshold", "mc_dropout")},
    }
    for (layer, argument), field in settings.items():
        default = inspect.signature(layer.__init__).parameters[argument].default
        assert default == getattr(GCDocConfig, field), (layer.__name__, argument)
