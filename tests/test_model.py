"""Tests of the whole :class:`docgraph.model.GCDoc` model on batches of the sample corpus."""

import pytest
import torch
from torch_geometric.data import Batch

from docgraph.config import ExperimentConfig
from docgraph.data.tags import bioes_to_iob2
from docgraph.graph.splits import prepare_split
from docgraph.metrics import score
from docgraph.model import GCDoc, GCDocConfig, GCDocOutput, bioes_transition_masks
from docgraph.persistence.model_dir import build_model

TINY = dict(hidden=16, char_hidden=8, sent_dim=16, uncertainty_hidden=8, num_samples=2)


def _model(vocabs, seed=0, **kwargs) -> GCDoc:
    torch.manual_seed(seed)
    return build_model(GCDocConfig(**{**TINY, **kwargs}), vocabs)


@pytest.fixture(scope="module")
def batch(sample_splits, sample_vocabs):
    prepared = prepare_split(sample_splits["train"][:4], sample_vocabs, ExperimentConfig())
    return Batch.from_data_list(prepared.graphs)


def _labels(vocabs) -> list[str]:
    return vocabs.labels.lookup(list(range(len(vocabs.labels))))


#: Where each optional part of GCDoc lives (its parameters' name prefix).
PARTS = {"cross_sentence": "cross_sentence", "uncertainty": "document_graph.uncertainty",
         "relation": "document_graph.relation", "graph_conv": "document_graph.graph_conv"}


def _part(model: GCDoc, name: str):
    """The optional part ``name`` of ``model`` (a key of :data:`PARTS`), ``None`` when off."""
    module = model
    for attr in PARTS[name].split("."):
        module = None if module is None else getattr(module, attr)
    return module


def test_forward_backward_every_parameter_gets_a_gradient(batch, sample_vocabs):
    # threshold above log(C): no token is pruned, so the graph layer receives messages
    model = _model(sample_vocabs, threshold=100.0)
    assert all(_part(model, name) is not None for name in PARTS)
    out = model(batch)
    assert isinstance(out, GCDocOutput)
    N, C = batch.num_nodes, len(sample_vocabs.labels)
    assert out.emissions.shape == (N, C)
    assert out.uncertainty.shape == (N,) and out.drop.shape == (N,) and not out.drop.any()
    assert out.edge_weight.shape == (batch.edge_index.size(1),)
    assert ((out.edge_weight > 0) & (out.edge_weight < 1)).all()
    assert out.num_sentences == int(batch.sent_len.numel())
    for part in (out.loss, out.crf_loss, out.relation_loss, out.uncertainty_loss):
        assert part.dim() == 0 and torch.isfinite(part) and part > 0
    torch.testing.assert_close(
        out.loss, out.crf_loss + model.config.theta * out.relation_loss + out.uncertainty_loss
    )
    out.loss.backward()
    missing = [name for name, p in model.named_parameters()
               if p.requires_grad and (p.grad is None or not p.grad.abs().sum() > 0)]
    assert missing == []
    prefixes = {name.split(".")[0] for name, p in model.named_parameters() if p.grad is not None}
    assert {"word_embedding", "char_encoder", "cross_sentence", "context_encoder",
            "document_graph", "emission", "crf"} <= prefixes
    graph_parts = {name.split(".")[1] for name, p in model.named_parameters()
                   if p.grad is not None and name.startswith("document_graph.")}
    assert graph_parts == {"uncertainty", "relation", "graph_conv"}


