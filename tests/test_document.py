"""Tests of :mod:`docgraph.data.document`: sentences and documents, and their numbering."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from docgraph.data.document import Document, Sentence, make_document


def test_a_sentence_has_one_tag_per_token():
    sent = Sentence(("EU", "rejects"), ("B-ORG", "O"), "d", 2)
    assert len(sent) == 2
    with pytest.raises(ValueError) as info:
        Sentence(("EU", "rejects", "it"), ("B-ORG", "O"), "doc-7", 4)
    assert str(info.value) == "sentence 4 of document 'doc-7' has 3 tokens but 2 tags"


def test_make_document_numbers_its_sentences():
    doc = make_document("d", [(["EU", "rejects"], ["B-ORG", "O"]), (["Paris"], ["B-LOC"])])
    assert [(s.doc_id, s.index) for s in doc.sentences] == [("d", 0), ("d", 1)]
    assert doc.sentences[0] == Sentence(("EU", "rejects"), ("B-ORG", "O"), "d", 0)
    assert doc.source_scheme == "iob2"
    assert make_document("d", [], "bioes").source_scheme == "bioes"


def test_a_document_concatenates_its_sentences():
    doc = make_document("d", [(["a", "b"], ["B-X", "I-X"]), ([], []), (["c"], ["O"])])
    assert len(doc) == 3 and doc.num_tokens == 3
    assert doc.tokens == ["a", "b", "c"]
    assert doc.tags == ["B-X", "I-X", "O"]


def test_an_empty_document():
    doc = Document("empty", ())
    assert (len(doc), doc.num_tokens, doc.tokens, doc.tags) == (0, 0, [], [])


def test_make_document_names_the_sentence_whose_tags_do_not_fit():
    with pytest.raises(ValueError, match="^sentence 1 of document 'x' has 1 tokens but 2 tags$"):
        make_document("x", [(["a"], ["O"]), (["b"], ["O", "O"])])


def test_sentences_and_documents_are_frozen_values():
    doc = make_document("d", [(["a"], ["O"])])
    with pytest.raises(FrozenInstanceError):
        doc.doc_id = "e"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        doc.sentences[0].tags = ("B-X",)  # type: ignore[misc]
    assert doc == make_document("d", [("a", "O")])  # tuples of tokens, whatever was passed
    assert hash(doc) == hash(make_document("d", [(["a"], ["O"])]))
