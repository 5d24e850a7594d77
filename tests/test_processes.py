"""Two-process DDP training on CPU (gloo): through ``torchrun`` and the built-in launcher, and
how a two-process run ends: a worker killed, the launcher stopped or killed, a write that
fails, the process group torn down on every process."""

import atexit
import gc
import json
import logging
import math
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import (
    ROOT,
    TINY_FLAGS,
    child_processes,
    needs_proc,
    script_env,
    still_running,
    tiny_config,
)

from docgraph.runtime.processes import (
    ProcessError,
    ProcessFailedError,
    free_port,
    process_pool,
    spawn,
)


@pytest.mark.slow
def test_torchrun_two_processes(tmp_path):
    out = tmp_path / "ddp"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
           "--master_port", str(free_port()), str(ROOT / "scripts" / "train.py"),
           "--dataset", "sample", "--output-dir", str(out), *TINY_FLAGS,
           "--epochs", "3", "--lr", "0.03", "--batch-tokens", "500"]
    # torchrun's agent leaves its own torchelastic_* directory in $TMPDIR: keep it in tmp_path
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=240,
                         env=dict(script_env(), TMPDIR=str(tmp_path)), cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.count("test F1") == 1  # only rank 0 reports
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["epochs"] == 3
    assert math.isfinite(metrics["test"]["f1"]) and metrics["test"]["f1"] > 0
    log = (out / "train_log.jsonl").read_text().splitlines()
    assert [json.loads(line)["epoch"] for line in log] == [1, 2, 3]  # written once
    assert not list(out.glob(".*.tmp"))


TIMES = {"epoch_seconds", "tokens_per_s", "wall_seconds", "peak_rss_mb"}


@pytest.mark.timeout(1200)  # its commands may each take minutes on a loaded machine
@pytest.mark.slow
def test_two_process_run_resumes_exactly(tmp_path):
    # The default CPU training runs two processes, each drawing its own dropout and
    # Monte-Carlo masks: a run interrupted after epoch 1 and resumed to epoch 2 logs the same
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
    train(*flags, "--output-dir", str(straight), "--epochs", "2")
    train(*flags, "--output-dir", str(resumed), "--epochs", "1")
    ranks = load_checkpoint(resumed / "last.pt")["rng_ranks"]
    assert len(ranks) == 2 and not ranks[0]["torch"].equal(ranks[1]["torch"])
    train("--resume", str(resumed), "--epochs", "2")

    def log(run):
        return [{k: v for k, v in json.loads(line).items() if k not in TIMES}
                for line in (run / "train_log.jsonl").read_text().splitlines()]

    assert log(resumed) == log(straight) and len(log(straight)) == 2
    a, b = (json.loads((run / "metrics.json").read_text()) for run in (straight, resumed))
    for key in ("dev", "test", "best_epoch", "epochs", "consistency"):
        assert a[key] == b[key], key
    # the final dev evaluation (one process) tags as the in-training one (dev shared out over
    # the two processes) did: each document's Monte-Carlo masks are its own
    best = next(e for e in log(straight) if e["epoch"] == a["best_epoch"])
    assert a["dev"]["f1"] == best["dev_f1"] and a["dev"]["precision"] == best["dev_precision"]


def _launch(out: Path, *flags: str, preexec_fn=None) -> subprocess.Popen:
    """``train.py`` in two processes on the sample corpus, long enough to be stopped."""
    return subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "train.py"), "--dataset", "sample",
         "--output-dir", str(out), *TINY_FLAGS, "--processes", "2", "--batch-tokens", "500",
         *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env(), cwd=ROOT,
        preexec_fn=preexec_fn)


def _workers_after_first_checkpoint(proc: subprocess.Popen, out: Path) -> list[int]:
    """The two training processes of ``proc`` (rank 0 first), once ``last.pt`` exists."""
    deadline = time.monotonic() + 240
    while not (out / "last.pt").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no checkpoint written"
        time.sleep(0.05)
    workers = child_processes(proc.pid)
    assert len(workers) == 2, workers
    return workers


def _resume_line(out: Path) -> str:
    return f"Resume with: python {ROOT / 'scripts' / 'train.py'} --resume {out}"


