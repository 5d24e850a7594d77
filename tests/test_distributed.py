"""Two-process DDP training on CPU (gloo) through ``torchrun``."""

import json
import math
import subprocess
import sys

import pytest
from conftest import ROOT, TINY_FLAGS, script_env

from docgraph.training.distributed import free_port


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


TIMES = {"epoch_seconds", "tokens_per_s", "wall_seconds", "peak_rss_mb"}


@pytest.mark.slow
def test_two_process_run_resumes_exactly(tmp_path):
    # The default CPU training runs two processes, each drawing its own dropout and
    # Monte-Carlo masks: a run interrupted after epoch 1 and resumed to epoch 3 logs the same
    # figures, picks the same best epoch and scores the same as the uninterrupted run.
    from docgraph.persistence.checkpoint import load_checkpoint

    def train(*args):
        res = subprocess.run([sys.executable, str(ROOT / "scripts" / "train.py"), *args,
                              "--processes", "2", "--threads", "1", "--quiet"],
                             capture_output=True, text=True, timeout=300, env=script_env(),
                             cwd=ROOT)
        assert res.returncode == 0, res.stderr[-3000:]

    flags = ["--dataset", "sample", *TINY_FLAGS, "--lr", "0.03", "--batch-tokens", "500",
             "--seed", "7"]
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    train(*flags, "--output-dir", str(straight), "--epochs", "3")
    train(*flags, "--output-dir", str(resumed), "--epochs", "1")
    ranks = load_checkpoint(resumed / "last.pt")["rng_ranks"]
    assert len(ranks) == 2 and not ranks[0]["torch"].equal(ranks[1]["torch"])
    train("--resume", str(resumed), "--epochs", "3")

    def log(run):
        return [{k: v for k, v in json.loads(line).items() if k not in TIMES}
                for line in (run / "train_log.jsonl").read_text().splitlines()]

    assert log(resumed) == log(straight) and len(log(straight)) == 3
    a, b = (json.loads((run / "metrics.json").read_text()) for run in (straight, resumed))
    for key in ("dev", "test", "best_epoch", "epochs", "consistency"):
        assert a[key] == b[key], key
    # the final dev evaluation (one process) tags as the in-training one (dev shared out over
    # the two processes) did: each document's Monte-Carlo masks are its own
    best = next(e for e in log(straight) if e["epoch"] == a["best_epoch"])
    assert a["dev"]["f1"] == best["dev_f1"] and a["dev"]["precision"] == best["dev_precision"]
