"""Tagging and scoring with a trained model (docgraph/tagging/inference.py) and
``Tagger.evaluate``, which ``evaluate.py`` runs."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import torch
from conftest import half_pruning_model, run_script
from torch_geometric.data import Batch

from docgraph.data.document import make_document
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.graph.splits import PreparedSplit, prepare_split
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model, load_model_dir
from docgraph.runtime.integrity import write_sealed_json
from docgraph.runtime.processes import min_tagging_tokens, tagging_processes
from docgraph.tagging.inference import (
    Evaluation,
    GraphInspection,
    inspect_graphs,
    interleaved_shard,
    merge_shards,
    predict_graphs,
    score_predictions,
    split_consistency,
)
from docgraph.tagging.tagger import Tagger


@pytest.fixture(scope="module")
def pruning(sample_splits, sample_vocabs):
    """Graphs of the sample's dev split and a small untrained GCDoc that prunes about half of
    their tokens (its tags depend on the Monte-Carlo masks)."""
    graphs = documents_to_graphs(sample_splits["dev"], sample_vocabs, GraphConfig(seed=1))
    return half_pruning_model(sample_vocabs, graphs), graphs


def _assert_same(a: list[GraphInspection], b: list[GraphInspection]) -> None:
    """The same tags and pruning; scores equal up to the float noise of other batches."""
    assert [(x.label_ids, x.tags, x.drop) for x in a] == [(x.label_ids, x.tags, x.drop)
                                                           for x in b]
    for x, y in zip(a, b):
        assert x.uncertainty == pytest.approx(y.uncertainty, abs=1e-5)
        assert x.edge_weight == pytest.approx(y.edge_weight, abs=1e-5)


def test_inspection_tags_are_the_predicted_ones_in_any_batch(pruning, sample_vocabs):
    model, graphs = pruning
    for seed in (0, 3):
        tags = predict_graphs(model, graphs, sample_vocabs, seed=seed)
        state = torch.get_rng_state()
        together = inspect_graphs(model, graphs, sample_vocabs, 10 ** 6, seed=seed)
        assert torch.equal(torch.get_rng_state(), state)  # the masks have their own streams
        _assert_same(together, inspect_graphs(model, graphs, sample_vocabs, 1, seed=seed))
        _assert_same(together[::-1],
                     inspect_graphs(model, graphs[::-1], sample_vocabs, 300, seed=seed))
        assert [g.tags for g in together] == tags
    seed0 = inspect_graphs(model, graphs, sample_vocabs, seed=0)
    assert [g.uncertainty for g in seed0] != [g.uncertainty for g in together]  # seed 3's


def test_inspection_is_per_graph_and_aligned(pruning, sample_vocabs):
    model, graphs = pruning
    inspections = inspect_graphs(model, graphs, sample_vocabs, batch_tokens=400)
    assert len(inspections) == len(graphs)
    labels = sample_vocabs.labels.lookup(list(range(len(sample_vocabs.labels))))
    batch = Batch.from_data_list(graphs)
    whole = model.inspect(batch, mc_seed=0)
    node = edge = 0
    for graph, out in zip(graphs, inspections):
        n, m = int(graph.num_nodes), int(graph.edge_index.size(1))
        assert isinstance(out, GraphInspection)
        assert len(out.label_ids) == len(out.uncertainty) == len(out.drop) == n
        assert len(out.edge_weight) == m
        assert [len(s) for s in out.tags] == graph.sent_len.tolist()
        assert all(isinstance(d, bool) for d in out.drop)
        assert out.drop == whole.drop[node:node + n].tolist()
        assert out.edge_weight == pytest.approx(whole.edge_weight[edge:edge + m].tolist())
        assert {labels[i] for i in out.label_ids} <= set(labels)
        node, edge = node + n, edge + m
    assert any(d for out in inspections for d in out.drop)


def test_inspection_of_a_model_without_pruning_or_edge_weights(sample_splits, sample_vocabs):
    graphs = documents_to_graphs(sample_splits["dev"][:2], sample_vocabs, GraphConfig(seed=1))
    torch.manual_seed(0)
    model = build_model(GCDocConfig(hidden=8, char_hidden=4, sent_dim=8, word_dim=8,
                                    char_dim=4, graph=False, cross_sentence=False),
                        sample_vocabs).eval()
    inspections = inspect_graphs(model, graphs, sample_vocabs)
    assert all(out.uncertainty is None and out.drop is None and out.edge_weight is None
               for out in inspections)
    assert [out.tags for out in inspections] == predict_graphs(model, graphs, sample_vocabs)
    assert inspect_graphs(model, [], sample_vocabs) == []


def test_evaluation_is_reproducible_and_leaves_the_rng_alone(model_dir, sample_splits):
    from docgraph.tagging.inference import evaluate

    model, vocabs, config = load_model_dir(model_dir)
    dev = prepare_split(sample_splits["dev"], vocabs, config)
    torch.manual_seed(0)
    state = torch.get_rng_state()
    scores, pred = evaluate(model, dev, vocabs)
    assert torch.equal(torch.get_rng_state(), state)  # MC dropout draws from its own stream
    torch.manual_seed(123)
    again, pred_again = evaluate(model, dev, vocabs)
    assert pred_again == pred and again == scores


def test_shards_deal_and_merge_back():
    shards = [interleaved_shard(7, 3, rank) for rank in range(3)]
    assert shards == [[0, 3, 6], [1, 4], [2, 5]]
    results = [(shard, [f"r{i}" for i in shard]) for shard in shards]
    assert merge_shards(results, 7) == [f"r{i}" for i in range(7)]
    assert interleaved_shard(2, 4, 3) == [] and merge_shards([], 0) == []


def test_evaluation_of_hand_made_predictions():
    docs = [make_document("a", [(["Kestrel", "won", "."], ["B-ORG", "O", "O"]),
                                (["Kestrel", "lost"], ["B-ORG", "O"])])]
    split = PreparedSplit(docs, [])
    predictions = [[["B-ORG", "O", "O"], ["B-PER", "O"]]]
    evaluation = Evaluation.of(split, predictions)
    assert evaluation.scores == score_predictions(split, predictions)
    assert evaluation.scores.f1 == pytest.approx(50.0)
    assert evaluation.consistency == split_consistency(split, predictions)
    assert evaluation.consistency.pred.consistency < 100  # "Kestrel" as ORG and PER
    assert evaluation.documents == docs and evaluation.predictions == predictions


# ---------------------------------------------------------------------------- Tagger.evaluate
@pytest.fixture(scope="module")
def tagger(model_dir):
    return Tagger.load(model_dir)


def test_processes_are_chosen_in_one_place(tagger, sample_splits):
    docs = sample_splits["test"]
    tokens = sum(d.num_tokens for d in docs)
    model = tagger.config.model
    for requested in (0, 1, 2, 3):
        assert tagger.processes_for(docs, requested) == tagging_processes(
            tokens, "cpu", requested, min_tokens=min_tagging_tokens(model.graph,
                                                                    model.cross_sentence))
    assert tagger.processes_for(docs, 0) == 1  # the sample is far too small to share out
    with pytest.raises(ValueError, match="processes must be >= 0"):
        tagger.processes_for(docs, -1)
    unloaded = Tagger(tagger.model, tagger.vocabs, tagger.config)
    assert unloaded.processes_for(docs, 0) == unloaded.processes_for(docs, 1) == 1
    with pytest.raises(ValueError, match="Tagger.load"):
        unloaded.processes_for(docs, 2)
    with pytest.raises(ValueError, match="Tagger.load"):
        unloaded.evaluate(docs, processes=2)


def test_evaluate_equals_evaluate_py(tagger, model_dir, sample_splits, tmp_path):
    """``evaluate.py`` writes what :meth:`Tagger.evaluate` computes, in one process or two."""
    docs = sample_splits["test"]
    one = tagger.evaluate(docs)
    assert tagger.evaluate(docs, processes=2) == one
    assert one.scores.f1 > 0 and len(one.documents) == len(one.predictions) == len(docs)
    assert [d.doc_id for d in one.documents] == [d.doc_id for d in docs]
    unloaded = Tagger(tagger.model, tagger.vocabs, tagger.config)
    assert unloaded.evaluate(docs, processes=0) == one
    # the script in two processes (one process: the same Tagger.evaluate, in its process)
    res = run_script("evaluate", "--model", model_dir, "--split", "test", "--output-dir",
                     tmp_path, "--processes", "2", "--quiet")
    assert res.returncode == 0, res.stderr[-2000:]
    metrics = json.loads((tmp_path / "test_metrics.json").read_text())
    assert metrics == {"test": one.scores.to_dict(), "consistency": one.consistency.to_dict()}


def test_evaluate_takes_the_seed_and_the_chunks(model_dir, sample_splits, tmp_path):
    path = tmp_path / "model"
    shutil.copytree(model_dir, path)
    config = json.loads((path / "config.json").read_text())
    config["graph"]["max_doc_tokens"] = 40  # the sample's documents in chunks
    write_sealed_json(path / "config.json", config)
    tagger = Tagger.load(path)
    docs = sample_splits["dev"]
    evaluation = tagger.evaluate(docs, mc_seed=5)
    assert len(evaluation.documents) > len(docs)
    assert sum(d.num_tokens for d in evaluation.documents) == sum(d.num_tokens for d in docs)
    prepared = prepare_split(docs, tagger.vocabs, tagger.config)
    assert evaluation.predictions == predict_graphs(tagger.model, prepared.graphs,
                                                    tagger.vocabs, seed=5)
    assert tagger.evaluate(docs, processes=2, mc_seed=5) == evaluation


def test_evaluate_shows_its_progress(tagger, sample_splits, caplog):
    from docgraph.runtime.progress import configure

    previous = configure(enabled=True, interval=0, tty=False)  # a line at every update
    try:
        with caplog.at_level("INFO", logger="docgraph"):
            tagger.evaluate(sample_splits["dev"], progress="dev")
            shown = caplog.text
            caplog.clear()
            tagger.evaluate(sample_splits["dev"])
            assert caplog.text == ""
    finally:
        configure(**vars(previous))
    assert re.search(r"^INFO .* tagging dev: ([\d,]+)/\1 tokens \(100%\)", shown, re.M)