def test_uncertainty_loss_does_not_reach_shared_embeddings(batch, sample_vocabs):
    model = _model(sample_vocabs)
    model(batch).uncertainty_loss.backward()
    assert model.word_embedding.weight.grad is None
    assert all(p.grad is not None for p in model.document_graph.uncertainty.parameters())
    attached = _model(sample_vocabs, detach_uncertainty_input=False)
    attached(batch).uncertainty_loss.backward()
    assert attached.word_embedding.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("switch, present, absent", [
    ({}, {"cross_sentence", "uncertainty", "relation", "graph_conv"}, set()),
    ({"graph": False, "cross_sentence": False}, set(),
     {"cross_sentence", "uncertainty", "relation", "graph_conv"}),
    ({"pruning": False}, {"relation", "graph_conv", "cross_sentence"}, {"uncertainty"}),
    ({"edge_weights": False}, {"uncertainty", "graph_conv"}, {"relation"}),
    ({"window": 0}, {"uncertainty", "relation", "graph_conv"}, {"cross_sentence"}),
    # the current sentence alone (Table VII, first row): the module stays, without context
    ({"use_previous": False, "use_next": False},
     {"uncertainty", "relation", "graph_conv", "cross_sentence"}, set()),
    ({"graph": False}, {"cross_sentence"}, {"uncertainty", "relation", "graph_conv"}),
])
def test_switches_remove_modules_and_losses(batch, sample_vocabs, switch, present, absent):
    model = _model(sample_vocabs, **switch)
    for name in present:
        assert _part(model, name) is not None, name
    for name in absent:
        assert _part(model, name) is None, name
        assert not any(n.startswith(PARTS[name] + ".") for n, _ in model.named_parameters())
    # the document graph module is there as a whole exactly when its graph layer is
    assert (model.document_graph is None) == ("graph_conv" in absent)
    out = model(batch)
    assert (out.uncertainty_loss is None) == ("uncertainty" not in present)
    assert (out.uncertainty is None) == ("uncertainty" not in present)
    assert (out.relation_loss is None) == ("relation" not in present)
    assert (out.edge_weight is None) == ("relation" not in present)
    expected = out.crf_loss
    if out.relation_loss is not None:
        expected = expected + model.config.theta * out.relation_loss
    if out.uncertainty_loss is not None:
        expected = expected + out.uncertainty_loss
    torch.testing.assert_close(out.loss, expected)
    out.loss.backward()


def test_baseline_config():
    cfg = GCDocConfig.baseline(hidden=8)
    assert not cfg.uses_cross_sentence and not cfg.uses_uncertainty and not cfg.uses_relation
    assert cfg.hidden == 8
    assert GCDocConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown model configuration keys: nope"):
        GCDocConfig.from_dict({"nope": 1})


def test_no_loss_without_labels(batch, sample_vocabs):
    out = _model(sample_vocabs)(batch, compute_loss=False)
    assert out.relation_loss is None and out.uncertainty_loss is None
    assert float(out.loss) == 0.0 and out.uncertainty is not None


def test_predict_returns_label_ids_and_restores_mode(batch, sample_vocabs):
    model = _model(sample_vocabs).train()
    pred = model.predict(batch)
    assert model.training
    assert pred.shape == (batch.num_nodes,) and pred.dtype == torch.long
    assert int(pred.min()) >= 0 and int(pred.max()) < len(sample_vocabs.labels)
    torch.manual_seed(5)
    again = model.predict(batch)
    torch.manual_seed(5)
    assert torch.equal(model.predict(batch), again)
    inspected = model.inspect(batch)
    assert model.training and inspected.drop is not None


