"""Tests of :mod:`docgraph.data.chunking`: long documents cut into chunks of whole sentences."""

from __future__ import annotations

import itertools
import random

import pytest

from docgraph.data.chunking import (
    GreedyPacker,
    make_chunk,
    pack_greedy,
    pack_sentences,
    piece_bounds,
    split_long_documents,
)
from docgraph.data.document import make_document
from docgraph.tagging.chunks import input_chunks


def _doc(doc_id, lengths, scheme="iob2"):
    return make_document(doc_id, [([f"{doc_id}-{s}-{t}" for t in range(n)], ["O"] * n)
                                  for s, n in enumerate(lengths)], scheme)


def test_pack_sentences_groups_consecutive_sentences_within_the_budget():
    sentences = _doc("d", [3, 1, 2, 5, 1]).sentences
    groups = pack_sentences(sentences, 4)
    assert [[len(s) for s in g] for g in groups] == [[3, 1], [2], [5], [1]]
    assert [s for g in groups for s in g] == list(sentences)


def test_pack_sentences_of_single_token_budget_is_one_sentence_a_group():
    sentences = _doc("d", [1, 1, 2]).sentences
    assert [[len(s) for s in g] for g in pack_sentences(sentences, 1)] == [[1], [1], [2]]


def test_pack_sentences_of_no_sentences_is_one_empty_group():
    assert pack_sentences([], 5) == [[]]


def test_make_chunk_renames_and_renumbers_its_sentences():
    doc = _doc("long", [2, 3, 1], scheme="bioes")
    chunk = make_chunk(doc, 3, doc.sentences[1:])
    assert chunk.doc_id == "long#3" and chunk.source_scheme == "bioes"
    assert [(s.doc_id, s.index) for s in chunk.sentences] == [("long#3", 0), ("long#3", 1)]
    assert chunk.tokens == [*doc.sentences[1].tokens, *doc.sentences[2].tokens]
    assert chunk.tags == doc.tags[2:]


def test_split_long_documents():
    doc = make_document(
        "long",
        [
            (["Paris"] * 3, ["B-LOC", "I-LOC", "I-LOC"]),
            (["x"], ["O"]),
            (["paris", "y"], ["B-LOC", "O"]),
            (["Paris"] * 5, ["O"] * 5),
        ],
    )
    short = make_document("short", [(["a"], ["O"])])
    chunks = split_long_documents([doc, short], 4)
    assert [c.doc_id for c in chunks] == ["long#0", "long#1", "long#2", "short"]
    assert [[len(s) for s in c.sentences] for c in chunks] == [[3, 1], [2], [5], [1]]
    assert [s.index for s in chunks[0].sentences] == [0, 1]
    assert [t for c in chunks[:3] for t in c.tokens] == doc.tokens
    assert split_long_documents([doc], None) == [doc]


def test_documents_that_fit_are_returned_as_they_are():
    doc = _doc("d", [2, 2])
    assert split_long_documents([doc], 4)[0] is doc  # exactly the budget
    assert split_long_documents([doc], 0) == [doc]  # 0 disables splitting
    assert split_long_documents([], 3) == []


@pytest.mark.parametrize("seed", range(5))
def test_chunks_keep_every_token_in_order_within_the_budget(seed):
    rng = random.Random(seed)
    docs = [_doc(f"d{k}", [rng.randint(1, 9) for _ in range(rng.randint(1, 8))])
            for k in range(4)]
    budget = rng.randint(1, 12)
    out = split_long_documents(docs, budget)
    for doc in docs:
        pieces = [c for c in out
                  if c.doc_id == doc.doc_id or c.doc_id.startswith(f"{doc.doc_id}#")]
        assert [t for c in pieces for t in c.tokens] == doc.tokens
        if doc.num_tokens > budget:
            assert [c.doc_id for c in pieces] == [f"{doc.doc_id}#{k}" for k in range(len(pieces))]
            # within the budget, unless one sentence alone is longer
            assert all(c.num_tokens <= budget or len(c) == 1 for c in pieces)
            # greedy: the next chunk's first sentence would not have fitted
            for a, b in itertools.pairwise(pieces):
                assert a.num_tokens + len(b.sentences[0]) > budget


def test_greedy_packing_by_hand():
    assert list(pack_greedy([3, 2, 4, 1, 5], 5, size=int)) == [[3, 2], [4, 1], [5]]
    assert list(pack_greedy([6, 1], 5, size=int)) == [[6], [1]]  # too long: alone
    assert list(pack_greedy([], 5)) == []


def test_the_packer_closes_a_group_on_the_item_that_would_overflow_it():
    packer: GreedyPacker[str] = GreedyPacker(5)
    assert [packer.push(w, n) for w, n in [("a", 3), ("b", 2), ("c", 4), ("d", 9), ("e", 1)]] \
        == [None, None, ["a", "b"], ["c"], ["d"]]
    assert packer.flush() == ["e"]
    assert packer.flush() is None  # empty afterwards
    assert packer.push("f", 1) is None and packer.flush() == ["f"]
    assert repr(packer) == "GreedyPacker(max_tokens=5)"


def test_pieces_of_a_long_sentence():
    assert piece_bounds(5, 2) == [(0, 2), (2, 4), (4, 5)]
    assert piece_bounds(4, 2) == [(0, 2), (2, 4)]
    assert piece_bounds(5, None) == [(0, 5)] and piece_bounds(5, 0) == [(0, 5)]
    chunks = input_chunks([list("abcde"), list("fg")], "d", False, 2)  # the core's route
    assert [["".join(p.tokens) for p in c.pieces] for c in chunks] == \
        [["ab"], ["cd"], ["e"], ["fg"]]


def test_documents_cut_for_tagging_keep_tokens_and_tags_in_order():
    doc = make_document("d", [(list("ab"), ["B-PER", "I-PER"]),
                              (list("cdefghi"), ["O", "B-LOC", "I-LOC", "I-LOC", "O", "O", "O"]),
                              (list("j"), ["O"])])
    chunks = split_long_documents([doc], 3, cut_sentences=True)
    # pieces [ab] [cde] [fgh] [i] [j], packed greedily into 3 tokens
    assert [[s.tokens for s in c.sentences] for c in chunks] == [
        [("a", "b")], [("c", "d", "e")], [("f", "g", "h")], [("i",), ("j",)]]
    assert [t for c in chunks for t in c.tags] == doc.tags
    assert [c.doc_id for c in chunks] == ["d#0", "d#1", "d#2", "d#3"]
    # training keeps the long sentence whole, a chunk of its own
    assert [c.num_tokens for c in split_long_documents([doc], 3)] == [2, 7, 1]
    assert split_long_documents([doc], 10, cut_sentences=True) == [doc]
