"""Tests of :mod:`docgraph_dev.report.paper`: the paper's numbers hold together (every table
agrees with the others where they report the same model) and cannot be changed by accident."""

from __future__ import annotations

import pytest

from docgraph_dev.report.paper import (
    BASELINE_ROW,
    CONLL_TYPES,
    GCDOC_ROW,
    PAPER_OVERALL,
    PAPER_RECALL,
    PAPER_TABLES,
    PAPER_WINDOW,
    PAPER_WITH_BERT,
    WINDOW_VARIANTS,
)
from docgraph_dev.report.runs import VARIANT_LABELS


def test_the_tables_are_v_vi_vii_in_order():
    assert [t.key for t in PAPER_TABLES] == ["table4", "table5", "table6"]
    assert [t.title.split(":")[0] for t in PAPER_TABLES] == ["Table V", "Table VI", "Table VII"]
    assert {t.key: sorted(t.paper) for t in PAPER_TABLES} == {
        "table4": ["conll03", "ontonotes"], "table5": ["conll03"], "table6": ["conll03"]}


def test_every_row_is_a_model_variant_with_a_number_on_each_corpus():
    for table in PAPER_TABLES:
        variants = [v for v, _ in table.rows]
        assert len(set(variants)) == len(variants) == 4
        assert set(variants) <= set(VARIANT_LABELS)
        for dataset, values in table.paper.items():
            assert set(values) == set(variants), (table.key, dataset)
            assert all(0 < f1 < 100 and 0 <= std < 1 for f1, std in values.values())
        assert variants[-1] == "full"  # each table ends with the whole model


def test_the_full_model_is_one_number_everywhere():
    for dataset in ("conll03", "ontonotes"):
        full = PAPER_OVERALL[dataset][GCDOC_ROW][2]
        base = PAPER_OVERALL[dataset][BASELINE_ROW][2]
        for table in PAPER_TABLES:
            values = table.paper.get(dataset)
            if values is None:
                continue
            assert values["full"][0] == full, table.key
            if "baseline" in values:
                assert values["baseline"][0] == base
    assert PAPER_WINDOW[2] == PAPER_TABLES[0].paper["conll03"]["full"]
    # a module added to the base model never scores below it in Table V
    table_v = PAPER_TABLES[0].paper["conll03"]
    assert table_v["baseline"][0] < table_v["cross_only"][0] < table_v["full"][0]


def test_the_overall_scores_are_precision_recall_and_f1():
    for dataset, rows in PAPER_OVERALL.items():
        for row, (p, r, f1) in rows.items():
            # F1 is the harmonic mean of the printed precision and recall, to the rounding
            assert f1 == pytest.approx(2 * p * r / (p + r), abs=0.01), (dataset, row)
    assert PAPER_WITH_BERT["conll03"][0] > PAPER_OVERALL["conll03"][GCDOC_ROW][2]


def test_recall_by_type_and_window_sizes():
    assert set(PAPER_RECALL) == {"conll03"}
    for recalls in PAPER_RECALL["conll03"].values():
        assert tuple(recalls) == CONLL_TYPES
    assert [k for k, _ in WINDOW_VARIANTS] == [1, 2, 3, 4]
    assert dict(WINDOW_VARIANTS)[2] == "full"
    assert all(v in VARIANT_LABELS for _, v in WINDOW_VARIANTS)


def test_the_numbers_are_read_only():
    with pytest.raises(TypeError):
        PAPER_OVERALL["conll03"] = {}  # type: ignore[index]
    with pytest.raises(TypeError):
        PAPER_TABLES[0].paper["conll03"]["full"] = (0.0, 0.0)  # type: ignore[index]
    with pytest.raises(AttributeError):
        PAPER_TABLES[0].key = "x"  # type: ignore[misc]
