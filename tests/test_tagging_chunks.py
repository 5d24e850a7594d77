"""The one chunking route of tagging and the way back (docgraph/tagging/chunks.py), worked by
hand without a model."""

from docgraph.data.document import make_document
from docgraph.tagging.chunks import (
    ChunkInspection,
    chunk_documents,
    input_chunks,
    tagged_documents,
)
from docgraph.tagging.result import Tagging

TEXT = "Ana Ruiz met Bo in Lyon. Then she left.\nAna Ruiz won."


def test_raw_text_keeps_its_spans_and_packs_pieces_under_the_limit():
    chunks = list(input_chunks(TEXT, "d", False, 4))
    pieces = [p for c in chunks for p in c.pieces]
    assert all(c.num_tokens <= 4 for c in chunks) and chunks[0].first
    assert not any(c.first for c in chunks[1:])
    for p in pieces:  # every token is where its span says
        assert [TEXT[a:b] for a, b in p.spans] == list(p.tokens)
    # the first sentence (7 tokens) in pieces of 4 and 3, numbered as its sentence
    first = [p for p in pieces if p.sentence == 0]
    assert [(p.first, len(p), p.last) for p in first] == [(0, 4, False), (4, 3, True)]
    assert [t for p in pieces for t in p.tokens] == TEXT.replace(".", " .").split()


def test_token_lists_documents_and_empty_inputs():
    lists = list(input_chunks([["a", "b"], [], ["c"]], "x", False, 10))
    assert len(lists) == 1 and [p.sentence for p in lists[0].pieces] == [0, 2]
    assert lists[0].text is None and lists[0].pieces[0].spans is None
    empty, = input_chunks("   ", "e", False, 10)
    assert empty.pieces == () and empty.first and empty.doc == "e"
    doc = make_document("own-id", [(["a"], ["O"])])
    assert next(input_chunks(doc, "ignored", False, 10)).doc == "own-id"
    chunk = lists[0]
    assert list(input_chunks(chunk, "ignored", False, 1)) == [chunk]  # an adapter's chunk


def test_labelled_documents_keep_their_gold_tags_in_chunks():
    doc = make_document("d", [(list("ab"), ["B-PER", "I-PER"]), ([], []),
                              (list("cdefg"), ["O", "B-LOC", "I-LOC", "I-LOC", "O"])])
    whole, = chunk_documents(doc, 10)
    assert whole.doc_id == "d" and len(whole.sentences) == 2  # the empty sentence left out
    chunks = chunk_documents(doc, 3)
    assert [c.doc_id for c in chunks] == ["d#0", "d#1", "d#2"]
    assert [[list(s.tokens) for s in c.sentences] for c in chunks] == \
        [[["a", "b"]], [["c", "d", "e"]], [["f", "g"]]]
    assert [t for c in chunks for s in c.sentences for t in s.tags] == \
        ["B-PER", "I-PER", "O", "B-LOC", "I-LOC", "I-LOC", "O"]


def test_tagged_chunks_join_back_into_their_document():
    """Tags of pieces become the sentence's tags, entities get the document's sentence and
    token numbers and their text, inspection edges their (sentence, token) places."""
    chunks = list(input_chunks(TEXT, "d", False, 4))
    tags = {0: ["B-PER", "I-PER", "O", "B-PER", "O", "B-LOC", "O"], 1: ["O"] * 4,
            2: ["B-PER", "I-PER", "O", "O"]}
    tagged = []
    for chunk in chunks:
        piece_tags = [tags[p.sentence][p.first:p.first + len(p)] for p in chunk.pieces]
        n = chunk.num_tokens
        inspection = ChunkInspection([0.5] * n, [False] * n, [(0, n - 1, 0.25)])
        tagged.append((chunk, Tagging(piece_tags), inspection))
    doc, = tagged_documents(tagged)
    assert doc.doc == "d" and doc.text == TEXT
    assert [list(s.tags) for s in doc.sentences] == [tags[0], tags[1], tags[2]]
    assert [(e.sentence, e.start, e.end, e.type, e.text) for e in doc.entities] == \
        [(0, 0, 2, "PER", "Ana Ruiz"), (0, 3, 4, "PER", "Bo"), (0, 5, 6, "LOC", "Lyon"),
         (2, 0, 2, "PER", "Ana Ruiz")]
    assert all(TEXT[e.start_char:e.end_char] == e.text for e in doc.entities)
    assert all(len(s.uncertainty) == len(s.tokens) for s in doc.sentences)
    # the first chunk holds tokens 0-3 of sentence 0: its edge runs from (0, 0) to (0, 3)
    assert doc.edges[0].source == (0, 0) and doc.edges[0].target == (0, 3)
    assert len(doc.edges) == len(chunks)


def test_an_entity_found_across_a_line_break_is_cut_there():
    """No entity spans a line break of raw text (``LONDON\\nBANK`` of two headlines run
    together): the model's entity is cut at each break, each part with its type and score;
    token input, without text, keeps it whole."""
    from pathlib import Path

    from docgraph.data.tokenize import token_spans
    from docgraph.tagging.chunks import Chunk, Piece, chunk_entities

    text = "Rates in LONDON\r\nBANK OF\nENGLAND holds"
    spans = tuple(token_spans(text))
    tokens = tuple(text[a:b] for a, b in spans)
    tags = [["O", "O", "B-ORG", "I-ORG", "I-ORG", "I-ORG", "O"]]
    piece = Piece(0, 0, tokens, spans)
    found = list(chunk_entities(Chunk("d", (piece,), text, True, Path("x"), 1.0),
                                Tagging(tags, [[0.25]])))
    assert [(e.text, e.start, e.end, e.type, e.score, text[e.start_char:e.end_char])
            for e in found] == [("LONDON", 2, 3, "ORG", 0.25, "LONDON"),
                                ("BANK OF", 3, 5, "ORG", 0.25, "BANK OF"),
                                ("ENGLAND", 5, 6, "ORG", 0.25, "ENGLAND")]
    whole = list(chunk_entities(Chunk("d", (Piece(0, 0, tokens, None),), None, True,
                                      Path("x"), 1.0), Tagging(tags, [[0.25]])))
    assert [(e.text, e.start, e.end) for e in whole] == [("LONDON BANK OF ENGLAND", 2, 6)]
