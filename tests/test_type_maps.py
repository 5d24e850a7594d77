"""Type maps between corpora: OntoNotes 5.0 to CoNLL-2003."""

from __future__ import annotations

import pytest

from docgraph.data.document import make_document
from docgraph.data.type_maps import ONTONOTES_TO_CONLL, genre, map_document, map_tags
from docgraph.metrics import extract_entities

ONTONOTES_TYPES = {"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT",
                   "WORK_OF_ART", "LAW", "LANGUAGE", "DATE", "TIME", "PERCENT", "MONEY",
                   "QUANTITY", "ORDINAL", "CARDINAL"}


def test_the_map_covers_ontonotes_and_lands_in_conll():
    assert set(ONTONOTES_TO_CONLL) == ONTONOTES_TYPES
    assert set(ONTONOTES_TO_CONLL.values()) == {"PER", "LOC", "ORG", "MISC", None}
    assert [k for k, v in ONTONOTES_TO_CONLL.items() if v == "LOC"] == ["GPE", "LOC", "FAC"]


def test_map_tags_by_hand():
    tags = ["B-PERSON", "I-PERSON", "O", "B-DATE", "I-DATE", "B-NORP", "B-GPE", "I-GPE"]
    assert map_tags(tags, ONTONOTES_TO_CONLL) == [
        "B-PER", "I-PER", "O", "O", "O", "B-MISC", "B-LOC", "I-LOC"]


def test_adjacent_entities_mapped_to_one_type_stay_two():
    mapped = map_tags(["B-GPE", "I-GPE", "B-LOC"], ONTONOTES_TO_CONLL)
    assert mapped == ["B-LOC", "I-LOC", "B-LOC"]
    assert extract_entities([mapped]) == {(0, "LOC", 0, 1), (0, "LOC", 2, 2)}


def test_unknown_type_is_named():
    with pytest.raises(ValueError, match="type 'XYZ' is not in the type map"):
        map_tags(["B-XYZ"], ONTONOTES_TO_CONLL)


def test_map_document_keeps_tokens_and_ids():
    doc = make_document("nw/wsj/00/wsj_0001/part-000",
                        [(["Pierre", "Vinken", ",", "61"], ["B-PERSON", "I-PERSON", "O",
                                                            "B-CARDINAL"])])
    mapped = map_document(doc, ONTONOTES_TO_CONLL)
    assert mapped.tokens == doc.tokens and mapped.doc_id == doc.doc_id
    assert mapped.tags == ["B-PER", "I-PER", "O", "O"]
    assert genre(doc.doc_id) == "nw"
