"""Tests of :mod:`docgraph.tagging.result`: the typed result of tagging."""

import pytest

from docgraph.tagging.result import Entity, EntitySpan, TaggedDocument, TaggedSentence, Tagging


def test_entities_in_reading_order_with_their_scores():
    tagging = Tagging([["B-PER", "I-PER", "O", "B-LOC"], ["O"], ["B-ORG"]],
                      [[0.9, 0.4], [], [0.7]])
    assert list(tagging.entities()) == [EntitySpan(0, "PER", 0, 2, 0.9),
                                        EntitySpan(0, "LOC", 3, 4, 0.4),
                                        EntitySpan(2, "ORG", 0, 1, 0.7)]
    unscored = Tagging(tagging.tags)
    assert [e.score for e in unscored.entities()] == [None, None, None]


@pytest.mark.parametrize("scores, match", [([[0.9]], "1 score lists for 2 sentences"),
                                           ([[0.9], [0.1]], "sentence 1: 1 scores for 0")])
def test_scores_must_match_the_entities(scores, match):
    with pytest.raises(ValueError, match=match):
        Tagging([["B-PER"], ["O"]], scores)


def test_above_drops_low_scored_entities_and_their_tags():
    tagging = Tagging([["B-PER", "I-PER", "O", "B-LOC"]], [[0.9, 0.4]])
    kept = tagging.above(0.5)
    assert kept.tags == [["B-PER", "I-PER", "O", "O"]]
    assert kept.scores == [[0.9]]
    assert tagging.above(0.4).tags == tagging.tags  # at the threshold: kept
    assert tagging.above(0.95).tags == [["O"] * 4]
    with pytest.raises(ValueError, match="needs a tagging with scores"):
        Tagging([["B-PER"]]).above(0.5)


def test_entity_record_keys_and_order():
    entity = Entity("d", 0, 1, 3, "PER", "Jony Ive", 5, 13)
    assert list(entity.to_dict()) == ["doc", "sentence", "start", "end", "type", "text",
                                      "start_char", "end_char"]
    scored = Entity("d", 0, 1, 3, "PER", "Jony Ive", 5, 13, 0.8)
    assert scored.to_dict()["score"] == 0.8
    assert list(scored.to_dict())[-1] == "score"


def test_tagged_document_tags():
    doc = TaggedDocument("d", "A b", (TaggedSentence(0, ("A", "b"), ((0, 1), (2, 3)),
                                                     ("B-X", "O")),))
    assert doc.tags == [["B-X", "O"]]
    assert doc.entities == ()
