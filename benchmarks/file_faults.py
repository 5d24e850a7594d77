"""Damaged files and killed tagging commands: is every trial refused with the file named, or
identical to an undamaged run, and does nothing stay behind?

A tiny model (sample corpus, ``fault_injection.TINY_FLAGS``, one process) is trained once, and
packed once (:func:`~docgraph.persistence.packing.pack_model_dir`, which writes a sealed
``manifest.json``). Then, in trials, each in a fresh ``$TMPDIR``:

* ``flip-<file>``: one bit flipped at a random offset of a copy of ``model.pt``,
  ``config.json`` or ``vocab.json`` of the run, or of the packed model's ``manifest.json``;
  ``predict.py --model COPY`` must exit 2 with one line naming the damaged file, or write the
  undamaged model's output byte for byte;
* ``flip-last.pt``: the same for ``last.pt``: ``train.py --resume COPY --epochs 3`` must be
  refused naming ``last.pt``, or train to the weights of the undamaged resume;
* ``kill9-predict``: ``predict.py --output OUT`` killed with SIGKILL while it writes OUT's
  temporary file, then run again: OUT whole and equal to the reference, no temporary file;
* ``kill9-evaluate``: ``evaluate.py`` killed with SIGKILL at a random moment, then run again:
  its two files whole and equal to the reference's, no temporary file;
* ``dead-worker``: a tagging process of ``predict.py --processes 2`` killed with SIGKILL
  while the processes load the model or tag, or once tags are being written (which is when a
  process can die halfway through handing a result back): exit status 1, one line naming the
  process and the signal, OUT as it was, no process left.

After every trial ``$TMPDIR`` must be empty (torch's own compile-cache directory
``torchinductor_<user>``, which ``import torch._dynamo`` makes and reuses, aside).

    python benchmarks/file_faults.py --work-dir /tmp/file-faults --out results.json
"""

from __future__ import annotations

import argparse
import contextlib
import filecmp
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fault_injection import ROOT, TINY_FLAGS, _cmdline, alive, children

FLIPPED = ("model.pt", "config.json", "vocab.json", "manifest.json", "last.pt")
#: Sealed files whose ``"sha256"`` key gets a bit flipped (the manifest's in the packed copy).
SEALED = ("config.json", "vocab.json", "manifest.json")
KILLS = ("kill9-predict", "kill9-evaluate", "dead-worker", "kill9-predict-pid", "kill9-train")
#: Files damaged on purpose, one trial each: a vocabulary without its seal, one of 168 MB,
#: configurations with a value far beyond its bound.
DAMAGES = ("unsealed-vocab.json", "huge-vocab.json", "window-1e9", "hidden-1e9")
TAGGING_FLAGS = ["--device", "cpu", "--quiet"]


def script(name: str, *args: str, tmp: Path, timeout: float = 600,
           **popen: Any) -> subprocess.CompletedProcess | subprocess.Popen:
    """Run ``scripts/<name>.py`` with ``$TMPDIR`` at ``tmp``; a :class:`~subprocess.Popen`
    when ``popen`` asks for one (``wait=False``)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore", TMPDIR=str(tmp),
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                          if p))
    env.pop("DOCGRAPH_DATA_DIR", None)
    command = [sys.executable, str(ROOT / "scripts" / f"{name}.py"), *args]
    if popen.pop("wait", True) is False:
        return subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
    return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def leftovers(tmp: Path) -> list[str]:
    """What a trial left in its ``$TMPDIR`` (torch's compile cache included: docgraph keeps
    it in its own cache directory)."""
    return sorted(p.name for p in tmp.iterdir())


def temporaries(directory: Path) -> list[str]:
    """Temporary files of docgraph's atomic writes in ``directory``."""
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def flip(path: Path, rng: random.Random) -> tuple[int, int]:
    """Flip one random bit of ``path``; returns ``(offset, bit)``."""
    data = bytearray(path.read_bytes())
    offset, bit = rng.randrange(len(data)), rng.randrange(8)
    data[offset] ^= 1 << bit
    path.write_bytes(bytes(data))
    return offset, bit


