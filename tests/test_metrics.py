"""Tests for the conlleval-compatible entity-level metrics."""

from __future__ import annotations

import json
import random
import warnings

import pytest
from seqeval.metrics import f1_score, precision_score, recall_score

from docgraph.metrics import Scores, TypeScores, extract_entities, format_table, score


def seqeval_percent(gold: list[list[str]], pred: list[list[str]]) -> tuple[float, float, float]:
    """Overall P/R/F1 in percent from seqeval's default mode."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (
            100 * precision_score(gold, pred, zero_division=0),
            100 * recall_score(gold, pred, zero_division=0),
            100 * f1_score(gold, pred, zero_division=0),
        )


def assert_matches_seqeval(gold: list[list[str]], pred: list[list[str]]) -> Scores:
    result = score(gold, pred)
    p, r, f = seqeval_percent(gold, pred)
    assert result.precision == pytest.approx(p)
    assert result.recall == pytest.approx(r)
    assert result.f1 == pytest.approx(f)
    return result


def prf(result: Scores | TypeScores) -> tuple[float, float, float]:
    return (result.precision, result.recall, result.f1)


# --- entity reading (conlleval edge cases) -------------------------------------------------


def test_i_after_o_starts_entity() -> None:
    assert extract_entities([["O", "I-PER", "I-PER", "O"]]) == {(0, "PER", 1, 2)}


def test_i_after_b_of_other_type_starts_new_entity() -> None:
    assert extract_entities([["B-ORG", "I-PER", "I-PER"]]) == {
        (0, "ORG", 0, 0),
        (0, "PER", 1, 2),
    }


def test_b_b_is_two_entities() -> None:
    assert extract_entities([["B-LOC", "B-LOC"]]) == {(0, "LOC", 0, 0), (0, "LOC", 1, 1)}


def test_entity_at_sentence_end_and_sentence_index() -> None:
    assert extract_entities([["O", "B-MISC"], ["B-PER", "I-PER"]]) == {
        (0, "MISC", 1, 1),
        (1, "PER", 0, 1),
    }


def test_entities_do_not_cross_sentences() -> None:
    # I-PER at the start of the second sentence starts a new entity.
    assert extract_entities([["B-PER"], ["I-PER"]]) == {(0, "PER", 0, 0), (1, "PER", 0, 0)}


def test_bioes_is_read_in_default_mode() -> None:
    tags = ["S-PER", "O", "B-ORG", "I-ORG", "E-ORG", "S-LOC", "S-LOC"]
    assert extract_entities([tags]) == {
        (0, "PER", 0, 0),
        (0, "ORG", 2, 4),
        (0, "LOC", 5, 5),
        (0, "LOC", 6, 6),
    }


def test_bioes_equals_iob2() -> None:
    bioes = [["S-PER", "O", "B-ORG", "I-ORG", "E-ORG", "S-LOC", "S-LOC"]]
    iob2 = [["B-PER", "O", "B-ORG", "I-ORG", "I-ORG", "B-LOC", "B-LOC"]]
    assert extract_entities(bioes) == extract_entities(iob2)
    assert prf(score(iob2, bioes)) == (100.0, 100.0, 100.0)


def test_iob1_equals_iob2_conversion() -> None:
    iob1 = [["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-ORG"], ["I-MISC"]]
    iob2 = [["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "B-ORG"], ["B-MISC"]]
    assert extract_entities(iob1) == extract_entities(iob2)
    pred = [["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG"], ["O"]]
    assert score(iob1, pred).to_dict() == score(iob2, pred).to_dict()


# --- scores -------------------------------------------------------------------------------


def test_perfect_prediction() -> None:
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG"]]
    result = assert_matches_seqeval(gold, gold)
    assert prf(result) == (100.0, 100.0, 100.0)
    assert (result.support, result.predicted, result.correct) == (3, 3, 3)


def test_empty_prediction() -> None:
    gold = [["B-PER", "I-PER", "O", "B-LOC"]]
    pred = [["O", "O", "O", "O"]]
    result = assert_matches_seqeval(gold, pred)
    assert prf(result) == (0.0, 0.0, 0.0)
    assert (result.support, result.predicted, result.correct) == (2, 0, 0)


def test_no_entities_anywhere() -> None:
    result = score([["O", "O"]], [["O", "O"]])
    assert prf(result) == (0.0, 0.0, 0.0)
    assert result.per_type == {}


def test_empty_input() -> None:
    result = score([], [])
    assert prf(result) == (0.0, 0.0, 0.0)
    assert result.support == 0


def test_right_span_wrong_type() -> None:
    gold = [["B-PER", "I-PER", "O"]]
    pred = [["B-ORG", "I-ORG", "O"]]
    result = assert_matches_seqeval(gold, pred)
    assert prf(result) == (0.0, 0.0, 0.0)
    assert result.per_type["PER"].support == 1
    assert result.per_type["PER"].predicted == 0
    assert result.per_type["ORG"].support == 0
    assert result.per_type["ORG"].predicted == 1


def test_partial_overlap_is_wrong() -> None:
    gold = [["B-ORG", "I-ORG", "I-ORG", "O", "B-PER"]]
    pred = [["B-ORG", "I-ORG", "O", "O", "B-PER"]]
    result = assert_matches_seqeval(gold, pred)
    # 2 gold, 2 predicted, 1 correct (PER).
    assert (result.support, result.predicted, result.correct) == (2, 2, 1)
    assert prf(result) == pytest.approx((50.0, 50.0, 50.0))


def test_b_b_split_prediction() -> None:
    gold = [["B-LOC", "I-LOC", "O"]]
    pred = [["B-LOC", "B-LOC", "O"]]
    result = assert_matches_seqeval(gold, pred)
    # 1 gold, 2 predicted, 0 correct.
    assert (result.support, result.predicted, result.correct) == (1, 2, 0)
    assert prf(result) == (0.0, 0.0, 0.0)


def test_hand_computed_precision_recall_f1() -> None:
    gold = [
        ["B-PER", "I-PER", "O", "B-LOC", "O"],
        ["B-ORG", "O", "B-PER", "O"],
        ["O", "B-MISC", "I-MISC"],
    ]
    pred = [
        ["B-PER", "I-PER", "O", "B-LOC", "B-LOC"],  # PER ok, LOC ok, extra LOC
        ["B-ORG", "O", "O", "O"],  # ORG ok, PER missed
        ["O", "I-MISC", "I-MISC"],  # I- after O starts MISC 1..2: ok
    ]
    # gold: PER x2, LOC, ORG, MISC = 5; pred: PER, LOC x2, ORG, MISC = 5; correct = 4.
    result = assert_matches_seqeval(gold, pred)
    assert (result.support, result.predicted, result.correct) == (5, 5, 4)
    assert prf(result) == pytest.approx((80.0, 80.0, 80.0))

    per = result.per_type
    assert list(per) == ["LOC", "MISC", "ORG", "PER"]
    assert prf(per["LOC"]) == pytest.approx((50.0, 100.0, 200 / 3))
    assert (per["LOC"].support, per["LOC"].predicted, per["LOC"].correct) == (1, 2, 1)
    assert prf(per["PER"]) == pytest.approx((100.0, 50.0, 200 / 3))
    assert (per["PER"].support, per["PER"].predicted, per["PER"].correct) == (2, 1, 1)
    assert prf(per["ORG"]) == (100.0, 100.0, 100.0)
    assert prf(per["MISC"]) == (100.0, 100.0, 100.0)


def test_unequal_precision_and_recall() -> None:
    gold = [["B-PER", "O", "B-PER", "O", "B-PER", "O", "B-PER"]]
    pred = [["B-PER", "O", "O", "O", "O", "O", "O"]]
    result = assert_matches_seqeval(gold, pred)
    # P = 1/1, R = 1/4, F1 = 2 * 1 * 0.25 / 1.25 = 0.4
    assert prf(result) == pytest.approx((100.0, 25.0, 40.0))


def test_random_sequences_match_seqeval() -> None:
    rng = random.Random(13)
    tags = ["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-ORG", "E-ORG", "S-MISC"]
    for _ in range(50):
        lengths = [rng.randint(0, 8) for _ in range(rng.randint(1, 5))]
        gold = [[rng.choice(tags) for _ in range(n)] for n in lengths]
        pred = [[rng.choice(tags) for _ in range(n)] for n in lengths]
        assert_matches_seqeval(gold, pred)
        assert_matches_seqeval(gold, gold)


def test_accepts_tuples() -> None:
    gold = (("B-PER", "I-PER"),)
    assert score(gold, gold).f1 == 100.0


def test_length_mismatch_names_sentence() -> None:
    with pytest.raises(ValueError, match="sentence 1"):
        score([["O"], ["O", "B-PER"]], [["O"], ["O"]])
    with pytest.raises(ValueError, match="2 sentences"):
        score([["O"], ["O"]], [["O"]])


# --- serialisation and display ------------------------------------------------------------


def test_to_dict_from_dict_round_trip() -> None:
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG"]]
    pred = [["B-PER", "I-PER", "O", "O"], ["B-LOC"]]
    result = score(gold, pred)
    data = result.to_dict()
    assert set(data) == {"precision", "recall", "f1", "support", "predicted", "correct", "per_type"}
    assert set(data["per_type"]) == {"PER", "LOC", "ORG"}
    assert set(data["per_type"]["PER"]) == {
        "precision",
        "recall",
        "f1",
        "support",
        "predicted",
        "correct",
    }
    restored = Scores.from_dict(json.loads(json.dumps(data)))
    assert restored == result
    assert restored.to_dict() == data


def test_format_table_contains_all_types() -> None:
    gold = [["B-PER", "O", "B-LOC"], ["B-ORGANISATION"]]
    pred = [["B-PER", "O", "O"], ["B-MISC"]]
    result = score(gold, pred)
    table = format_table(result, title="dev")
    lines = table.splitlines()
    assert lines[0] == "dev"
    for name in ("PER", "LOC", "ORGANISATION", "MISC", "overall"):
        assert any(line.startswith(name) for line in lines)
    assert "F1" in table and "support" in table
    overall = next(line for line in lines if line.startswith("overall"))
    assert f"{result.f1:.2f}" in overall
    # fixed width: all data rows have the same length as the header
    assert len({len(line) for line in lines[1:]}) == 1
    assert not format_table(result).startswith("dev")
