"""Faults during two-process training on the sample corpus: do runs end as they say, and do
resumes give the tensors of an uninterrupted run?

A tiny GCDoc (hidden 16, no pretrained vectors, ``--epochs E``) is trained by
``scripts/train.py`` in two processes (DDP over gloo), first once without a fault (the
reference), then in trials, shuffled:

* ``plain``: a run left alone: exit status 0 and the reference's tensors (the count of
  two-process runs that all exit 0);
* ``kill9``: ``kill -9`` of the launcher or of one training process, chosen at random, at a
  random moment of a random phase of the run;
* ``kill9-save``: ``kill -9`` of training process 0 while it writes a checkpoint (the first
  temporary ``.last.pt.*.tmp`` or ``.model.pt.*.tmp`` seen in the run directory;
  ``caught_mid_save`` says whether one was);
* ``sigint``: Ctrl-C (SIGINT to the whole process group, as a terminal sends it) at a random
  moment of a random phase;
* ``sigterm``: SIGTERM to the launcher at a random moment of a random phase.

The phases, told by what the run has done (not by the clock: the machine's load varies):
``starting`` (0-3 s after both training processes exist, while they import torch),
``training`` (0-3 s after ``train.log`` says the model is built), ``checkpointed`` (0-2 s
after the first ``last.pt``).

Each fault is checked for its exit status and message (a killed process named with SIGKILL;
130 and ``interrupted``, 143 and ``stopped by SIGTERM``; never a traceback; status 0 only for
a run that had written ``metrics.json`` before the fault, whose teardown it hit), for
processes left running 10 s after the launcher ended, and the run is then finished:
``--resume`` when it left a ``last.pt``, else the first command again. The finished run must
exit 0, hold no temporary file, log every epoch once in ``train_log.jsonl``, and have the
reference's tensors (every tensor of ``model.pt``, and of the model and optimizer of
``last.pt``, bitwise).

    python benchmarks/fault_injection.py --work-dir /tmp/faults --out results.json

Damaged files and killed tagging commands are the trials of ``benchmarks/file_faults.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("plain", "kill9", "kill9-save", "sigint", "sigterm")
TINY_FLAGS = ["--dataset", "sample", "--hidden", "16", "--char-hidden", "8", "--sent-dim", "16",
              "--uncertainty-hidden", "8", "--samples", "2", "--embeddings", "none",
              "--device", "cpu", "--processes", "2", "--threads", "1", "--optimizer", "adam",
              "--lr", "0.03", "--batch-tokens", "1000", "--seed", "1", "--quiet"]


def children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (Linux ``/proc``), multiprocessing's resource
    tracker left out, oldest first."""
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []
    return sorted(c for c in found if alive(c) and b"resource_tracker" not in _cmdline(c))


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return b""


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def still_running(pids: list[int], seconds: float) -> list[int]:
    """The processes of ``pids`` still running ``seconds`` from now (checked until then)."""
    deadline = time.monotonic() + seconds
    while True:
        running = [p for p in pids if alive(p)]
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.1)


class Run:
    """One ``train.py`` process in a session of its own, its output in files."""

    def __init__(self, args: list[str], log_dir: Path, name: str) -> None:
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore",
                   PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                              if p))
        env.pop("DOCGRAPH_DATA_DIR", None)
        self.stdout_path = log_dir / f"{name}.stdout"
        self.stderr_path = log_dir / f"{name}.stderr"
        self.start = time.monotonic()
        with open(self.stdout_path, "w") as out, open(self.stderr_path, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(ROOT / "scripts" / "train.py"), *args], stdout=out,
                stderr=err, env=env, cwd=ROOT, start_new_session=True)
        self.workers: list[int] = []

    def poll_workers(self) -> list[int]:
        """The training processes seen so far (kept once seen)."""
        if len(self.workers) < 2:
            self.workers = children(self.proc.pid) or self.workers
        return self.workers

    def wait(self, timeout: float) -> dict[str, Any]:
        """Wait for the end; exit status, seconds, output, processes left 10 s later."""
        timed_out = False
        while (code := self.proc.poll()) is None:
            self.poll_workers()
            if time.monotonic() - self.start > timeout:
                os.killpg(self.proc.pid, signal.SIGKILL)
                code, timed_out = self.proc.wait(), True
            time.sleep(0.2)
        seconds = time.monotonic() - self.start
        left = still_running([w for w in self.workers if w != self.proc.pid], 10.0)
        for pid in left:  # none expected; never leave one behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return {"status": code, "seconds": round(seconds, 1), "timed_out": timed_out,
                "stdout": self.stdout_path.read_text(errors="replace").strip(),
                "stderr": self.stderr_path.read_text(errors="replace").strip(),
                "left_running": left}