def weights(path: Path) -> dict[str, Any]:
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)["model"]


def same_weights(a: Path, b: Path) -> bool:
    import torch

    wa, wb = weights(a), weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def one_line_naming(result: subprocess.CompletedProcess, name: str) -> bool:
    lines = result.stderr.strip().splitlines()
    return (result.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ")
            and name in lines[0] and "Traceback" not in result.stderr)


def flip_trial(name: str, index: int, work: Path, setup: dict[str, Path],
               rng: random.Random) -> dict[str, Any]:
    """One bit flipped in a copy of a model directory's file, then the model used."""
    source = setup["packed"] if name == "manifest.json" else setup["run"]
    trial, tmp = trial_dirs(work, f"flip-{name}-{index}")
    copy = trial / "model"
    shutil.copytree(source, copy)
    offset, bit = flip(copy / name, rng)
    record: dict[str, Any] = {"kind": f"flip-{name}", "offset": offset, "bit": bit}
    if name == "last.pt":
        result = script("train", "--resume", str(copy), "--epochs", "3", "--quiet", tmp=tmp)
        refused = one_line_naming(result, "last.pt")
        identical = (not refused and result.returncode == 0
                     and same_weights(copy / "model.pt", setup["resumed"] / "model.pt"))
    else:
        out = trial / "out.jsonl"
        result = script("predict", "--model", str(copy), str(setup["text"]), "--output",
                        str(out), *TAGGING_FLAGS, tmp=tmp)
        refused = one_line_naming(result, name)
        reference = setup["packed_out" if name == "manifest.json" else "run_out"]
        identical = (not refused and result.returncode == 0 and out.is_file()
                     and filecmp.cmp(out, reference, shallow=False))
    record.update(status=result.returncode, stderr=result.stderr.strip()[-500:],
                  refused=refused, identical=identical, tmpdir_left=leftovers(tmp))
    record["ok"] = (refused or identical) and not record["tmpdir_left"]
    return record


def key_flip_trial(name: str, index: int, work: Path, setup: dict[str, Path],
                   rng: random.Random) -> dict[str, Any]:
    """One bit flipped in the ``"sha256"`` key of a sealed file of a copy of the model (the
    seal is required: a key hit must be a refusal naming the file)."""
    source = setup["packed"] if name == "manifest.json" else setup["run"]
    trial, tmp = trial_dirs(work, f"key-{name}-{index}")
    copy = trial / "model"
    shutil.copytree(source, copy)
    data = bytearray((copy / name).read_bytes())
    start = data.rindex(b'"sha256"')
    offset, bit = start + rng.randrange(len(b'"sha256"')), rng.randrange(8)
    data[offset] ^= 1 << bit
    (copy / name).write_bytes(bytes(data))
    out = trial / "out.jsonl"
    result = script("predict", "--model", str(copy), str(setup["text"]), "--output", str(out),
                    *TAGGING_FLAGS, tmp=tmp)
    record: dict[str, Any] = {"kind": f"key-{name}", "offset": offset, "bit": bit,
                              "status": result.returncode,
                              "stderr": result.stderr.strip()[-500:],
                              "refused": one_line_naming(result, name),
                              "tmpdir_left": leftovers(tmp)}
    record["ok"] = record["refused"] and not record["tmpdir_left"]
    return record


