"""Tests of the document-consistency metrics of :mod:`docgraph.metrics` (values by hand)."""

import pytest

from docgraph.metrics import (
    DocumentConsistency,
    TypeConsistency,
    document_consistency,
    is_recurrent_mention,
    mention_string,
    recurrent_words,
    score,
    type_consistency,
)

# Document A: "paris" occurs three times (any case); every other word once.
DOC_A = [["Paris", "Hilton", "visited", "Paris", "."], ["paris", "is", "big", "John", "left"]]
GOLD_A = [["B-PER", "I-PER", "O", "B-LOC", "O"], ["B-LOC", "O", "O", "B-PER", "O"]]
PRED_A = [["B-LOC", "O", "O", "B-LOC", "O"], ["B-LOC", "O", "O", "B-ORG", "O"]]
# Document B: "jordan" three times, typed PER / LOC / PER in gold and PER / PER / LOC predicted.
DOC_B = [["Jordan", "beat", "Jordan", "."], ["JORDAN", "won", "in", "Amman"]]
GOLD_B = [["B-PER", "O", "B-LOC", "O"], ["B-PER", "O", "O", "B-LOC"]]
PRED_B = [["B-PER", "O", "B-PER", "O"], ["B-LOC", "O", "O", "B-LOC"]]


def test_recurrent_words_and_mention_keys():
    assert recurrent_words(DOC_A) == {"paris"}
    assert recurrent_words(DOC_B, lowercase=False) == {"Jordan"}
    assert mention_string(DOC_A[0], 0, 1) == "paris hilton"
    assert mention_string(DOC_A[0], 0, 1, lowercase=False) == "Paris Hilton"
    assert is_recurrent_mention(DOC_A[0], 0, 1, {"paris"})  # one recurring word suffices
    assert not is_recurrent_mention(DOC_A[1], 3, 3, {"paris"})
    # A word repeated inside one mention recurs too (its two tokens are graph neighbours).
    assert recurrent_words([["New", "new", "York"]]) == {"new"}


def test_document_consistency_by_hand():
    result = document_consistency([DOC_A, DOC_B], [GOLD_A, GOLD_B], [PRED_A, PRED_B])
    assert isinstance(result, DocumentConsistency)
    # Recurrent gold: A: Paris Hilton/PER, Paris/LOC, paris/LOC; B: the three Jordans  -> 6.
    # Recurrent predictions: A: Paris, Paris, paris (LOC); B: the three Jordans         -> 6.
    # Correct: A: Paris/LOC (s0), paris/LOC (s1); B: Jordan/PER (s0)                    -> 3.
    rec = result.recurrent
    assert (rec.support, rec.predicted, rec.correct) == (6, 6, 3)
    assert rec.precision == pytest.approx(50.0) and rec.recall == pytest.approx(50.0)
    assert rec.f1 == pytest.approx(50.0)
    # Singleton: A: John/PER vs John/ORG (wrong); B: Amman/LOC (correct).
    single = result.singleton
    assert (single.support, single.predicted, single.correct) == (2, 2, 1)
    assert single.f1 == pytest.approx(50.0)
    # The buckets add up to the overall counts.
    overall = score(GOLD_A + GOLD_B, PRED_A + PRED_B)
    assert rec.support + single.support == overall.support
    assert rec.correct + single.correct == overall.correct
    # Gold groups: "paris" (LOC, LOC) consistent; "jordan" (PER, LOC, PER) not, 1 disagrees.
    assert result.gold == TypeConsistency(mentions=8, groups=2, consistent_groups=1,
                                          grouped_mentions=5, majority_disagreements=1)
    # Predicted groups: "paris" (LOC x3) consistent; "jordan" (PER, PER, LOC), 1 disagrees.
    assert result.pred == TypeConsistency(mentions=8, groups=2, consistent_groups=1,
                                          grouped_mentions=6, majority_disagreements=1)
    assert result.pred.consistency == pytest.approx(50.0)
    assert result.pred.disagreement == pytest.approx(100 * 1 / 8)
    d = result.to_dict()
    assert d["recurrent"]["f1"] == pytest.approx(50.0) and d["singleton"]["support"] == 2
    assert d["gold"]["consistency"] == pytest.approx(50.0)
    assert d["pred"]["majority_disagreements"] == 1


