"""Tests of the speed comparison of GCDoc and the baseline (docgraph_dev/speed.py): a tiny
quick run on the sample corpus and the epoch estimate."""

from __future__ import annotations

import json

import pytest
from conftest import HAND_COUNT_MODEL

from docgraph_dev.speed import SpeedOptions, epoch_minutes, format_speed_table, measure_speed


@pytest.fixture(scope="module")
def quick_result() -> dict:
    options = SpeedOptions(
        dataset="sample",
        quick=True,
        threads=1,
        batch_tokens=300,
        num_batches=2,
        repeats=1,
        warmup=1,
        graph_repeats=1,
        matmul_size=64,
        model_overrides=HAND_COUNT_MODEL,
    )
    return measure_speed(options, command="test")


def test_quick_run_on_sample(quick_result: dict) -> None:
    r = quick_result
    for key in (
        "read_seconds",
        "graph_build_seconds",
        "train_cost_ratio",
        "infer_cost_ratio",
        "gcdoc_train_fraction_of_matmul_peak",
        "gcdoc_train_fraction_met",
        "gcdoc_components_ms_per_batch",
        "gcdoc_forward_flops_per_token_by_component",
        "matmul_gflops_per_s",
        "peak_rss_mib",
        "torch",
        "threads",
        "cpu",
        "date",
        "command",
        "flops_note",
    ):
        assert key in r, key
    for model in ("baseline", "gcdoc"):
        for key in (
            "train_tokens_per_s",
            "infer_tokens_per_s",
            "forward_flops_per_token",
            "train_gflops_per_s",
        ):
            assert r[model][key] > 0
    assert r["train_cost_ratio"] > 0 and r["infer_cost_ratio"] > 0
    # the ratios are the two models' throughputs on the same batches, not inverted
    for kind in ("train", "infer"):
        expected = r["baseline"][f"{kind}_tokens_per_s"] / r["gcdoc"][f"{kind}_tokens_per_s"]
        assert r[f"{kind}_cost_ratio"] == pytest.approx(expected)
        for model in ("baseline", "gcdoc"):
            seconds = r[model][f"{kind}_seconds_per_pass"]
            assert r[model][f"{kind}_tokens_per_s"] == pytest.approx(
                r["timed_tokens_per_pass"] / seconds)
    assert r["timed_tokens_per_pass"] == sum(r["batch_token_counts"])
    fraction = r["gcdoc"]["train_gflops_per_s"] / r["matmul_gflops_per_s"]
    assert r["gcdoc_train_fraction_of_matmul_peak"] == pytest.approx(fraction)
    assert r["gcdoc_train_fraction_met"] == (fraction >= 0.5)
    assert r["gcdoc"]["forward_flops_per_token"] > r["baseline"]["forward_flops_per_token"]
    assert r["threads"] == 1 and r["num_batches"] == 2
    json.dumps(r)  # serialisable
    table = format_speed_table(r)
    assert "train tokens/s" in table and "cross_sentence" in table


def test_epoch_minutes_adds_training_and_dev_tagging() -> None:
    rates = {"train_tokens_per_s": 100.0, "infer_tokens_per_s": 400.0}
    scaling = {"settings": {"1 thread": {"baseline": rates, "gcdoc": rates},
                            "DDP x2": {"baseline": {"train_tokens_per_s": 200.0,
                                                    "infer_tokens_per_s": 800.0},
                                       "gcdoc": rates}}}
    # 12,000 training tokens at 100/s = 120 s, 24,000 dev tokens at 400/s = 60 s: 3 minutes.
    assert epoch_minutes(scaling, 12_000, 24_000) == {
        "1 thread": {"baseline": 3.0, "gcdoc": 3.0},
        "DDP x2": {"baseline": 1.5, "gcdoc": 3.0},
    }