@pytest.mark.slow
@needs_proc
def test_a_killed_worker_is_named_with_what_is_saved_and_how_to_resume(tmp_path):
    # kill -9 of rank 1 in the middle of training (what the out-of-memory killer does)
    out = tmp_path / "run"
    proc = _launch(out, "--epochs", "50", "--patience", "50")
    workers = _workers_after_first_checkpoint(proc, out)
    os.kill(workers[1], signal.SIGKILL)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 2, stderr
    assert lines[0] == (f"error: training process 1 (pid {workers[1]}) was killed by SIGKILL "
                        "(as the out-of-memory killer does; see dmesg)")
    assert lines[1].startswith(f"{out / 'last.pt'} holds the run after epoch ")
    assert lines[1].endswith(_resume_line(out))
    assert not still_running(workers, 5)
    assert not (out / "metrics.json").exists() and not list(out.glob(".*.tmp"))


def _ignore_sigint() -> None:
    # a background job of a script (``cmd &``): SIGINT is ignored, as it is in its processes
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.slow
@needs_proc
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_the_workers_end_with_their_launcher(tmp_path, signum):
    # SIGTERM stops the run as Ctrl-C does (one short message, exit status 143); after SIGKILL
    # nothing is left to say it, but the workers end with the launcher all the same (they ran
    # on and wrote metrics.json when they kept torch's parent-death signal, SIGINT, which a
    # background job ignores)
    out = tmp_path / "run"
    proc = _launch(out, "--epochs", "50", "--patience", "50", preexec_fn=_ignore_sigint)
    workers = _workers_after_first_checkpoint(proc, out)
    proc.send_signal(signum)
    assert not still_running(workers, 10 if signum == signal.SIGKILL else 30)
    _, stderr = proc.communicate(timeout=60)
    assert not (out / "metrics.json").exists() and not list(out.glob(".*.tmp"))
    if signum == signal.SIGKILL:
        return
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"stopped by SIGTERM: {out / 'last.pt'} holds the run after ")
    assert lines[0].endswith(_resume_line(out))


@pytest.mark.slow
def test_the_first_error_of_any_process_is_the_one_shown(tmp_path):
    # Files of at most 500 KB (ulimit -f): model.pt (about 320 KB) is written, last.pt (about
    # 1 MB) fails on rank 0; rank 1 then loses its peer ("Connection closed by peer"), which
    # is not what went wrong.
    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (500_000, 500_000))

    out = tmp_path / "run"
    proc = _launch(out, "--epochs", "2", preexec_fn=limit_file_size)
    _, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr and "peer" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 2, stderr
    assert lines[0].startswith("error: training process 0 (pid ")
    assert lines[0].endswith(f"cannot write {out / 'last.pt'}: File too large (EFBIG)")
    assert lines[1].startswith(f"no checkpoint was saved: nothing to resume in {out} (it holds "
                               "only config.json, "), lines[1]
    assert lines[1].endswith("); run the command again with --overwrite")
    assert "vocab.json" in lines[1] and "last.pt" not in lines[1]
    assert not list(out.glob(".*.tmp"))


def _train_then_watch_the_teardown(config, marks: str) -> None:
    """A spawned process: train with the garbage collector off (a reference cycle then keeps
    what it holds), and at exit, after :func:`spawn`'s teardown, note the process group and
    gloo's threads that are left."""
    import torch.distributed as dist

    from docgraph.training.experiment import run_experiment

    gc.disable()
    rank = dist.get_rank()

    def note() -> None:
        threads = [(task / "comm").read_text().strip()
                   for task in Path("/proc/self/task").iterdir()]
        Path(marks, f"{rank}.json").write_text(json.dumps(
            {"group": dist.is_initialized(), "gloo": [t for t in threads if "gloo" in t]}))

    atexit.register(note)
    run_experiment(config, progress=False)


@pytest.mark.slow
@needs_proc
def test_no_process_group_outlives_a_two_process_run(tmp_path):
    # Left to the garbage collector, the trainer, its DDP wrapper and so the gloo group
    # outlived destroy_process_group (the epoch's progress statistics closed over the trainer
    # and the bar, the bar held them: a cycle), and gloo's threads ran into the interpreter's
    # shutdown, which they could end with "terminate called without an active exception".
    marks = tmp_path / "marks"
    marks.mkdir()
    config = tiny_config(tmp_path / "run", epochs=1, batch_tokens=500)
    spawn(_train_then_watch_the_teardown, 2, config, str(marks), name="training process")
    for rank in (0, 1):
        assert json.loads((marks / f"{rank}.json").read_text()) == {"group": False, "gloo": []}