def tensors(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """The parts ``keys`` of a saved checkpoint."""
    import torch

    saved = torch.load(path, map_location="cpu", weights_only=True)
    return {key: saved[key] for key in keys}


def equal(a: Any, b: Any) -> bool:
    """Whether two nested structures of tensors and plain values are bitwise equal."""
    import torch

    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                and a.dtype == b.dtype and torch.equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    return a == b


def finished_checks(run_dir: Path, reference: Path, epochs: int) -> dict[str, Any]:
    """What a finished run holds against the reference run."""
    temporaries = sorted(p.name for p in run_dir.glob(".*.tmp"))
    log_file = run_dir / "train_log.jsonl"
    logged = ([json.loads(line)["epoch"] for line in log_file.read_text().splitlines() if line]
              if log_file.is_file() else None)
    same_model = same_last = False
    if (run_dir / "model.pt").is_file() and (run_dir / "last.pt").is_file():
        same_model = equal(tensors(run_dir / "model.pt", ("model",)),
                           tensors(reference / "model.pt", ("model",)))
        same_last = equal(tensors(run_dir / "last.pt", ("model", "optimizer")),
                          tensors(reference / "last.pt", ("model", "optimizer")))
    return {"temporary_files": temporaries, "logged_epochs": logged,
            "epochs_logged_once": logged == list(range(1, epochs + 1)),
            "model_equal": same_model, "last_equal": same_last}


def fault_checks(kind: str, target: str | None, result: dict[str, Any], finished: bool
                 ) -> dict[str, Any]:
    """Whether a faulted run ended as it should have: status, message, no traceback.
    ``finished``: the run had written ``metrics.json`` before the fault (its teardown may
    then end it with status 0)."""
    status, stderr = result["status"], result["stderr"]
    if status == 0:
        expected = finished  # else the fault was lost
    elif kind == "sigint":
        expected = status == 130 and stderr.lstrip().startswith("interrupted")
    elif kind == "sigterm":
        expected = status == 143 and stderr.lstrip().startswith("stopped by SIGTERM")
    elif target == "launcher":
        expected = status == -signal.SIGKILL
    else:
        expected = status == 1 and "killed by SIGKILL" in stderr
    return {"status_and_message_as_expected": expected,
            "traceback": "Traceback" in stderr,
            "no_process_left": not result["left_running"]}


PHASES = ("starting", "training", "checkpointed")


def phase_reached(phase: str, run: Run, run_dir: Path) -> bool:
    """Whether the run has reached ``phase`` (see the module docstring)."""
    if phase == "starting":
        return len(run.workers) >= 2
    if phase == "training":
        log_file = run_dir / "train.log"
        return log_file.is_file() and "building the model" in log_file.read_text(errors="replace")
    return (run_dir / "last.pt").is_file()


def run_trial(kind: str, index: int, work: Path, reference: Path, epochs: int,
              rng: random.Random, timeout: float) -> dict[str, Any]:
    """One trial (see the module docstring)."""
    run_dir = work / f"{kind}-{index}"
    command = [*TINY_FLAGS, "--epochs", str(epochs), "--output-dir", str(run_dir)]
    run = Run(command, work / "logs", f"{kind}-{index}")
    record: dict[str, Any] = {"kind": kind, "index": index}
    target = None
    if kind != "plain":
        phase = rng.choice(PHASES)
        delay = rng.uniform(0, 2 if phase == "checkpointed" else 3)
        at = None
        caught = False
        while run.proc.poll() is None:
            run.poll_workers()
            if kind == "kill9-save":
                saving = (any(run_dir.glob(".last.pt.*.tmp"))
                          or any(run_dir.glob(".model.pt.*.tmp")))
                if saving and len(run.workers) >= 2:
                    caught = True
                    break
                if (run_dir / "metrics.json").is_file():
                    break
                time.sleep(0.002)
            else:
                if at is None and phase_reached(phase, run, run_dir):
                    at = time.monotonic() + delay
                if at is not None and time.monotonic() >= at:
                    break
                time.sleep(0.02)
        if kind != "kill9-save":
            record["phase"], record["delay_seconds"] = phase, round(delay, 2)
        record["fault_at_seconds"] = round(time.monotonic() - run.start, 2)
        record["finished_before_fault"] = (run.proc.poll() is not None
                                           or (run_dir / "metrics.json").is_file())
        if run.proc.poll() is None:
            if kind == "sigint":
                os.killpg(run.proc.pid, signal.SIGINT)
            elif kind == "sigterm":
                run.proc.send_signal(signal.SIGTERM)
            else:
                workers = run.poll_workers()
                choices = ["launcher", "process 0", "process 1"][:1 + len(workers)]
                target = "process 0" if kind == "kill9-save" and workers else rng.choice(choices)
                pid = run.proc.pid if target == "launcher" else workers[int(target[-1])]
                os.kill(pid, signal.SIGKILL)
                record["target"] = target
        if kind == "kill9-save":
            record["caught_mid_save"] = caught
    result = run.wait(timeout)
    record["first"] = {k: result[k] for k in ("status", "seconds", "timed_out", "left_running")}
    record["first"]["stderr_tail"] = result["stderr"][-600:]
    if kind == "plain":
        record["checks"] = {"status_and_message_as_expected": result["status"] == 0,
                            "traceback": "Traceback" in result["stderr"],
                            "no_process_left": not result["left_running"]}
    else:
        record["checks"] = fault_checks(kind, target, result, record["finished_before_fault"])
        if result["status"] != 0:
            has_checkpoint = (run_dir / "last.pt").is_file()
            again = (["--resume", str(run_dir), "--quiet"] if has_checkpoint else command)
            record["then"] = "resume" if has_checkpoint else "rerun"
            second = Run(again, work / "logs", f"{kind}-{index}-then").wait(timeout)
            record["second"] = {k: second[k] for k in ("status", "seconds", "left_running")}
            record["second"]["stderr_tail"] = second["stderr"][-600:]
            record["checks"]["finish_status_0"] = second["status"] == 0
    record["checks"].update(finished_checks(run_dir, reference, epochs))
    checks = record["checks"]
    record["ok"] = (checks["status_and_message_as_expected"] and not checks["traceback"]
                    and checks["no_process_left"] and checks.get("finish_status_0", True)
                    and not checks["temporary_files"] and checks["epochs_logged_once"]
                    and checks["model_equal"] and checks["last_equal"])
    return record


def main() -> None:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--work-dir", required=True, help="where the runs go (emptied first)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--plain", type=int, default=10, help="runs left alone")
    p.add_argument("--kill9", type=int, default=6)
    p.add_argument("--kill9-save", type=int, default=2)
    p.add_argument("--sigint", type=int, default=3)
    p.add_argument("--sigterm", type=int, default=3)
    p.add_argument("--seed", type=int, default=0, help="seed of the fault moments and order")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds a run may take")
    p.add_argument("--out", default=None, help="JSON file for the results")
    args = p.parse_args()
    import shutil

    from docgraph.runtime.atomic import atomic_write_json
    from docgraph.runtime.machine import cpu_model

    # Ctrl-C as a terminal sends it: a shell's background job (``&``) starts with SIGINT
    # ignored, and the runs would inherit that
    signal.signal(signal.SIGINT, signal.default_int_handler)
    work = Path(args.work_dir)
    if work.exists():
        shutil.rmtree(work)
    (work / "logs").mkdir(parents=True)
    rng = random.Random(args.seed)
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    reference = work / "reference"
    ref = Run([*TINY_FLAGS, "--epochs", str(args.epochs), "--output-dir", str(reference)],
              work / "logs", "reference").wait(args.timeout)
    if ref["status"] != 0:
        raise SystemExit(f"the reference run failed (status {ref['status']}):\n{ref['stderr']}")
    span = ref["seconds"]
    print(f"reference run: {span:.1f} s, status 0", flush=True)
    plan = [kind for kind in KINDS for _ in range(getattr(args, kind.replace("-", "_")))]
    rng.shuffle(plan)
    records = []
    counts: dict[str, int] = {}
    for kind in plan:
        counts[kind] = counts.get(kind, 0) + 1
        record = run_trial(kind, counts[kind], work, reference, args.epochs, rng,
                           args.timeout)
        records.append(record)
        extra = "".join(f" {k}={record[k]}" for k in ("phase", "target", "caught_mid_save",
                                                       "then")
                        if k in record)
        print(f"{kind} {counts[kind]}: fault at {record.get('fault_at_seconds', '-')} s, "
              f"status {record['first']['status']}{extra}"
              f"{', then ' + str(record['second']['status']) if 'second' in record else ''}: "
              f"{'ok' if record['ok'] else 'FAILED ' + json.dumps(record['checks'])}",
              flush=True)
    two_process = [r for r in records if r["kind"] == "plain"]
    finished = [r for r in records if r["first"]["status"] == 0]
    summary = {
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "started": started, "ended": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "cpu": cpu_model(), "cores": os.cpu_count(), "epochs": args.epochs,
        "reference_seconds": span,
        "trials": len(records), "trials_ok": sum(r["ok"] for r in records),
        "per_kind": {kind: {"trials": sum(r["kind"] == kind for r in records),
                            "ok": sum(r["ok"] for r in records if r["kind"] == kind)}
                     for kind in KINDS},
        # every run that went to its end without a fault (the reference and the plain runs,
        # and faulted runs that finished before the fault), and the resumes/reruns
        "two_process_runs_to_the_end": 1 + len(finished) + sum("second" in r for r in records),
        "two_process_runs_to_the_end_exit_0": 1 + len(finished) + sum(
            r["second"]["status"] == 0 for r in records if "second" in r),
        "plain_runs_exit_0": sum(r["first"]["status"] == 0 for r in two_process),
        "records": records,
    }
    print(f"{summary['trials_ok']} of {summary['trials']} trials ok; two-process runs to the "
          f"end: {summary['two_process_runs_to_the_end_exit_0']} of "
          f"{summary['two_process_runs_to_the_end']} exited 0", flush=True)
    if args.out:
        atomic_write_json(args.out, summary)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
