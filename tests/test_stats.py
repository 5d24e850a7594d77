"""Tests of :mod:`docgraph.data.stats`: counts of documents, sentences, tokens and entities,
and their text form."""

from __future__ import annotations

import pytest

from docgraph.data.document import make_document
from docgraph.data.stats import GRAPH_KEYS, corpus_statistics, format_statistics, source_document_id


@pytest.mark.parametrize(("doc_id", "source"), [
    ("bc/cctv/00/cctv_0001/part-002", "bc/cctv/00/cctv_0001"),
    ("bc/cctv/00/cctv_0001/part-0", "bc/cctv/00/cctv_0001"),
    ("bc/cctv/00/cctv_0001", "bc/cctv/00/cctv_0001"),
    ("a/part-001/b", "a/part-001/b"),  # only a trailing part
    ("a/part-", "a/part-"),
    ("train-17", "train-17"),
    ("long#2", "long#2"),
])
def test_source_document_id_strips_a_trailing_part(doc_id, source):
    assert source_document_id(doc_id) == source


def test_corpus_statistics_by_hand():
    docs = [
        make_document("nw/a/part-000", [(["EU", "rejects", "German", "call"],
                                         ["B-ORG", "O", "B-MISC", "O"]),
                                        (["Peter", "Blackburn"], ["B-PER", "I-PER"])]),
        make_document("nw/a/part-001", [(["New", "York", "and", "Paris"],
                                         ["B-LOC", "I-LOC", "O", "B-LOC"])]),
        make_document("nw/b", [(["EU", "EU"], ["B-ORG", "B-ORG"])]),
    ]
    stats = corpus_statistics(iter(docs))  # any iterable, read once
    assert stats == {"documents": 3, "sentences": 4, "tokens": 12,
                     "entities": {"LOC": 2, "MISC": 1, "ORG": 3, "PER": 1},
                     "parts": 3, "source_documents": 2}
    assert list(stats["entities"]) == ["LOC", "MISC", "ORG", "PER"]  # sorted by type


def test_corpus_statistics_of_nothing():
    assert corpus_statistics([]) == {"documents": 0, "sentences": 0, "tokens": 0,
                                     "entities": {}, "parts": 0, "source_documents": 0}


def test_format_statistics_one_quantity_a_line():
    stats = {"documents": 1234, "source_documents": 2, "sentences": 5, "tokens": 1234567,
             "entities": {"LOC": 3, "PER": 1000}, "recurrent_tokens": 10, "edges_all": 20,
             "edges_sampled": 15}
    assert format_statistics("dev", stats).splitlines() == [
        "[dev]",
        "  documents/parts        1,234",
        "  source documents           2",
        "  sentences                  5",
        "  tokens             1,234,567",
        "  entities               1,003",
        "    LOC                      3",
        "    PER                  1,000",
        "  recurrent_tokens          10",
        "  edges_all                 20",
        "  edges_sampled             15",
    ]
    assert GRAPH_KEYS == ("recurrent_tokens", "edges_all", "edges_sampled")


def test_format_statistics_needs_the_graph_sizes():
    stats = corpus_statistics([make_document("d", [(["a"], ["O"])])])
    with pytest.raises(KeyError, match="recurrent_tokens"):
        format_statistics("train", stats)
    text = format_statistics("train", {**stats, **dict.fromkeys(GRAPH_KEYS, 0)})
    assert "  entities                   0" in text.splitlines()