def test_predicted_span_is_bucketed_by_its_own_words():
    tokens = [["York", "Times", "in", "York"]]
    gold = [["B-ORG", "I-ORG", "O", "B-LOC"]]
    pred = [["O", "B-ORG", "O", "B-LOC"]]  # "Times" alone has no recurring word
    result = document_consistency([tokens], [gold], [pred])
    rec, single = result.recurrent, result.singleton
    assert (rec.support, rec.predicted, rec.correct) == (2, 1, 1)
    assert rec.precision == pytest.approx(100.0) and rec.recall == pytest.approx(50.0)
    assert rec.f1 == pytest.approx(200 / 3)
    assert (single.support, single.predicted, single.correct) == (0, 1, 0)
    assert single.f1 == 0.0


def test_case_sensitive_keys():
    result = document_consistency([DOC_B], [GOLD_B], [PRED_B], lowercase=False)
    # Only "Jordan" recurs; "JORDAN" is a singleton mention and a group of its own.
    assert (result.recurrent.support, result.singleton.support) == (2, 2)
    assert result.gold == TypeConsistency(mentions=4, groups=1, consistent_groups=0,
                                          grouped_mentions=2, majority_disagreements=1)


def test_type_consistency_tie_and_empty():
    tie = type_consistency([("a", "PER"), ("a", "ORG"), ("a", "PER"), ("a", "ORG"), ("b", "LOC")])
    assert tie == TypeConsistency(mentions=5, groups=1, consistent_groups=0,
                                  grouped_mentions=4, majority_disagreements=2)
    assert tie.disagreement == pytest.approx(40.0) and tie.consistency == 0.0
    empty = type_consistency([])
    assert empty.consistency == 0.0 and empty.disagreement == 0.0


def test_shape_mismatch_is_rejected():
    with pytest.raises(ValueError, match="documents"):
        document_consistency([DOC_A], [GOLD_A, GOLD_B], [PRED_A])
    with pytest.raises(ValueError, match="document 0"):
        document_consistency([DOC_A], [GOLD_A], [PRED_A[:1]])


def test_mixed_share_reads_n_a_without_groups():
    from docgraph.metrics import TypeConsistency

    assert TypeConsistency(mentions=3).mixed_text() == "n/a"
    assert TypeConsistency(mentions=4, groups=4, consistent_groups=3,
                           grouped_mentions=4).mixed_text() == "25.0%"
    assert TypeConsistency(mentions=2, groups=1, consistent_groups=1).mixed_text() == "0.0%"


def test_consistency_figures_read_n_a_without_groups():
    from docgraph.metrics import consistency_text

    # no word occurs twice: no string group, no mention with a recurring word
    lone = [["Kestrel", "beat", "Carrow", "."]]
    gold, pred = [["B-ORG", "O", "B-ORG", "O"]], [["B-ORG", "O", "O", "O"]]
    text = consistency_text(document_consistency([lone], [gold], [pred]))
    assert text == ("document consistency: F1 on mentions with a recurring word n/a, on "
                    "once-seen mentions 66.67; string groups with more than one type n/a "
                    "(gold n/a); entities against their string's majority type n/a")
    # with groups every figure is counted (documents A and B: by hand above)
    text = consistency_text(document_consistency([DOC_A, DOC_B], [GOLD_A, GOLD_B],
                                                 [PRED_A, PRED_B]))
    assert text == ("document consistency: F1 on mentions with a recurring word 50.00, on "
                    "once-seen mentions 50.00; string groups with more than one type 50.0% "
                    "(gold 50.0%); entities against their string's majority type 12.50%")
    # a group of consistent mentions is 0.0%, not n/a
    text = consistency_text(document_consistency([DOC_A], [GOLD_A], [PRED_A]))
    assert "more than one type 0.0% (gold 0.0%)" in text


def test_evaluate_prints_n_a_for_a_file_without_repeats(model_dir, tmp_path, capsys):
    from docgraph.cli import evaluate_main

    gold = tmp_path / "lone.conll"
    gold.write_text("-DOCSTART- O\n\nKestrel B-ORG\nbeat O\nCarrow B-ORG\n. O\n")
    assert evaluate_main(["--model", str(model_dir), "--data", str(gold), "--output-dir",
                          str(tmp_path), "--device", "cpu", "--quiet"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines()
                if x.startswith("document consistency"))
    assert "recurring word n/a" in line and "more than one type n/a (gold n/a)" in line
    assert line.endswith("majority type n/a")