def _fail_on(failing_rank: int) -> None:
    import torch.distributed as dist

    if dist.get_rank() == failing_rank:
        raise ProcessError("corpus.txt:3: invalid tag 'X-ORG'", 2)
    dist.barrier()  # the other process loses its peer here


def test_spawn_raises_the_error_of_the_failing_process(tmp_path):
    with pytest.raises(ProcessFailedError) as info:
        spawn(_fail_on, 2, 1, name="training process")
    err = info.value
    assert (err.rank, err.status, err.signal, err.traceback) == (1, 2, None, None)
    assert err.detail == "corpus.txt:3: invalid tag 'X-ORG'"
    assert str(err) == f"training process 1 (pid {err.pid}): corpus.txt:3: invalid tag 'X-ORG'"


def _abort_at_exit(aborting_rank: int) -> None:
    import torch.distributed as dist

    if dist.get_rank() == aborting_rank:
        atexit.register(os.abort)  # as "terminate called without an active exception" does


def test_a_crash_after_the_run_finished_is_a_warning(caplog):
    # every process finished its work: the run's files are whole, the run has succeeded
    with caplog.at_level(logging.WARNING, logger="docgraph"):
        spawn(_abort_at_exit, 2, 1, name="training process")
    [message] = [r.getMessage() for r in caplog.records if r.name == "docgraph"]
    assert message.startswith("training process 1 (pid ")
    assert message.endswith("was killed by SIGABRT after the run had finished; the run's files "
                            "are whole")


def test_a_dead_pool_process_is_named_with_its_signal():
    import os
    from concurrent.futures.process import BrokenProcessPool

    from docgraph.runtime.processes import dead_pool_process, process_pool

    with process_pool(2) as pool:
        pids = set(pool.map(_pid, range(8)))
        with pytest.raises(BrokenProcessPool):
            pool.submit(os.abort).result()
        told = dead_pool_process(pool, "tagging process")
    match = re.fullmatch(r"tagging process (\d+) was killed by SIGABRT", told)
    assert match is not None, told
    assert int(match.group(1)) != os.getpid() and len(pids) >= 1


def _pid(_: int) -> int:
    import os

    return os.getpid()


def _die_while_writing_a_result() -> None:
    """Write the start of a 1000-byte result frame to the pool's result pipe, then die."""
    import multiprocessing.queues
    import struct

    [queue] = [o for o in gc.get_objects() if isinstance(o, multiprocessing.queues.SimpleQueue)
               and not o._writer.closed and o._writer.writable]
    os.write(queue._writer.fileno(), struct.pack("!i", 1000) + b"partial")
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_process_dead_while_it_writes_a_result_is_noticed():
    # the pool's reader waits for the rest of the frame; without pool_result's check of the
    # processes the future would never end, nor would the pool's shutdown
    from concurrent.futures.process import BrokenProcessPool

    from docgraph.runtime.processes import dead_pool_process, pool_result

    start = time.monotonic()
    with pytest.raises(BrokenProcessPool), process_pool(1) as pool:
        assert pool_result(pool, pool.submit(_pid, 0)) != os.getpid()
        try:
            pool_result(pool, pool.submit(_die_while_writing_a_result), poll=0.1)
        finally:
            told = dead_pool_process(pool, "tagging process")
    assert re.fullmatch(r"tagging process \d+ was killed by SIGKILL", told), told
    assert time.monotonic() - start < 60


_LEAVE_A_POOL_WHOSE_PROCESS_DIED_WRITING = """
import sys
from concurrent.futures.process import BrokenProcessPool
sys.path.insert(0, sys.argv[1])
from test_processes import _die_while_writing_a_result, _pid
from docgraph.runtime.processes import pool_result, process_pool

try:
    with process_pool(1) as pool:
        pool_result(pool, pool.submit(_pid, 0))
        pool_result(pool, pool.submit(_die_while_writing_a_result), poll=0.1)
except BrokenProcessPool:
    print("left")
"""


