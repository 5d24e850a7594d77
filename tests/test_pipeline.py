"""The one tagging pipeline (docgraph/tagging/pipeline.py): its rules worked by hand, its
stream, and the Tagger methods built on it (chunks, tag_stream, inspect, pipe,
save)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import reference_tags

from docgraph.config import ExperimentConfig
from docgraph.config.tagging import DEFAULT_MAX_DOC_TOKENS
from docgraph.data.chunking import piece_bounds
from docgraph.data.document import make_document
from docgraph.tagging.pipeline import (
    BATCH_TOKENS,
    GROUP_TOKENS,
    batch_tokens,
    chunk_tokens,
    stream_tags,
)
from docgraph.tagging.tagger import Tagger


@pytest.fixture(scope="module")
def tagger(model_dir):
    return Tagger.load(model_dir)


def _doc(doc_id, *lengths):
    return make_document(doc_id, [([f"w{i}-{k}" for k in range(n)], ["O"] * n)
                                  for i, n in enumerate(lengths)])


def test_chunk_length_and_batch_rules():
    config = ExperimentConfig()
    assert config.graph.max_doc_tokens is None
    assert chunk_tokens(config) == DEFAULT_MAX_DOC_TOKENS
    assert chunk_tokens(config, 0) is None and chunk_tokens(config, 7) == 7
    trained = replace(config, graph=replace(config.graph, max_doc_tokens=700))
    assert chunk_tokens(trained) == 700
    with pytest.raises(ValueError, match="max_doc_tokens must be >= 0"):
        chunk_tokens(config, -1)
    assert batch_tokens(config) == min(config.train.eval_batch_tokens, BATCH_TOKENS)
    baseline = replace(config, model=replace(config.model, graph=False, cross_sentence=False))
    assert batch_tokens(baseline) == config.train.eval_batch_tokens


def test_an_over_long_sentence_is_tagged_as_its_pieces(tagger, sample_splits):
    sentence = [t for s in sample_splits["test"][0].sentences for t in s.tokens][:25]
    short = Tagger(tagger.model, tagger.vocabs, tagger.config, max_doc_tokens=10)
    _, tags = short.tag([[sentence]])
    pieces = make_document("p", [(sentence[a:b], ["O"] * (b - a))
                                 for a, b in piece_bounds(25, 10)])
    expected = [t for chunk in short.chunks([pieces]) for s in
                short.tag([chunk])[1][0] for t in s]
    assert [len(s) for s in tags[0]] == [25]
    assert tags[0][0] == expected


def test_tag_stream_reads_lazily_and_tags_as_tag(tagger, sample_splits):
    docs = sample_splits["test"]
    many = docs * (2 + GROUP_TOKENS // sum(d.num_tokens for d in docs))  # over one group
    pulled = []

    def documents():
        for doc in many:
            pulled.append(doc)
            yield doc

    stream = tagger.tag_stream(documents(), processes=1)
    first_doc, first_tags = next(stream)
    assert first_doc is docs[0] and len(pulled) < len(many)
    stream.close()
    assert first_tags == tagger.tag(docs[:1])[1][0]
    assert [t for _, t in tagger.tag_stream(docs)] == tagger.tag(docs)[1] == \
        reference_tags(docs, tagger.path)


def test_stream_refuses_processes_without_a_model_directory(tagger):
    plain = Tagger(tagger.model, tagger.vocabs, tagger.config)
    with pytest.raises(ValueError, match="processes > 1 needs a tagger loaded"):
        list(stream_tags([_doc("a", 3)], lambda d: d, plain, processes=2))
    with pytest.raises(ValueError, match="processes must be >= 0"):
        list(stream_tags([_doc("a", 3)], lambda d: d, tagger, processes=-1))


def test_inspect_describes_the_model_and_keeps_gold_tags_on_request(tagger, sample_splits):
    doc = sample_splits["dev"][0]
    plain, = tagger.inspect([" ".join(doc.tokens)])
    assert plain.graph["has_graph"] is True and plain.graph["threshold"] == tagger.threshold
    assert tagger.threshold == tagger.config.model.threshold
    assert all("gold_tag" not in attrs for _, attrs in plain.nodes(data=True))
    gold, = tagger.inspect([doc], gold=True)
    assert [attrs["gold_tag"] for _, attrs in gold.nodes(data=True)] == doc.tags
    assert [attrs["pred_tag"] for _, attrs in gold.nodes(data=True)] == \
        [t for s in tagger.tag([doc])[1][0] for t in s]
    none, = tagger.inspect([doc], gold=False)
    assert all("gold_tag" not in attrs for _, attrs in none.nodes(data=True))


def test_pipe_inspect_gives_the_tags_of_tag(tagger, sample_splits):
    doc = sample_splits["test"][1]
    pieces = [list(s.tokens) for s in doc.sentences if len(s)]
    found, = tagger.pipe([pieces], inspect=True)
    assert found.tags == tagger.tag([pieces])[1][0]
    n = sum(map(len, pieces))
    assert sum(len(s.uncertainty) for s in found.sentences) == n
    assert sum(len(s.pruned) for s in found.sentences) == n
    assert found.edges and all(0 <= j < len(pieces[s]) and 0 <= i < len(pieces[t])
                               for (s, j), (t, i), _ in ((e.source, e.target, e.weight)
                                                         for e in found.edges))


def test_save_round_trip_refusal_and_threshold(tagger, sample_splits, tmp_path):
    docs = sample_splits["test"][:3]
    saved = tagger.save(tmp_path / "copy")
    assert Tagger.load(saved).tag(docs)[1] == tagger.tag(docs)[1]
    with pytest.raises(FileExistsError, match="exists and is not empty"):
        tagger.save(saved)
    assert [p.name for p in tmp_path.iterdir()] == ["copy"]  # no staging folder left
    pruning = Tagger.load(tagger.path, threshold=0.0)
    pruning.save(saved, overwrite=True)
    assert json.loads((saved / "config.json").read_text())["model"]["threshold"] == 0.0
    assert Tagger.load(saved).tag(docs)[1] == pruning.tag(docs)[1]
    plain = Tagger(tagger.model, tagger.vocabs, tagger.config)
    with pytest.raises(ValueError, match="needs a tagger loaded from a model directory"):
        plain.save(tmp_path / "other")


def test_tagging_caps_both_onednn_caches_unless_the_environment_sets_them(monkeypatch):
    import os

    from docgraph.tagging.pipeline import IDEEP_CACHE, ONEDNN_CACHE, bound_onednn_caches

    monkeypatch.delenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", raising=False)
    monkeypatch.setenv("LRU_CACHE_CAPACITY", "8")
    bound_onednn_caches()
    assert os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] == ONEDNN_CACHE
    assert os.environ["LRU_CACHE_CAPACITY"] == "8"  # the user's own setting stays
    monkeypatch.delenv("LRU_CACHE_CAPACITY")
    bound_onednn_caches()
    assert os.environ["LRU_CACHE_CAPACITY"] == IDEEP_CACHE
