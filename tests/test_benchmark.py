"""Tests of the command line of ``scripts/benchmark.py`` (docgraph_dev/benchmark.py): where
its JSON goes and which measurement each mode runs."""

from __future__ import annotations

import datetime as dt
import json

import docgraph_dev.benchmark as benchmark
from docgraph_dev.benchmark import default_output


def test_default_output() -> None:
    path = default_output(dt.date(2024, 1, 2))
    assert str(path) == "benchmarks/results/measurements/benchmark-speed/speed-2024-01-02.json"


def test_speed_mode_writes_the_measured_record(tmp_path, monkeypatch) -> None:
    seen = []

    def measured(options, command):
        seen.append((options.dataset, options.batch_tokens, options.quick, command))
        return {"dataset": options.dataset}

    monkeypatch.setattr(benchmark, "measure_speed", measured)
    monkeypatch.setattr(benchmark, "format_speed_table", lambda result: "table")
    out = tmp_path / "speed.json"
    argv = ["--dataset", "sample", "--quick", "--settings", "--out", str(out)]
    assert benchmark.main(argv) == 0
    assert seen == [("sample", 4000, True, "python scripts/benchmark.py " + " ".join(argv))]
    assert json.loads(out.read_text()) == {"dataset": "sample"}
    assert benchmark.main(["--dataset", "sample", "--settings", "8 threads"]) == 2


def test_step_speed_mode_writes_its_record(tmp_path, monkeypatch) -> None:
    def timed(dataset, data_dir, device, budgets, steps, **kwargs):
        assert (device, budgets, steps, kwargs["precision"]) == ("cpu", (300,), 2, "bf16")
        return {"dataset": dataset, "device": device}

    monkeypatch.setattr(benchmark, "run_step_speed", timed)
    monkeypatch.setattr(benchmark, "format_step_speed", lambda result: "table")
    out = tmp_path / "step.json"
    argv = ["--step-speed", "--dataset", "sample", "--budgets", "300", "--steps", "2",
            "--precision", "bf16", "--out", str(out)]
    assert benchmark.main(argv) == 0
    assert json.loads(out.read_text()) == {"dataset": "sample", "device": "cpu"}
