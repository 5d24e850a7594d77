"""Two-process DDP training on CPU (gloo) through ``torchrun``."""

import json
import math
import subprocess
import sys

import pytest
from conftest import ROOT, TINY_FLAGS, script_env

from docgraph.distributed import free_port


@pytest.mark.slow
def test_torchrun_two_processes(tmp_path):
    out = tmp_path / "ddp"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
           "--master_port", str(free_port()), str(ROOT / "scripts" / "train.py"),
           "--dataset", "sample", "--output-dir", str(out), *TINY_FLAGS,
           "--epochs", "3", "--lr", "0.03", "--batch-tokens", "500"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=script_env(),
                         cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.count("test F1") == 1  # only rank 0 reports
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["epochs"] == 3
    assert math.isfinite(metrics["test"]["f1"]) and metrics["test"]["f1"] > 0
    log = (out / "train_log.jsonl").read_text().splitlines()
    assert [json.loads(line)["epoch"] for line in log] == [1, 2, 3]  # written once
    assert not list(out.glob(".*.tmp"))
