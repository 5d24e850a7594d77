"""The text and spans of the peer benchmark (docgraph_dev/peer_speed.py): gold entities are
the right characters of the text, paragraphs give their offsets, exact-span scores by hand."""

from __future__ import annotations

from docgraph_dev.peer_speed import paragraphs, scores, split_text


def test_gold_spans_are_the_entities_text(sample_splits):
    from docgraph.data.tags import spans

    documents = sample_splits["dev"][:5]
    text, gold = split_text(documents)
    expected = sorted((" ".join(s.tokens[a:b]), t) for d in documents for s in d.sentences
                      for t, a, b in spans(s.tags))
    assert sorted((text[a:b], t) for a, b, t in gold) == expected
    assert len(paragraphs(text)) == len(documents)
    for offset, part in paragraphs(text):
        assert text[offset:offset + len(part)] == part


def test_scores_by_hand():
    gold = {(0, 4, "PERSON"), (10, 15, "GPE")}
    predicted = {(0, 4, "PERSON"), (10, 14, "GPE"), (20, 22, "ORG")}
    result = scores(gold, predicted)
    assert result["correct"] == 1
    assert abs(result["precision"] - 100 / 3) < 1e-9 and result["recall"] == 50.0
    assert abs(result["f1"] - 40.0) < 1e-9
    assert scores(set(), set())["f1"] == 0.0
