"""Tests of the training-step and tagging speed on a device (docgraph_dev/step_speed.py)."""

from __future__ import annotations

from docgraph_dev.step_speed import format_step_speed


def test_format_step_speed_lists_rows_tagging_and_profiles() -> None:
    row = {"model": "gcdoc", "batch_tokens": 4000, "steps": 8, "tokens": 32000,
           "ms_per_step": 125.0, "tokens_per_s": 32000.0, "epoch_seconds_estimate": 9.5}
    profile = {"profiled_wall_ms": 130.0, "kernels": 900, "kernel_ms": 65.0,
               "kernel_busy_fraction": 0.5, "top": [{"name": "sgemm", "calls": 12, "ms": 20.0}],
               "top_by": "CUDA kernel time", "components_ms": {"char_encoder": 4.0}}
    result = {"dataset": "sample", "hardware": "GPU X", "device": "cuda:0",
              "precision": "bf16", "deterministic": True, "dev_tokens": 500,
              "rows": [{**row, "model": "baseline"}, {**row, "profile": profile}],
              "dev_tagging_seconds": {"baseline": 1.25, "gcdoc": 2.5}}
    lines = format_step_speed(result).splitlines()
    assert lines[0] == "sample on GPU X (cuda:0, bf16, deterministic)"
    assert lines[2].split() == ["baseline", "4000", "125.0", "32000", "9.5"]
    assert "dev tagging (500 tokens), gcdoc: 2.5 s" in lines
    assert ("profile gcdoc 4000: wall 130.0 ms, 900 kernels, 65.0 ms busy (0.50 of the step)"
            in lines)
    assert "  components (ms): char_encoder 4.0" in lines
    assert lines[-1].split() == ["20.00", "ms", "12x", "sgemm"]