def test_deterministic_for_a_seed(batch, sample_vocabs):
    a, b = _model(sample_vocabs, seed=3), _model(sample_vocabs, seed=3)
    for (na, pa), (nb, pb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert na == nb and torch.equal(pa, pb), na
    torch.manual_seed(11)
    out_a = a(batch)
    torch.manual_seed(11)
    out_b = b(batch)
    assert torch.equal(out_a.loss, out_b.loss)
    assert torch.equal(out_a.uncertainty, out_b.uncertainty)
    # MC-dropout uncertainty (eval mode) is random: keyed by mc_seed (and each document), not
    # by torch's global stream; mc_seed=None draws from the global stream
    torch.manual_seed(2)
    u1 = a.inspect(batch).uncertainty
    u2 = a.inspect(batch).uncertainty
    assert torch.equal(u1, u2)
    assert not torch.equal(u1, a.inspect(batch, mc_seed=1).uncertainty)
    torch.manual_seed(2)
    g1 = a.inspect(batch, mc_seed=None).uncertainty
    torch.manual_seed(2)
    assert torch.equal(g1, a.inspect(batch, mc_seed=None).uncertainty)
    assert not torch.equal(g1, a.inspect(batch, mc_seed=None).uncertainty)
    c = _model(sample_vocabs, seed=4)
    assert not torch.equal(c.emission.weight, a.emission.weight)


def test_bioes_transition_masks():
    labels = ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "E-LOC", "S-LOC"]
    trans, start, end = bioes_transition_masks(labels)
    idx = {lab: i for i, lab in enumerate(labels)}
    assert trans.shape == (8, 8) and trans.dtype == torch.bool
    allowed = {("O", "O"), ("O", "B-PER"), ("B-PER", "I-PER"), ("B-PER", "E-PER"),
               ("I-PER", "I-PER"), ("I-PER", "E-PER"), ("E-PER", "S-LOC"), ("S-PER", "B-LOC"),
               ("B-LOC", "E-LOC"), ("E-LOC", "O"), ("S-LOC", "S-LOC")}
    forbidden = {("O", "I-PER"), ("O", "E-PER"), ("B-PER", "O"), ("B-PER", "E-LOC"),
                 ("I-PER", "B-PER"), ("E-PER", "I-PER"), ("S-PER", "E-PER"),
                 ("B-LOC", "B-LOC"), ("B-PER", "B-PER"), ("I-PER", "S-PER")}
    for a, b in allowed:
        assert trans[idx[a], idx[b]], (a, b)
    for a, b in forbidden:
        assert not trans[idx[a], idx[b]], (a, b)
    assert start.tolist() == [True, True, False, False, True, True, False, True]
    assert end.tolist() == [True, False, False, True, True, False, True, True]


def _valid_bioes(tags: list[str]) -> bool:
    prev = "O"
    for tag in [*tags, "O"]:
        p, t = (tag, "") if tag == "O" else (tag[0], tag[2:])
        pp, pt = (prev, "") if prev == "O" else (prev[0], prev[2:])
        if pp in ("B", "I"):
            if not (p in ("I", "E") and t == pt):
                return False
        elif p in ("I", "E"):
            return False
        prev = tag
    return True


def test_constrained_decoding_only_outputs_valid_bioes(batch, sample_vocabs):
    labels = _labels(sample_vocabs)
    model = _model(sample_vocabs, seed=7, constrained_decoding=True)
    with torch.no_grad():  # sharpen the random emissions so that they disagree with BIOES
        model.emission.weight.mul_(20)
    pred = model.predict(batch).tolist()
    offset = 0
    for length in batch.sent_len.tolist():
        tags = [labels[i] for i in pred[offset:offset + length]]
        assert _valid_bioes(tags), tags
        offset += length
    assert _valid_bioes(["B-PER", "E-PER", "S-LOC", "O"])
    assert not _valid_bioes(["B-PER", "O"]) and not _valid_bioes(["I-PER"])
    assert not _valid_bioes(["B-PER", "E-LOC"])


