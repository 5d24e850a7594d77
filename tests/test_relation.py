"""Tests of :class:`docgraph.nn.RelationClassifier`."""

import torch
import torch.nn.functional as F

from docgraph.nn import RelationClassifier, relation_loss


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
