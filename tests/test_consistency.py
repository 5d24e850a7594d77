"""Label consistency in decoding (docgraph/tagging/consistency.py), on hand-made documents."""

import pytest

from docgraph.tagging.consistency import consistent_tagging
from docgraph.tagging.result import Tagging

TOKENS = [["Quenby", "met", "Halvorsen", "Optics", "."],
          ["Later", "Quenby", "left", "Halvorsen", "Optics", "."],
          ["quenby", "and", "QUENBY", "Quenby", "Array"]]


def test_each_name_takes_the_type_with_the_highest_summed_score():
    tagging = Tagging([["B-PER", "O", "B-PER", "I-PER", "O"],
                       ["O", "O", "O", "B-ORG", "I-ORG", "O"],
                       ["O", "O", "O", "B-MISC", "I-MISC"]], [[0.9, 0.6], [0.95], [0.8]])
    out = consistent_tagging(TOKENS, tagging, min_votes=float("inf"))
    assert out.tags[0] == ["B-PER", "O", "B-ORG", "I-ORG", "O"]  # 0.95 ORG beats 0.6 PER
    assert out.tags[1:] == tagging.tags[1:]
    assert out.scores == [[0.9, 0.95], [0.95], [0.8]]  # the relabelled one: its type's mean


def test_untagged_repeats_of_the_same_case_shape_are_tagged_once_the_votes_suffice():
    tagging = Tagging([["B-PER", "O", "O", "O", "O"], ["O"] * 6, ["O"] * 5],
                      [[0.7], [], []])
    assert consistent_tagging(TOKENS, tagging, min_votes=1.0).tags == tagging.tags
    out = consistent_tagging(TOKENS, tagging, min_votes=0.5)
    assert out.tags[1] == ["O", "B-PER", "O", "O", "O", "O"]
    # "quenby" and "QUENBY" have another case shape; "Quenby Array" starts a name too
    assert out.tags[2] == ["O", "O", "O", "B-PER", "O"]
    assert out.scores == [[0.7], [0.7], [0.7]]


def test_a_repeat_next_to_an_entity_is_left_alone():
    tokens = [["Quenby", "spoke", "."], ["Marisol", "Quenby", "left"]]
    tagging = Tagging([["B-PER", "O", "O"], ["B-LOC", "O", "O"]], [[0.9], [0.4]])
    out = consistent_tagging(tokens, tagging, min_votes=0.5)
    assert out.tags[1] == ["B-LOC", "O", "O"]


def test_scores_are_required():
    with pytest.raises(ValueError, match="scores"):
        consistent_tagging(TOKENS, Tagging([["O"] * 5, ["O"] * 6, ["O"] * 5]))


def test_a_confident_mention_keeps_its_own_type():
    tagging = Tagging([["B-PER", "O", "B-PER", "I-PER", "O"],
                       ["O", "O", "O", "B-ORG", "I-ORG", "O"],
                       ["O", "O", "O", "B-MISC", "I-MISC"]], [[0.9, 0.6], [0.95], [0.8]])
    assert consistent_tagging(TOKENS, tagging, float("inf"), relabel_below=0.6).tags == \
        tagging.tags
    assert consistent_tagging(TOKENS, tagging, float("inf"), relabel_below=0.61).tags[0] == \
        ["B-PER", "O", "B-ORG", "I-ORG", "O"]