def damage_trial(kind: str, work: Path, setup: dict[str, Path]) -> dict[str, Any]:
    """A file of a copy of the model damaged as ``kind`` says: refused at once (within 30 s,
    before the weights are read), one line naming the file (and the key and its bound)."""
    from docgraph.runtime.integrity import read_json_file, write_sealed_json

    trial, tmp = trial_dirs(work, kind)
    copy = trial / "model"
    shutil.copytree(setup["run"], copy)
    if kind == "unsealed-vocab.json":
        vocab = read_json_file(copy / "vocab.json")
        (copy / "vocab.json").write_text(json.dumps(vocab))
        name, words = "vocab.json", ("seal",)
    elif kind == "huge-vocab.json":
        with open(copy / "vocab.json", "r+b") as handle:
            handle.truncate(168 * 1000 * 1000)
        name, words = "vocab.json", ("168,000,000 bytes",)
    else:
        key = kind.split("-")[0]
        config = read_json_file(copy / "config.json")
        config["model"][key] = 10**9
        write_sealed_json(copy / "config.json", config)
        name, words = "config.json", (f"{key} = 1000000000", "<=")
    out = trial / "out.jsonl"
    start = time.monotonic()
    result = script("predict", "--model", str(copy), str(setup["text"]), "--output", str(out),
                    *TAGGING_FLAGS, tmp=tmp)
    seconds = time.monotonic() - start
    record: dict[str, Any] = {"kind": kind, "status": result.returncode, "seconds": seconds,
                              "stderr": result.stderr.strip()[-500:],
                              "refused": one_line_naming(result, name)
                              and all(w in result.stderr for w in words),
                              "tmpdir_left": leftovers(tmp)}
    record["ok"] = record["refused"] and seconds < 30 and not record["tmpdir_left"]
    return record


def kill_predict_pid_trial(index: int, work: Path, setup: dict[str, Path],
                           rng: random.Random) -> dict[str, Any]:
    """``kill -9`` of ``predict.py --processes 2`` alone (not its process group, as a user
    kills a process by its id) while it tags: its tagging processes end with it, no warning
    of leaked semaphores, no semaphore left; the same command again leaves nothing."""
    trial, tmp = trial_dirs(work, f"kill9-predict-pid-{index}")
    out = trial / "out.jsonl"
    args = ["--model", str(setup["run"]), str(setup["huge_text"]), "--output", str(out),
            "--processes", "2", *TAGGING_FLAGS]
    shm = Path("/dev/shm")
    semaphores = set(shm.glob("sem.*")) if shm.is_dir() else set()
    proc = script("predict", *args, tmp=tmp, wait=False)
    workers: list[int] = []

    def two_workers() -> bool:
        nonlocal workers
        workers = [c for c in children(proc.pid) if b"spawn" in _cmdline(c)]
        return len(workers) >= 2

    started = _wait_for(two_workers, 120)
    time.sleep(rng.uniform(0.5, 4.0))
    os.kill(proc.pid, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=120)  # the pipes close once every holder has gone
    left = [w for w in workers if _wait_alive(w, 10.0)]
    new_semaphores = sorted(p.name for p in (set(shm.glob("sem.*")) if shm.is_dir() else set())
                            - semaphores)
    again = script("predict", *args[:5], "--processes", "1", *TAGGING_FLAGS, tmp=tmp)
    record = {"kind": "kill9-predict-pid", "workers_seen": started,
              "stderr_of_the_killed": stderr.strip()[-500:], "left_running": left,
              "semaphores_left": new_semaphores, "then": again.returncode,
              "temporaries_after": temporaries(trial), "tmpdir_left": leftovers(tmp)}
    record["ok"] = (started and "leaked" not in stderr and "Traceback" not in stderr
                    and not left and not new_semaphores and again.returncode == 0
                    and not record["temporaries_after"] and not record["tmpdir_left"])
    return record


