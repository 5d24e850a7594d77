"""Tests of :class:`docgraph.nn.RelationClassifier`."""

import math

import pytest
import torch
import torch.nn.functional as F

from docgraph.nn import RelationClassifier, relation_loss
from docgraph.nn.relation import relation_targets


def test_relation_classifier_matches_concatenation():
    torch.manual_seed(0)
    clf = RelationClassifier(6)
    torch.nn.init.uniform_(clf.lin.bias)
    assert str(clf) == "RelationClassifier(6)"
    h = torch.randn(5, 6)
    edge_index = torch.tensor([[0, 1, 2, 4, 3], [1, 0, 4, 2, 3]])
    r = clf(h, edge_index)
    j, i = edge_index
    ref = torch.sigmoid(clf.lin(torch.cat([h[i], h[j]], dim=-1))).view(-1)
    torch.testing.assert_close(r, ref)
    logits = clf(h, edge_index, return_logits=True)
    torch.testing.assert_close(torch.sigmoid(logits), ref)
    assert r.shape == (5,)


def test_relation_loss():
    torch.manual_seed(0)
    logits = torch.randn(7) * 3
    y = torch.tensor([1, 0, 1, 1, 0, 0, 1], dtype=torch.bool)
    ref = F.binary_cross_entropy(torch.sigmoid(logits), y.float(), reduction="sum")
    torch.testing.assert_close(relation_loss(logits, y), ref)
    torch.testing.assert_close(RelationClassifier.relation_loss(logits, y), ref)
    torch.testing.assert_close(relation_loss(logits, y, reduction="mean"), ref / 7)
    # Stable for huge logits.
    assert torch.isfinite(relation_loss(torch.tensor([1e4, -1e4]), torch.tensor([0, 1])))


def test_relation_gradients():
    clf = RelationClassifier(4)
    h = torch.randn(3, 4, requires_grad=True)
    edge_index = torch.tensor([[0, 1], [1, 2]])
    relation_loss(clf(h, edge_index, return_logits=True), torch.tensor([1, 0])).backward()
    assert clf.lin.weight.grad is not None and h.grad is not None


# Nodes: 0, 1, 5 are O (type 0); 2, 3 are PER (type 1); 4 is LOC (type 2).
NODE_TYPE = torch.tensor([0, 0, 1, 1, 2, 0])
# Edges (source, target): O-O, PER-PER, PER-LOC, O-PER, PER-PER.
EDGES = torch.tensor([[0, 2, 2, 1, 3], [1, 3, 4, 2, 2]])
LN3 = math.log(3.0)
LOGITS = torch.tensor([2.0, 0.0, LN3, -LN3, LN3])


def test_relation_targets_type_and_entity():
    same, mask = relation_targets(NODE_TYPE, EDGES, "type")
    assert same.tolist() == [True, True, False, False, True] and mask is None
    same, mask = relation_targets(NODE_TYPE, EDGES, "entity")
    assert same.tolist() == [False, True, False, False, True]
    assert mask.tolist() == [False, True, True, True, True]
    # The id of O is a parameter: with PER (1) as "outside", the PER-PER edges are masked.
    _, mask = relation_targets(NODE_TYPE, EDGES, "entity", outside=1)
    assert mask.tolist() == [True, False, True, True, False]
    with pytest.raises(ValueError, match="labels"):
        relation_targets(NODE_TYPE, EDGES, "span")


def test_relation_loss_by_hand():
    # Per edge, -log r for y = 1 is log(1 + e^-l) and -log(1 - r) for y = 0 is log(1 + e^l):
    #   O-O      l = 2,     y = 1 ("type" only):  log(1 + e^-2)
    #   PER-PER  l = 0,     y = 1:                log 2
    #   PER-LOC  l = ln 3,  y = 0:                log 4
    #   O-PER    l = -ln 3, y = 0:                log 4/3
    #   PER-PER  l = ln 3,  y = 1:                log 4/3
    entity = math.log(2) + math.log(4) + 2 * math.log(4 / 3)  # = log(128 / 9)
    same, mask = relation_targets(NODE_TYPE, EDGES, "entity")
    assert relation_loss(LOGITS, same, mask=mask).item() == pytest.approx(math.log(128 / 9))
    assert relation_loss(LOGITS, same, "mean", mask).item() == pytest.approx(entity / 4)
    per_edge = relation_loss(LOGITS, same, "none", mask)
    assert per_edge[0].item() == 0.0 and per_edge.sum().item() == pytest.approx(entity)
    same, mask = relation_targets(NODE_TYPE, EDGES, "type")
    full = entity + math.log(1 + math.exp(-2))
    assert relation_loss(LOGITS, same, mask=mask).item() == pytest.approx(full)
    # No edge left: the sum and the mean are 0.
    none = torch.zeros(5, dtype=torch.bool)
    assert relation_loss(LOGITS, same, "mean", none).item() == 0.0
    assert RelationClassifier.relation_loss(LOGITS, same, "sum", none).item() == 0.0
