"""Tests of :mod:`docgraph_dev.lm_speed` (the cost of ``--lm`` features in training and
tagging), the study behind ``benchmarks/lm_speed.py``, with the tiny language model."""

import json

import pytest
from conftest import needs_transformers

from docgraph_dev import lm_speed


@needs_transformers
def test_lm_speed_benchmark_compares_like_with_like(tiny_lm, tmp_path):
    """benchmarks/lm_speed.py: four models on the same batches, ratios the right way round."""
    out = tmp_path / "speed.json"
    lm_speed.main(["--dataset", "sample", "--lm", str(tiny_lm), "--cache-dir", str(tmp_path),
                   "--context", "8", "--batches", "1", "--batch-tokens", "300",
                   "--repeats", "1", "--tag-documents", "1", "--out", str(out)])
    result = json.loads(out.read_text())
    steps = result["steps"]
    assert set(steps) == {"baseline", "baseline + lm", "gcdoc", "gcdoc + lm"}
    assert result["lm_dim"] == 16 and result["timed_tokens_per_pass"] > 0
    for name in ("baseline", "gcdoc"):
        # the features widen the input of the context BiLSTM: more weights, nothing else
        assert steps[f"{name} + lm"]["parameters"] > steps[name]["parameters"]
        for kind in ("train", "infer"):
            rate = steps[name][kind]["tokens_per_s"]
            assert rate == pytest.approx(result["timed_tokens_per_pass"]
                                         / steps[name][kind]["seconds"])
            assert result["step_slowdown_with_lm"][f"{name}_{kind}"] == pytest.approx(
                rate / steps[f"{name} + lm"][kind]["tokens_per_s"])
    tagging = result["tagging"]
    assert set(tagging) == {"gcdoc", "gcdoc + lm", "encoder alone"}
    assert result["tagging_slowdown_with_lm"] == pytest.approx(
        tagging["gcdoc"]["tokens_per_s"] / tagging["gcdoc + lm"]["tokens_per_s"])
    assert result["tag_tokens"] > 0 and result["tag_documents"] == 1
