"""Tests of :class:`docgraph.tagger.Tagger`: raw text, token lists, Documents, long documents."""

from dataclasses import replace

import pytest

from docgraph.data.document import make_document
from docgraph.tagger import Entity, Tagger, as_document


@pytest.fixture(scope="module")
def tagger(model_dir):
    return Tagger.load(model_dir)


def _check_entities(entities, docs, types):
    for e in entities:
        assert isinstance(e, Entity)
        doc = docs[e.doc] if isinstance(docs, dict) else docs
        sentence = doc.sentences[e.sentence]
        assert 0 <= e.start < e.end <= len(sentence)
        assert e.text == " ".join(sentence.tokens[e.start:e.end])
        assert e.type in types
        assert set(e.to_dict()) == {"doc", "sentence", "start", "end", "type", "text"}


def test_entity_types(tagger):
    assert tagger.entity_types == ["LOC", "MISC", "ORG", "PER"]


def test_predict_raw_text(tagger, sample_splits):
    texts = [" ".join(" ".join(s.tokens) for s in doc.sentences)
             for doc in sample_splits["test"][:2]]
    result = tagger.predict(texts)
    assert len(result) == 2
    assert sum(len(r) for r in result) > 0
    for i, (text, entities) in enumerate(zip(texts, result)):
        doc = as_document(text, f"doc-{i}")
        assert all(e.doc == f"doc-{i}" for e in entities)
        _check_entities(entities, doc, tagger.entity_types)
    assert tagger.predict(texts) == result  # deterministic


def test_token_lists_and_documents(tagger, sample_splits):
    doc = sample_splits["test"][0]
    tokens = [list(s.tokens) for s in doc.sentences]
    from_tokens = tagger.predict([tokens])[0]
    from_doc = tagger.predict([doc])[0]
    assert [(e.sentence, e.start, e.end, e.type) for e in from_tokens] == \
        [(e.sentence, e.start, e.end, e.type) for e in from_doc]
    assert all(e.doc == doc.doc_id for e in from_doc)
    _check_entities(from_doc, doc, tagger.entity_types)
    # gold tags of a Document are ignored, whatever they are
    relabelled = make_document("x", [(s.tokens, ["B-FOO"] + ["O"] * (len(s) - 1))
                                      for s in doc.sentences])
    assert [(e.start, e.end) for e in tagger.predict([relabelled])[0]] == \
        [(e.start, e.end) for e in from_doc]


def test_documents_with_the_same_id_stay_apart(tagger, sample_splits):
    a, b = sample_splits["test"][0], replace(sample_splits["test"][1],
                                             doc_id=sample_splits["test"][0].doc_id)
    docs, tags = tagger.tag([a, b])
    assert [len(t) for t in tags] == [len(a.sentences), len(b.sentences)]
    for doc, doc_tags in zip(docs, tags):
        assert [len(t) for t in doc_tags] == [len(s) for s in doc.sentences]


def test_long_document_is_chunked_and_rejoined(tagger, sample_splits):
    doc = sample_splits["test"][0]
    assert doc.num_tokens > 60
    chunked = Tagger(tagger.model, tagger.vocabs,
                     replace(tagger.config, graph=replace(tagger.config.graph,
                                                          max_doc_tokens=40)))
    docs, tags = chunked.tag([doc, "Tavistre beat Brennock ."])
    assert docs[0] is doc
    assert [len(t) for t in tags[0]] == [len(s) for s in doc.sentences]
    assert len(tags[1]) == 1 and len(tags[1][0]) == 4
    entities = chunked.predict([doc])[0]
    _check_entities(entities, doc, tagger.entity_types)
    sentences = sorted({e.sentence for e in entities})
    assert sentences and sentences[-1] < len(doc.sentences)
    assert any(sum(len(s) for s in doc.sentences[:e.sentence]) > 40
               for e in entities), "entities after the first chunk keep their sentence index"


def test_tokenized_text(tagger):
    docs, tags = tagger.tag(["Tavistre beat Brennock .\nVeldania won ."], tokenized=True)
    assert [list(s.tokens) for s in docs[0].sentences] == [
        ["Tavistre", "beat", "Brennock", "."], ["Veldania", "won", "."]]
    assert [len(t) for t in tags[0]] == [4, 3]