def kill_train_trial(index: int, work: Path, setup: dict[str, Path],
                     rng: random.Random) -> dict[str, Any]:
    """``kill -9`` of ``train.py --processes 2`` (the launcher alone, by its id) at a random
    moment of its first seconds, then a new run beside it: no traceback of a process whose
    launcher died, no record directory, no directory holding only ``.lock``, nothing in
    ``$TMPDIR``, no process left."""
    trial, tmp = trial_dirs(work, f"kill9-train-{index}")
    runs = trial / "runs"
    proc = script("train", *TINY_FLAGS, "--epochs", "1", "--output-dir", str(runs / "killed"),
                  tmp=tmp, wait=False)
    time.sleep(rng.uniform(0.5, 6.0))
    workers = [c for c in children(proc.pid) if b"spawn" in _cmdline(c)]
    os.kill(proc.pid, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=120)
    left = [w for w in workers if _wait_alive(w, 20.0)]
    killed_left = sorted(p.name for p in (runs / "killed").iterdir()) \
        if (runs / "killed").is_dir() else []
    again = script("train", *TINY_FLAGS, "--epochs", "1", "--output-dir", str(runs / "next"),
                   tmp=tmp)
    only_lock = [p.name for p in runs.iterdir()
                 if p.is_dir() and [q.name for q in p.iterdir()] == [".lock"]]
    record = {"kind": "kill9-train", "workers_seen": len(workers),
              "stderr_of_the_killed": stderr.strip()[-500:],
              "killed_dir_after_the_kill": killed_left, "left_running": left,
              "then": again.returncode, "then_stderr": again.stderr.strip()[-300:],
              "lock_only_dirs": only_lock, "tmpdir_left": leftovers(tmp)}
    record["ok"] = ("Traceback" not in stderr and "EOFError" not in stderr and not left
                    and again.returncode == 0 and "Traceback" not in again.stderr
                    and not only_lock and not record["tmpdir_left"])
    return record


def trial_dirs(work: Path, name: str) -> tuple[Path, Path]:
    """A trial's directory and its own empty ``$TMPDIR`` in it."""
    trial = work / "trials" / name
    tmp = trial / "tmp"
    tmp.mkdir(parents=True)
    return trial, tmp


def _wait_for(condition: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def kill_predict_trial(index: int, work: Path, setup: dict[str, Path],
                       rng: random.Random) -> dict[str, Any]:
    """``predict.py`` killed with SIGKILL while it writes its output, then run again."""
    trial, tmp = trial_dirs(work, f"kill9-predict-{index}")
    out = trial / "out.jsonl"
    args = ["--model", str(setup["run"]), str(setup["big_text"]), "--output", str(out),
            "--processes", "1", *TAGGING_FLAGS]
    proc = script("predict", *args, tmp=tmp, wait=False)
    caught = _wait_for(lambda: any(p.name.startswith(".out.jsonl.") for p in trial.iterdir()),
                       120)
    time.sleep(rng.uniform(0.0, 0.5))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    partial_left = temporaries(trial)
    again = script("predict", *args, tmp=tmp)
    record = {"kind": "kill9-predict", "caught_mid_write": caught,
              "partial_left_by_the_kill": partial_left, "then": again.returncode,
              "temporaries_after": temporaries(trial),
              "identical": out.is_file() and filecmp.cmp(out, setup["big_out"], shallow=False),
              "tmpdir_left": leftovers(tmp)}
    record["ok"] = (again.returncode == 0 and record["identical"]
                    and not record["temporaries_after"] and not record["tmpdir_left"])
    return record


def kill_evaluate_trial(index: int, work: Path, setup: dict[str, Path],
                        rng: random.Random) -> dict[str, Any]:
    """``evaluate.py`` killed with SIGKILL at a random moment, then run again."""
    trial, tmp = trial_dirs(work, f"kill9-evaluate-{index}")
    args = ["--model", str(setup["run"]), "--split", "test", "--output-dir", str(trial),
            "--processes", "1", *TAGGING_FLAGS]
    proc = script("evaluate", *args, tmp=tmp, wait=False)
    time.sleep(rng.uniform(2.0, setup["evaluate_seconds"]))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    again = script("evaluate", *args, tmp=tmp)
    names = ("test_metrics.json", "test_predictions.conll")
    identical = all((trial / n).is_file()
                    and filecmp.cmp(trial / n, setup["evaluation"] / n, shallow=False)
                    for n in names)
    record = {"kind": "kill9-evaluate", "then": again.returncode, "identical": identical,
              "temporaries_after": temporaries(trial), "tmpdir_left": leftovers(tmp)}
    record["ok"] = (again.returncode == 0 and identical and not record["temporaries_after"]
                    and not record["tmpdir_left"])
    return record


def dead_worker_trial(index: int, work: Path, setup: dict[str, Path],
                      rng: random.Random) -> dict[str, Any]:
    """A tagging process of ``predict.py --processes 2`` killed with SIGKILL."""
    trial, tmp = trial_dirs(work, f"dead-worker-{index}")
    out = trial / "out.jsonl"
    out.write_text("the output of an earlier run\n")
    proc = script("predict", "--model", str(setup["run"]), str(setup["huge_text"]), "--output",
                  str(out), "--processes", "2", *TAGGING_FLAGS, tmp=tmp, wait=False)
    workers: list[int] = []

    def two_workers() -> bool:
        nonlocal workers
        workers = [c for c in children(proc.pid) if b"spawn" in _cmdline(c)]
        return len(workers) >= 2

    started = _wait_for(two_workers, 120)
    # half the trials while the processes load the model, half once tags are being written
    if rng.random() < 0.5:
        time.sleep(rng.uniform(0.5, 3.0))
        moment = "loading or tagging"
    else:
        _wait_for(lambda: bool(temporaries(trial)), 120)
        time.sleep(rng.uniform(0.0, 2.0))
        moment = "writing"
    victim = rng.choice(workers) if workers else None
    running = proc.poll() is None
    if victim is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(victim, signal.SIGKILL)
    try:
        _, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
    left = [w for w in workers if w != victim and _wait_alive(w, 10.0)]
    lines = stderr.strip().splitlines()
    record = {"kind": "dead-worker", "workers_seen": started, "victim": victim,
              "moment": moment, "killed_while_running": running,
              "status": proc.returncode, "stderr": stderr.strip()[-500:],
              "output_kept": out.read_text() == "the output of an earlier run\n",
              "left_running": left, "tmpdir_left": leftovers(tmp),
              "temporaries_after": temporaries(trial)}
    named = (len(lines) == 1 and f"tagging process {victim} was killed by SIGKILL" in lines[0])
    record["ok"] = (started and running and proc.returncode == 1 and named
                    and record["output_kept"]
                    and not left and not record["tmpdir_left"])
    return record


def _wait_alive(pid: int, seconds: float) -> bool:
    """Whether ``pid`` is still running ``seconds`` from now."""
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pid)


