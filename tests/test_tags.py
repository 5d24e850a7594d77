"""Tag scheme detection, validation, span reading and conversions."""

from __future__ import annotations

import itertools

import pytest

from docgraph.data.tags import (
    bioes_to_iob2,
    convert,
    detect_scheme,
    entity_type,
    iob2_to_bioes,
    iob2_to_iob1,
    spans,
    to_iob2,
    validate_tag,
)

ALPHABET = ["O", "B-A", "I-A", "B-B", "I-B"]


def reference_spans(tags: list[str]) -> list[tuple[str, int, int]]:
    """Independent IOB reader: an entity is a maximal run of I- tags of one type, split at B-."""
    out: list[list] = []
    for i, tag in enumerate(tags):
        if tag == "O":
            continue
        prefix, typ = tag.split("-", 1)
        if prefix == "I" and out and out[-1][0] == typ and out[-1][2] == i:
            out[-1][2] = i + 1
        else:
            out.append([typ, i, i + 1])
    return [tuple(s) for s in out]


def all_sequences(max_len: int = 4):
    for n in range(max_len + 1):
        yield from (list(seq) for seq in itertools.product(ALPHABET, repeat=n))


def test_spans_valid_iob2():
    tags = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC"]
    assert spans(tags) == [("PER", 0, 2), ("LOC", 3, 4), ("LOC", 4, 6)]


def test_spans_conlleval_repair():
    assert spans(["O", "I-PER", "I-PER"]) == [("PER", 1, 3)]
    assert spans(["I-PER", "I-LOC"]) == [("PER", 0, 1), ("LOC", 1, 2)]
    assert spans(["B-PER", "I-LOC", "I-LOC"]) == [("PER", 0, 1), ("LOC", 1, 3)]


def test_iob1_b_after_o_is_one_token_entity():
    # CoNLL-2003 train: "the Atlanta Games" tagged O B-MISC O.
    assert spans(["O", "B-MISC", "O"], "iob1") == [("MISC", 1, 2)]
    assert to_iob2(["O", "B-MISC", "O"], "iob1") == ["O", "B-MISC", "O"]


def test_iob1_b_between_same_type():
    tags = ["I-PER", "I-PER", "B-PER", "O", "I-LOC"]
    assert to_iob2(tags, "iob1") == ["B-PER", "I-PER", "B-PER", "O", "B-LOC"]
    assert iob2_to_iob1(to_iob2(tags, "iob1")) == tags


def test_bioes_conversions():
    iob2 = ["B-PER", "I-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC"]
    bioes = ["B-PER", "I-PER", "E-PER", "O", "S-LOC", "B-LOC", "E-LOC"]
    assert iob2_to_bioes(iob2) == bioes
    assert bioes_to_iob2(bioes) == iob2
    assert spans(bioes, "bioes") == spans(iob2)


def test_bioes_repair():
    # E- after O starts an entity; I- after E- starts a new one; B- without E- still ends.
    assert spans(["O", "E-A"], "bioes") == [("A", 1, 2)]
    assert spans(["B-A", "E-A", "I-A", "E-A"], "bioes") == [("A", 0, 2), ("A", 2, 4)]
    assert spans(["B-A", "O", "S-A"], "bioes") == [("A", 0, 1), ("A", 2, 3)]
    assert bioes_to_iob2(["B-A", "I-A"]) == ["B-A", "I-A"]


@pytest.mark.parametrize("seq", list(all_sequences()), ids=" ".join)
def test_exhaustive_round_trips(seq):
    expected = reference_spans(seq)
    assert spans(seq) == expected
    repaired = to_iob2(seq, "iob2")
    assert spans(repaired) == expected
    bioes = iob2_to_bioes(seq)
    assert spans(bioes, "bioes") == expected
    assert bioes_to_iob2(bioes) == repaired
    iob1 = iob2_to_iob1(seq)
    assert spans(iob1, "iob1") == expected
    assert to_iob2(iob1, "iob1") == repaired
    # Exact on valid input.
    assert iob2_to_iob1(to_iob2(iob1, "iob1")) == iob1
    assert iob2_to_bioes(bioes_to_iob2(bioes)) == bioes
    for src, dst in itertools.permutations(["iob1", "iob2", "bioes"], 2):
        valid = convert(repaired, "iob2", src)
        assert convert(convert(valid, src, dst), dst, src) == valid


def test_detect_scheme():
    assert detect_scheme([["B-A", "I-A", "O"], ["B-B"]]) == "iob2"
    assert detect_scheme([["O", "I-A"], ["B-A"]]) == "iob1"
    assert detect_scheme([["I-A", "I-B"]]) == "iob1"
    assert detect_scheme([["B-A", "I-A"], ["S-B"]]) == "bioes"
    assert detect_scheme([["B-A", "E-A"]]) == "bioes"
    assert detect_scheme([["O"], []]) == "iob2"


def test_entity_type_and_validate():
    assert entity_type("O") == "O"
    assert entity_type("B-WORK_OF_ART") == "WORK_OF_ART"
    for good in ("O", "B-X", "I-PER", "E-LOC", "S-MISC", "B-A-B"):
        validate_tag(good)
    for bad in ("", "o", "B-", "X-PER", "B PER", "BPER", "I-P ER", "B_PER"):
        with pytest.raises(ValueError):
            validate_tag(bad)
    with pytest.raises(ValueError):
        spans(["B-A", "Q-A"])
    with pytest.raises(ValueError):
        spans(["O"], "bilou")