@pytest.mark.timeout(180)
def test_a_pool_left_after_a_death_mid_result_is_shut_down_in_time():
    """Leaving the pool's block after a process died in the middle of writing a result ends
    within a minute: the pool's result pipe is closed when the pool is killed, so its reader
    sees the end instead of waiting for the rest of the frame. Run in a child process with a
    time limit, so that a hang is this test's failure, not the suite's. Fails on the planted
    bug where ``_kill_pool`` no longer closes the result pipe (the child then hangs in the
    pool's shutdown)."""
    res = subprocess.run([sys.executable, "-c", _LEAVE_A_POOL_WHOSE_PROCESS_DIED_WRITING,
                          str(Path(__file__).parent)], capture_output=True, text=True,
                         timeout=90, env=script_env(), cwd=ROOT)
    assert res.returncode == 0 and res.stdout == "left\n", res.stderr[-3000:]


_KILLED_WITH_A_POOL = """
import os, signal, sys
sys.path.insert(0, sys.argv[1])
from test_processes import _pid
from docgraph.runtime.processes import process_pool

with process_pool(2) as pool:
    print(sorted(set(pool.map(_pid, range(4)))) != [os.getpid()], flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_pool_s_launcher_killed_leaves_no_warning_and_no_semaphore(tmp_path):
    """``kill -9`` of a process whose pool is up: multiprocessing's resource tracker removes
    the pool's semaphores without printing its warning about leaked objects."""
    shm = Path("/dev/shm")
    before = set(shm.iterdir()) if shm.is_dir() else set()
    res = subprocess.run([sys.executable, "-c", _KILLED_WITH_A_POOL, str(Path(__file__).parent)],
                         capture_output=True, text=True, timeout=120,
                         env={**script_env(), "TMPDIR": str(tmp_path)}, cwd=ROOT)
    assert res.returncode == -signal.SIGKILL and res.stdout == "True\n"
    assert "leaked" not in res.stderr and res.stderr == "", res.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []
    if shm.is_dir():
        assert not [p for p in set(shm.iterdir()) - before if p.name.startswith("sem.")]


def test_records_of_a_killed_launcher_are_removed(tmp_path):
    from docgraph.runtime.processes import remove_stale_records

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = tmp_path / f"docgraph-spawn-{int(dead.stdout)}-abcd1234"
    older = tmp_path / "docgraph-spawn-k2j4h5g6"
    live = tmp_path / f"docgraph-spawn-{os.getpid()}-zzzz9999"
    for path in (stale, older, live):
        path.mkdir()
        (path / "0.json").write_text("{}")
    assert sorted(remove_stale_records(tmp_path)) == sorted([stale, older])
    assert [p.name for p in tmp_path.iterdir()] == [live.name]


def _write_threads(out: str) -> None:
    import torch
    import torch.distributed as dist

    Path(out, f"{dist.get_rank()}.txt").write_text(str(torch.get_num_threads()))


def test_training_processes_run_with_the_threads_they_are_given(tmp_path, monkeypatch):
    """Class: thread counts in worker processes, read inside real spawned training processes
    with ``OMP_NUM_THREADS`` unset (the user's case: torch would take every core)."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    spawn(_write_threads, 2, str(tmp_path), threads=1, name="training process")
    assert [Path(tmp_path, f"{r}.txt").read_text() for r in (0, 1)] == ["1", "1"]


def _threads(_: int = 0) -> int:
    import torch

    return torch.get_num_threads()


def test_tagging_pool_processes_run_with_one_thread(model_dir, monkeypatch):
    """Class: thread counts in worker processes, read inside a real tagging pool process
    (its initializer as the tagging pipeline gives it) with ``OMP_NUM_THREADS`` unset."""
    from docgraph.tagging.pipeline import _load_worker

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    with process_pool(1) as pool:
        untouched = pool.submit(_threads).result()
    with process_pool(1, _load_worker, (str(model_dir), None, 1)) as pool:
        counts = set(pool.map(_threads, range(2)))
    assert counts == {1}
    assert untouched > 1  # what a pool process would run with, left to torch's default