def test_overfits_three_documents(sample_splits, sample_vocabs):
    docs = sample_splits["train"][:3]
    prepared = prepare_split(docs, sample_vocabs, ExperimentConfig())
    batch = Batch.from_data_list(prepared.graphs)
    labels = _labels(sample_vocabs)
    gold = [list(s.tags) for d in docs for s in d.sentences]
    model = _model(sample_vocabs, seed=0, dropout=0.0, hidden=32, num_samples=1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    f1, steps = 0.0, 0
    for steps in range(1, 151):
        model.train()
        out = model(batch)
        optimizer.zero_grad()
        (out.loss / out.num_sentences).backward()
        optimizer.step()
        if steps % 10 == 0:
            ids = model.predict(batch).tolist()
            pred, offset = [], 0
            for length in batch.sent_len.tolist():
                pred.append(bioes_to_iob2([labels[i] for i in ids[offset:offset + length]]))
                offset += length
            f1 = score(gold, pred).f1
            if f1 == 100.0:
                break
    assert f1 == 100.0, f"F1 {f1:.2f} after {steps} steps"


def test_fast_approximations_train_and_validate(batch, sample_vocabs):
    model = _model(sample_vocabs, threshold=100.0, window_encoding="per_sentence",
                   mc_dropout="output")
    assert model.cross_sentence.window_encoding == "per_sentence"
    assert model.document_graph.uncertainty.mc_dropout == "output"
    out = model(batch)
    assert torch.isfinite(out.loss) and out.uncertainty.shape == (batch.num_nodes,)
    out.loss.backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
    assert GCDocConfig.from_dict(model.config.to_dict()) == model.config
    with pytest.raises(ValueError, match="window_encoding"):
        GCDocConfig(window_encoding="mean")
    with pytest.raises(ValueError, match="mc_dropout"):
        GCDocConfig(mc_dropout="input")


def test_frozen_embeddings_stay_put_while_the_rest_learns(batch, sample_vocabs):
    model = _model(sample_vocabs, freeze_embeddings=True)
    before = model.word_embedding.weight.detach().clone()
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.1)
    emission = model.emission.weight.detach().clone()
    model(batch).loss.backward()
    optimizer.step()
    assert model.word_embedding.weight.grad is None
    torch.testing.assert_close(model.word_embedding.weight, before)
    assert not torch.equal(model.emission.weight, emission)


# ---------------------------------------------------------------- relation labels (O as a type)
# "Paris" occurs three times (LOC, LOC, ORG), "is" and "the" twice (O): the full graph has
# 6 Paris edges, 2 "is" edges and 2 "the" edges.
HAND_DOC = [
    (["Paris", "is", "in", "Paris"], ["B-LOC", "O", "O", "B-LOC"]),
    (["the", "Paris", "club", "is", "the", "best"], ["O", "B-ORG", "I-ORG", "O", "O", "O"]),
]
PARIS_LOC, PARIS_ORG, IS, THE = {0, 3}, {5}, {1, 7}, {4, 8}


def _hand_batch():
    from docgraph.data.document import make_document
    from docgraph.data.vocab import Vocabularies
    from docgraph.graph import GraphConfig, documents_to_graphs

    doc = make_document("hand", HAND_DOC)
    vocabs = Vocabularies.build([doc])
    graphs = documents_to_graphs([doc], vocabs, GraphConfig(max_neighbours=None))
    return Batch.from_data_list(graphs), vocabs


def _hand_targets(src: int, dst: int) -> tuple[float | None, float]:
    """``(y under "entity" (None: left out), y under "type")`` of an edge, by hand."""
    pair = {src, dst}
    if pair <= IS or pair <= THE:
        return None, 1.0  # O-O
    if pair <= PARIS_LOC:
        return 1.0, 1.0  # LOC-LOC
    return 0.0, 0.0  # LOC-ORG


@pytest.mark.parametrize("labels", ["type", "entity"])
def test_relation_labels_loss_by_hand(labels):
    batch, vocabs = _hand_batch()
    assert batch.edge_index.size(1) == 10
    model = _model(vocabs, seed=0, relation_labels=labels, pruning=False).eval()
    out = model(batch)
    r = out.edge_weight.detach().double()
    expected, kept = 0.0, 0
    for k, (src, dst) in enumerate(batch.edge_index.t().tolist()):
        entity_y, type_y = _hand_targets(src, dst)
        y = type_y if labels == "type" else entity_y
        if y is None:
            continue
        kept += 1
        expected -= y * torch.log(r[k]) + (1 - y) * torch.log(1 - r[k])
    assert kept == (10 if labels == "type" else 6)
    assert out.relation_loss.item() == pytest.approx(float(expected), rel=1e-5)
    torch.testing.assert_close(
        out.loss, out.crf_loss + model.config.theta * out.relation_loss
    )


