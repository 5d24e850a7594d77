"""Tests of :mod:`docgraph_dev.lm_pack` (packed against per-sentence ``--lm`` windows), the
study behind ``benchmarks/lm_pack.py``, with the tiny language model."""

import json

import numpy as np
import pytest

from docgraph_dev import lm_pack


def test_lm_pack_benchmark_counts_the_work_and_compares_the_features(tiny_lm, tmp_path):
    """benchmarks/lm_pack.py: the same words both ways; the work counted from the windows."""
    out = tmp_path / "pack.json"
    lm_pack.main(["--dataset", "sample", "--split", "dev", "--lm", str(tiny_lm),
                  "--context", "4", "--documents", "2", "--out", str(out)])
    a = np.array([[1.0, 0.0], [0.0, 2.0]])
    same = lm_pack.agreement(a, a)
    assert same["cosine_min"] == pytest.approx(1.0) and same["identical_rows"] == 2
    flipped = lm_pack.agreement(a, np.array([[1.0, 0.0], [0.0, -2.0]]))
    assert flipped["cosine_mean"] == pytest.approx(0.0)
    assert flipped["relative_l2_mean"] == pytest.approx(1.0)
    result = json.loads(out.read_text())
    rows = result["encodings"]
    assert result["documents"] == 2 and result["words"] > 0
    assert rows["packed"]["windows"] < rows["unpacked"]["windows"]
    assert result["work_ratio"] == pytest.approx(
        rows["unpacked"]["subwords_encoded"] / rows["packed"]["subwords_encoded"], abs=0.01)
    assert result["work_ratio"] > 1
    lm_pack.main(["--dataset", "sample", "--split", "dev", "--lm", str(tiny_lm),
                  "--context", "4", "--documents", "2", "--count-only",
                  "--out", str(tmp_path / "count.json")])
    counted = json.loads((tmp_path / "count.json").read_text())
    assert counted["encodings"] == {name: {key: rows[name][key] for key in
                                           ("windows", "subwords_encoded")} for name in rows}
    agreement = result["agreement_packed_vs_unpacked"]
    assert -1 <= agreement["cosine_min"] <= agreement["cosine_p1"] <= agreement["cosine_p5"] <= 1
    assert agreement["cosine_min"] <= agreement["cosine_mean"] <= 1
