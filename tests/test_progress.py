"""Progress of long work (:mod:`docgraph.runtime.progress`) and what an interrupted training
says."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, TINY_FLAGS, reference_tags, script_env

from docgraph.runtime import progress
from docgraph.runtime.progress import Progress, ProgressSettings, Stages, log_to_file

LINES = ProgressSettings(tty=False, interval=0.0)


@pytest.fixture
def docgraph_info(caplog):
    caplog.set_level(logging.INFO, logger="docgraph")
    return caplog


def _messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("docgraph")]


def test_lines_without_a_terminal(docgraph_info):
    calls = []

    def stats():
        calls.append(1)
        return {"tok/s": "1,000", "mean loss": "2.5"}

    with Progress("epoch 3", total=4, unit="step", stats=stats, settings=LINES) as bar:
        for _ in range(4):
            bar.update()
    lines = _messages(docgraph_info)
    assert len(lines) == 4 == len(calls)
    assert lines[0].startswith("epoch 3: 1/4 steps (25%), 0:00 elapsed, ETA 0:00")
    assert lines[0].endswith("1,000 tok/s, mean loss 2.5")
    assert lines[-1].startswith("epoch 3: 4/4 steps (100%)") and "ETA" not in lines[-1]


def test_lines_come_every_interval_and_statistics_only_then(docgraph_info):
    calls = []
    every = ProgressSettings(tty=False, interval=0.2)
    with Progress("tagging dev", total=1000, unit="token", settings=every,
                  stats=lambda: calls.append(1) or {}) as bar:
        for _ in range(10):
            bar.update(10)
            time.sleep(0.05)
    assert 1 <= len(_messages(docgraph_info)) <= 3  # 0.5 s at one line per 0.2 s
    assert len(calls) == len(_messages(docgraph_info))  # not once per update


def test_quiet_and_other_ranks_show_nothing(docgraph_info, monkeypatch):
    stream = io.StringIO()
    for settings in (ProgressSettings(enabled=False, tty=False, interval=0.0),
                     ProgressSettings(enabled=False, tty=True)):
        with Progress("x", total=3, settings=settings, file=stream) as bar:
            bar.update(3)
    monkeypatch.setenv("RANK", "1")  # a second process of torchrun or of spawn
    assert not progress.is_rank_zero()
    for settings in (LINES, ProgressSettings(tty=True)):
        with Progress("x", total=3, settings=settings, file=stream) as bar:
            bar.update(3)
    with Stages(settings=LINES)("reading the corpus"):
        pass
    assert _messages(docgraph_info) == [] and stream.getvalue() == ""
    monkeypatch.setenv("RANK", "0")
    with Progress("x", total=3, settings=LINES) as bar:
        bar.update(3)
    assert _messages(docgraph_info) == ["x: 3/3 items (100%), 0:00 elapsed"]


def test_a_bar_on_a_terminal(docgraph_info):
    stream = io.StringIO()
    with Progress("epoch 1", total=5, unit="step", settings=ProgressSettings(tty=True),
                  stats=lambda: {"mean loss": "3"}, file=stream) as bar:
        for _ in range(5):
            time.sleep(0.12)  # tqdm redraws at most every 0.1 s
            bar.update()
    assert "epoch 1" in stream.getvalue() and "5/5" in stream.getvalue()
    assert "mean loss 3" in stream.getvalue()
    assert _messages(docgraph_info) == []  # a bar, no log lines


def test_a_slow_stage_says_it_is_running(docgraph_info):
    stages = Stages(settings=ProgressSettings(tty=False, interval=0.15, announce_after=0.05))
    with stages("building graphs") as info:
        time.sleep(0.4)
        info["result"] = "3 graphs"
    with stages("vocabularies"):
        pass
    lines = _messages(docgraph_info)
    running = [line for line in lines if line.startswith("building graphs...")]
    assert 2 <= len(running) <= 4, lines  # after 0.05 s, then every 0.15 s
    assert re.fullmatch(r"building graphs: 3 graphs \(0\.\d s\)", lines[-2])
    # a quick one: its time only (the time itself depends on the machine's load)
    assert re.fullmatch(r"vocabularies \(\d+\.\d s\)", lines[-1])
    assert set(stages.seconds) == {"building graphs", "vocabularies"}
    assert stages.summary().startswith("stage times: building graphs 0.")


def test_log_to_file_keeps_info_out_of_a_quiet_console(tmp_path):
    console = io.StringIO()
    handler = logging.StreamHandler(console)
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.WARNING)  # what setup_logging(quiet=True) does
    try:
        with log_to_file(tmp_path / "train.log"):
            logging.getLogger("docgraph").info("epoch 1 done")
            logging.getLogger("docgraph.data.registry").info("read train")
            logging.getLogger("docgraph").warning("careful")
        logging.getLogger("docgraph").info("after the run")
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    written = (tmp_path / "train.log").read_text()
    assert "epoch 1 done" in written and "read train" in written and "careful" in written
    assert "after the run" not in written
    assert console.getvalue() == "careful\n"
    assert logging.getLogger("docgraph").propagate  # restored


def _train(out: Path, *flags: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "train.py"), "--dataset", "sample",
         "--output-dir", str(out), *[f for f in TINY_FLAGS if f != "--quiet"], *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env(), cwd=ROOT)


def _interrupt_when(proc: subprocess.Popen, path: Path, timeout: float = 180) -> tuple[str, str]:
    start = time.monotonic()
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() - start < timeout
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=120)


@pytest.mark.timeout(900)  # its commands may each take minutes on a loaded machine
@pytest.mark.slow
def test_training_in_two_processes_logs_progress_once(tmp_path):
    # stderr is a pipe: progress comes as lines, here one per step, from the first process only
    out = tmp_path / "run"
    proc = _train(out, "--epochs", "2", "--processes", "2", "--batch-tokens", "1000",
                  "--progress-interval", "0")
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-3000:]
    assert "Traceback" not in stderr
    steps = re.findall(r"^epoch 1: (\d+)/(\d+) steps \(\d+%\), .*tok/s, mean loss",
                       stderr, re.M)
    assert steps, stderr
    total = int(steps[0][1])
    assert [int(k) for k, _ in steps] == list(range(1, total + 1))  # once each: one process
    assert stderr.count("read sample train from") == 1
    assert re.search(r"^tagging test: [\d,]+/[\d,]+ tokens", stderr, re.M)
    log = (out / "train.log").read_text()
    assert "epoch 2: 1/" in log and "stage times: reading the corpus" in log
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d building graphs \(", log, re.M)
    stages = json.loads((out / "metrics.json").read_text())["stage_seconds"]
    assert set(stages) >= {"reading the corpus", "building graphs", "training",
                           "final evaluation"}


@pytest.mark.slow
def test_ctrl_c_says_what_was_saved_and_how_to_resume(tmp_path):
    out = tmp_path / "run"
    proc = _train(out, "--epochs", "50", "--patience", "50", "--processes", "1", "--quiet")
    _, stderr = _interrupt_when(proc, out / "last.pt")
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    message = stderr.strip().splitlines()[-1]
    assert message.startswith(f"interrupted: {out / 'last.pt'} holds the run after epoch ")
    assert message.endswith(f"Resume with: python {ROOT / 'scripts' / 'train.py'} "
                            f"--resume {out}")
    epoch = int(re.search(r"after epoch (\d+)", message)[1])
    records = (out / "train_log.jsonl").read_text().splitlines()
    assert len(records) == epoch  # the log agrees with the checkpoint
    assert not list(out.glob(".*.tmp"))
    # --quiet kept progress off the console; the run's log has its stages and epochs
    assert "epoch 1:" not in stderr and "read sample" not in stderr
    log = (out / "train.log").read_text()
    assert "building graphs (" in log and "epoch   1  loss" in log


@pytest.mark.slow
def test_ctrl_c_before_the_first_checkpoint_leaves_no_directory(tmp_path):
    out = tmp_path / "run"
    proc = _train(out, "--epochs", "50", "--processes", "1", "--quiet")
    _, stderr = _interrupt_when(proc, out / "train.log")
    assert proc.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"interrupted: no epoch had finished, nothing was saved ({out} was not kept)")
    assert not out.exists()


@pytest.mark.slow
def test_tagging_in_processes_shows_one_progress(model_dir, sample_splits, docgraph_info):
    from docgraph.tagging.tagger import Tagger

    documents = sample_splits["test"]
    previous = progress.configure(tty=False, interval=0.0)
    try:
        result = Tagger.load(model_dir).evaluate(documents, processes=2, progress="test")
    finally:
        progress.configure(**vars(previous))
    assert result.predictions == reference_tags(documents, model_dir)
    total = sum(d.num_tokens for d in documents)
    lines = [m for m in _messages(docgraph_info) if m.startswith("tagging test: ")]
    counts = [int(m.split()[2].split("/")[0].replace(",", "")) for m in lines]
    assert lines and counts == sorted(counts) and counts[-1] == total, lines
    assert all(m.split()[2].endswith(f"/{total:,}") for m in lines)


def test_the_interrupted_message_of_runs_over_seeds(tmp_path, monkeypatch):
    from docgraph.persistence.checkpoint import save_checkpoint
    from docgraph.training.experiment import interrupted_message

    monkeypatch.setattr(sys, "argv", ["scripts/train.py"])
    (tmp_path / "seed-1").mkdir()
    (tmp_path / "seed-1" / "metrics.json").write_text("{}")
    save_checkpoint(tmp_path / "seed-2" / "last.pt",
                    {"state": {"epoch": 4, "best_epoch": 3, "best_f1": 81.234}})
    assert interrupted_message(tmp_path, [1, 2, 3]).splitlines() == [
        "interrupted: no summary.json written",
        f"  seed 1: finished ({tmp_path / 'seed-1' / 'metrics.json'})",
        f"  seed 2: {tmp_path / 'seed-2' / 'last.pt'} holds the run after epoch 4 (the best so "
        f"far, epoch 3 with dev F1 81.23, is in {tmp_path / 'seed-2' / 'model.pt'}); every "
        f"file was written whole. Resume with: python scripts/train.py --resume "
        f"{tmp_path / 'seed-2'}",
        "  seed 3: not started",
    ]


def test_a_run_log_that_cannot_be_written_says_so_once(tmp_path, capsys):
    # a full disk: one line on stderr, not a "--- Logging error ---" traceback per line
    import errno

    class FullDisk(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    logger = logging.getLogger("docgraph")
    with log_to_file(tmp_path / "train.log"):
        [handler] = [h for h in logger.handlers if isinstance(h, logging.FileHandler)]
        handler.stream.close()
        handler.stream = FullDisk()
        for epoch in (1, 2, 3):
            logger.info("epoch %d", epoch)
    assert capsys.readouterr().err == (f"warning: cannot write {tmp_path / 'train.log'}: No "
                                       "space left on device; its lines are lost from here\n")