def test_relation_labels_validated_and_default_is_entity():
    assert GCDocConfig().relation_labels == "entity"
    with pytest.raises(ValueError, match="relation_labels"):
        GCDocConfig(relation_labels="span")
    cfg = GCDocConfig(relation_labels="entity", unpruned_epochs=2)
    assert GCDocConfig.from_dict(cfg.to_dict()) == cfg


def test_old_config_without_new_keys_loads():
    old = GCDocConfig().to_dict()
    del old["relation_labels"], old["unpruned_epochs"]
    cfg = GCDocConfig.from_dict(old)
    assert cfg.relation_labels == "type" and cfg.unpruned_epochs == 0
    # a run's config.json written before the key existed keeps "type"; a preset gets the default
    from docgraph.config import ExperimentConfig

    assert ExperimentConfig.from_saved({"model": old}).model.relation_labels == "type"
    assert ExperimentConfig.from_dict({"model": {"window": 2}}).model.relation_labels == "entity"


# ---------------------------------------------------------------- pruning warm-up
def test_set_epoch_follows_unpruned_epochs(sample_vocabs):
    model = _model(sample_vocabs, unpruned_epochs=2)
    assert model.pruning_active  # a freshly built (or loaded) model prunes
    assert [(model.set_epoch(e), model.pruning_active)[1] for e in (1, 2, 3, 4)] == [
        False, False, True, True]
    model = _model(sample_vocabs)
    model.set_epoch(1)
    assert model.pruning_active
    assert "pruning_active" not in model.state_dict()
    with pytest.raises(ValueError, match="unpruned_epochs"):
        GCDocConfig(unpruned_epochs=-1)


def test_unpruned_forward_sends_every_message(batch, sample_vocabs):
    # threshold 0: every token is uncertain, so pruning removes every message.
    model = _model(sample_vocabs, threshold=0.0).eval()
    pruned = model(batch)
    assert pruned.drop is not None and pruned.drop.all()

    model.pruning_active = False
    unpruned = model(batch)
    assert unpruned.drop is None and unpruned.uncertainty is None
    assert unpruned.uncertainty_loss is not None  # the tagger still trains
    torch.testing.assert_close(unpruned.uncertainty_loss, pruned.uncertainty_loss)
    assert not torch.allclose(unpruned.emissions, pruned.emissions)
    torch.testing.assert_close(model(batch, prune=False).emissions, unpruned.emissions)

    # Unpruned equals pruning with a threshold no token reaches (all messages kept): the same
    # weights in a model built with that threshold (a setting changes before the build only).
    kept_model = _model(sample_vocabs, threshold=1e9).eval()
    kept_model.load_state_dict(model.state_dict())
    kept = kept_model(batch)
    assert not kept.drop.any()
    torch.testing.assert_close(kept.emissions, unpruned.emissions)
    # The forward argument overrides the attribute.
    model.pruning_active = False
    torch.testing.assert_close(model(batch, prune=True).emissions, pruned.emissions)
    unpruned.loss.backward()
    assert all(p.grad is not None for p in model.document_graph.uncertainty.parameters())


def test_reset_parameters_redraws_every_parameter(sample_vocabs):
    from docgraph.persistence.model_dir import build_model

    torch.manual_seed(0)
    model = build_model(GCDocConfig(**TINY), sample_vocabs)
    with torch.no_grad():
        for param in model.parameters():
            param.fill_(0.123)
    model.reset_parameters()
    for name, param in model.named_parameters():
        assert not torch.all(param == 0.123), name