def prepare(work: Path) -> dict[str, Path]:
    """The model, its packed copy, the texts and every reference output."""
    from docgraph.data.registry import load_dataset
    from docgraph.persistence.packing import pack_model_dir

    tmp = work / "setup-tmp"
    tmp.mkdir(parents=True)
    run = work / "model"
    flags = list(TINY_FLAGS)
    flags[flags.index("--processes") + 1] = "1"
    result = script("train", *flags, "--epochs", "2", "--output-dir", str(run), tmp=tmp)
    if result.returncode != 0:
        raise SystemExit(f"training the model failed:\n{result.stderr}")
    packed = work / "packed"
    pack_model_dir(run, packed)
    resumed = work / "resumed"
    shutil.copytree(run, resumed)
    if script("train", "--resume", str(resumed), "--epochs", "3", "--quiet",
              tmp=tmp).returncode != 0:
        raise SystemExit("the undamaged resume failed")
    docs = load_dataset("sample")["test"]
    paragraphs = [" ".join(" ".join(s.tokens) for s in d.sentences) for d in docs]
    text, big_text = work / "text.txt", work / "big.txt"
    text.write_text("\n\n".join(paragraphs) + "\n")
    big_text.write_text("\n\n".join(paragraphs * 40) + "\n")
    huge_text = work / "huge.txt"  # long enough that no dead-worker trial ends before its kill
    huge_text.write_text("\n\n".join(paragraphs * 400) + "\n")
    setup = {"run": run, "packed": packed, "resumed": resumed, "text": text,
             "big_text": big_text, "huge_text": huge_text}
    for key, model, source in (("run_out", run, text), ("packed_out", packed, text),
                               ("big_out", run, big_text)):
        setup[key] = work / f"{key}.jsonl"
        if script("predict", "--model", str(model), str(source), "--output", str(setup[key]),
                  "--processes", "1", *TAGGING_FLAGS, tmp=tmp).returncode != 0:
            raise SystemExit(f"the reference prediction {key} failed")
    setup["evaluation"] = work / "evaluation"
    start = time.monotonic()
    if script("evaluate", "--model", str(run), "--split", "test", "--output-dir",
              str(setup["evaluation"]), "--processes", "1", *TAGGING_FLAGS,
              tmp=tmp).returncode != 0:
        raise SystemExit("the reference evaluation failed")
    setup["evaluate_seconds"] = time.monotonic() - start  # type: ignore[assignment]
    return setup


def main() -> None:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--work-dir", required=True, help="where the trials go (emptied first)")
    p.add_argument("--flips", type=int, default=20, help="trials per damaged file")
    p.add_argument("--kills", type=int, default=5, help="trials of each kill")
    p.add_argument("--key-flips", type=int, default=5,
                   help="trials of a flipped bit in the seal's key, per sealed file")
    p.add_argument("--kinds", nargs="+", default=None,
                   choices=[f"flip-{n}" for n in FLIPPED] + [f"key-{n}" for n in SEALED]
                   + list(KILLS) + list(DAMAGES),
                   help="run only trials of these kinds (default: every kind)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="JSON file for the results")
    args = p.parse_args()
    from docgraph.runtime.atomic import atomic_write_json
    from docgraph.runtime.machine import cpu_model

    work = Path(args.work_dir)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    rng = random.Random(args.seed)
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    setup = prepare(work)
    plan = [("flip", name) for name in FLIPPED for _ in range(args.flips)]
    plan += [("key", name) for name in SEALED for _ in range(args.key_flips)]
    plan += [(kind, None) for kind in KILLS for _ in range(args.kills)]
    plan += [(kind, None) for kind in DAMAGES]
    if args.kinds:
        plan = [(kind, name) for kind, name in plan
                if (f"{kind}-{name}" if name else kind) in args.kinds]
    rng.shuffle(plan)
    counts: dict[str, int] = {}
    records = []
    trials = {"kill9-predict": kill_predict_trial, "kill9-evaluate": kill_evaluate_trial,
              "dead-worker": dead_worker_trial, "kill9-predict-pid": kill_predict_pid_trial,
              "kill9-train": kill_train_trial}
    for kind, name in plan:
        key = f"{kind}-{name}" if name else kind
        counts[key] = counts.get(key, 0) + 1
        if kind == "flip":
            record = flip_trial(name, counts[key], work, setup, rng)
        elif kind == "key":
            record = key_flip_trial(name, counts[key], work, setup, rng)
        elif kind in DAMAGES:
            record = damage_trial(kind, work, setup)
        else:
            record = trials[kind](counts[key], work, setup, rng)
        records.append(record)
        how = ("refused" if record.get("refused") else "identical" if record.get("identical")
               else "")
        print(f"{key} {counts[key]}: {how} {'ok' if record['ok'] else 'FAILED'}"
              + ("" if record["ok"] else f" {record}"), flush=True)
    kinds = sorted({r["kind"] for r in records})
    summary = {
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "started": started, "ended": time.strftime("%Y-%m-%dT%H:%M:%S"), "cpu": cpu_model(),
        "trials": len(records), "trials_ok": sum(r["ok"] for r in records),
        "tmpdir_files_left": sum(len(r["tmpdir_left"]) for r in records),
        "per_kind": {k: {"trials": sum(r["kind"] == k for r in records),
                         "ok": sum(r["ok"] for r in records if r["kind"] == k),
                         "refused": sum(bool(r.get("refused")) for r in records
                                        if r["kind"] == k),
                         "identical": sum(bool(r.get("identical")) for r in records
                                          if r["kind"] == k)} for k in kinds},
        "records": records,
    }
    print(f"{summary['trials_ok']} of {summary['trials']} trials ok; files left in $TMPDIR: "
          f"{summary['tmpdir_files_left']}", flush=True)
    if args.out:
        atomic_write_json(args.out, summary)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
