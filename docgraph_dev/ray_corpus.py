"""Tagging a corpus on Ray (``docgraph tag-corpus``) against ``predict.py`` on this machine
(the study behind ``benchmarks/ray_corpus.py``).

Generates a corpus of raw-text files (paragraphs of the sample corpus's sentences, drawn with a
fixed seed; kept in ``--work-dir``, deleted at the end) and runs, each in a fresh process as a
user would, with the same model:

* ``compare``: ``predict.py`` with 1 and 2 processes and ``tag-corpus`` with 1 and 2 actors
  (against a Ray head started here with ``ray start --head``, 3 CPUs, sampled with the run),
  on the same ``--compare-mb`` of text; tokens/s over the whole run (start-up
  included), and the engine's overhead at equal cores: ``1 - ray / predict``;
* ``large``: ``tag-corpus`` with 2 actors on ``--large-mb`` of text: the peak resident memory
  of each actor and its resident memory at each quarter of the run, all of it and its private
  part (flat memory: the last quarter no higher than the first plus a margin; an actor's RSS
  also holds the object store's pages it reads, shared), and the cost per million tokens:
  CPU-seconds of the whole process tree and wall seconds.

* ``--keep-dir DIR``: a ``large`` run that outlives one invocation, for a corpus that takes
  hours (the issue's 1 GB): the corpus is generated once into ``DIR/corpus`` (with a list of
  its documents), the output goes to ``DIR/out``, and each invocation tags what is missing and
  appends a segment (wall and CPU time, tokens, each actor's memory by quarter) to ``--out``.
  SIGTERM or Ctrl-C stops the job as ``tag-corpus`` stops (the outputs written are whole) and
  the segment is saved; the next invocation resumes. When every input is tagged, the output's
  document ids are checked against the corpus's: each once, none missing.

Memory and CPU come from sampling ``/proc`` (psutil) of the run's process tree and the Ray
head's every 0.2 s (CPU seconds counted from the run's start).

    python benchmarks/ray_corpus.py --work-dir /tmp/ray-corpus --compare-mb 0.5 --large-mb 4 \\
        --out benchmarks/results/measurements/ray/results.json
    python benchmarks/ray_corpus.py --keep-dir /work/corpus-1gb --large-mb 1000 --file-mb 2 \
        --out benchmarks/results/measurements/ray/results-1gb.json   # again to resume
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from docgraph.data.conll import read_conll
from docgraph.runtime.atomic import atomic_write_json

ROOT = Path(__file__).resolve().parents[1]


def make_corpus(folder: Path, megabytes: float, file_mb: float, seed: int = 0) -> int:
    """Files of about ``file_mb`` MB of paragraphs (3 to 8 sentences, blank lines between)
    until ``megabytes`` MB in all; the number of bytes written."""
    sentences = [" ".join(s.tokens) for split in ("train", "dev", "test")
                 for doc in read_conll(ROOT / "docgraph" / "data" / "sample" / f"{split}.txt")
                 for s in doc.sentences if len(s)]
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    total, index = 0, 0
    while total < megabytes * 1e6:
        paragraphs, size = [], 0
        while size < file_mb * 1e6 and total + size < megabytes * 1e6:
            paragraph = " ".join(rng.choice(sentences) for _ in range(rng.randint(3, 8)))
            paragraphs.append(paragraph)
            size += len(paragraph) + 2
        data = "\n\n".join(paragraphs) + "\n"
        (folder / f"part-{index:05d}.txt").write_text(data)
        total += len(data.encode())
        index += 1
    return total


class TreeSampler:
    """Samples a process tree: RSS of each process over time, the part of it that is shared
    (file and shared-memory pages: a Ray worker's mapped object store among them), CPU seconds
    of each."""

    def __init__(self, pids: list[int], interval: float = 0.2) -> None:
        self.roots = [psutil.Process(pid) for pid in pids]
        self.interval = interval
        self.baseline: dict[int, float] = {}  # CPU seconds of processes there before the run
        for process in self._tree():
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            self.baseline[process.pid] = times.user + times.system
        self.rss: dict[int, list[tuple[float, int]]] = {}
        self.shared: dict[int, list[tuple[float, int]]] = {}
        self.names: dict[int, str] = {}
        self.cpu: dict[int, float] = {}
        self.peak_tree = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.start = time.monotonic()

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _tree(self) -> list:
        processes = []
        for root in self.roots:
            try:
                processes += [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
        return processes

    def cpu_seconds(self) -> float:
        """CPU seconds the tree spent during the run."""
        return sum(t - self.baseline.get(pid, 0.0) for pid, t in self.cpu.items())

    def _run(self) -> None:
        while not self._stop.is_set():
            processes = self._tree()
            if not processes:
                break
            tree = 0
            now = time.monotonic() - self.start
            for process in processes:
                try:
                    with process.oneshot():
                        memory = process.memory_info()
                        times = process.cpu_times()
                        name = " ".join(process.cmdline()[:1]) or process.name()
                except psutil.Error:
                    continue
                tree += memory.rss
                self.rss.setdefault(process.pid, []).append((now, memory.rss))
                self.shared.setdefault(process.pid, []).append((now, memory.shared))
                self.names[process.pid] = name
                self.cpu[process.pid] = max(self.cpu.get(process.pid, 0.0),
                                            times.user + times.system)
            self.peak_tree = max(self.peak_tree, tree)
            self._stop.wait(self.interval)


def _rss_quarters(series: list[tuple[float, int]], start: float, end: float) -> list[float]:
    """The largest value (MB) of ``series`` in each quarter of ``[start, end]``."""
    quarters = []
    for k in range(4):
        low, high = start + (end - start) * k / 4, start + (end - start) * (k + 1) / 4
        inside = [rss for t, rss in series if low <= t <= high]
        quarters.append(round(max(inside) / 2**20, 1) if inside else None)
    return quarters


ENV = dict(os.environ, PYTHONPATH=str(ROOT), RAY_USAGE_STATS_ENABLED="0",
           RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))


#: The run under way, which a SIGTERM to this script stops (:func:`_stop_run`).
_RUNNING: list[subprocess.Popen] = []
#: Set by a SIGTERM (a plain flag: a handler may interrupt itself, an Event's lock would hang).
_STOPPED = [False]


def _stop_run(signum: int, frame) -> None:
    """Stop the run under way as ``tag-corpus`` stops on SIGTERM; no further run starts."""
    _STOPPED[0] = True
    for process in _RUNNING:
        process.terminate()


def run(command: list[str], log: Path, also: list[int] = (), interval: float = 0.2) -> dict:
    """Run ``command``, sampled every ``interval`` seconds with the process trees ``also`` (a
    Ray head's); its wall time, CPU seconds, peaks and actor memory."""
    start = time.monotonic()
    with open(log, "a") as out:
        out.write(f"$ {' '.join(command)}\n")
        out.flush()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=ENV)
        _RUNNING.append(process)
        with TreeSampler([process.pid, *also], interval) as sampler:
            code = process.wait()
        _RUNNING.remove(process)
    seconds = time.monotonic() - start
    actors = {pid: series for pid, series in sampler.rss.items()
              if "MapWorker" in sampler.names[pid] or "_InputTagger" in sampler.names[pid]}
    result = {"command": command, "returncode": code, "seconds": round(seconds, 2),
              "cpu_seconds": round(sampler.cpu_seconds(), 2),
              "peak_tree_rss_mb": round(sampler.peak_tree / 2**20, 1),
              "load_average": os.getloadavg()}
    if actors:
        busy = [t for series in actors.values() for t, _ in series]
        result["actors"] = [_actor_memory(series, sampler.shared[pid], min(busy), max(busy))
                            for pid, series in actors.items()]
    return result


def _actor_memory(rss: list[tuple[float, int]], shared: list[tuple[float, int]], start: float,
                  end: float) -> dict:
    """An actor's resident memory over the run: all of it (RSS) and its private part (RSS less
    shared pages, the worker's own heap as Ray's memory guide measures it: the object store's
    pages an actor reads are shared with the store and every reader)."""
    private = [(t, r - s) for (t, r), (_, s) in zip(rss, shared)]
    return {"peak_rss_mb": round(max(r for _, r in rss) / 2**20, 1),
            "rss_mb_by_quarter": _rss_quarters(rss, start, end),
            "peak_private_mb": round(max(r for _, r in private) / 2**20, 1),
            "private_mb_by_quarter": _rss_quarters(private, start, end),
            "shared_mb_by_quarter": _rss_quarters(shared, start, end)}


def start_head(temp: Path, cpus: int, log: Path, attempts: int = 3,
               object_store_bytes: int | None = None) -> tuple[subprocess.Popen, str]:
    """A Ray head on 127.0.0.1 (``ray start --head --block``) in a session of its own, tried
    again when it does not start (on a loaded machine Ray's 30 s may not be enough); its object
    store of ``object_store_bytes`` (``None``: Ray's default)."""
    store = [] if object_store_bytes is None else ["--object-store-memory",
                                                   str(object_store_bytes)]
    for _ in range(attempts):
        port = 6400 + secrets.randbelow(500)
        with open(log, "a") as out:
            head = subprocess.Popen(
                [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
                 "--port", str(port), "--node-ip-address", "127.0.0.1", "--num-cpus", str(cpus),
                 "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir",
                 str(temp), *store], env=ENV, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        while head.poll() is None and "Ray runtime started" not in log.read_text():
            time.sleep(0.5)
        if head.poll() is None:
            return head, f"127.0.0.1:{port}"
    raise RuntimeError(f"no Ray head started; see {log}")


def stop_head(head: subprocess.Popen) -> None:
    """End every process of the head's session, by its id."""
    for process in psutil.process_iter():
        try:
            if os.getsid(process.pid) == head.pid:
                process.kill()
        except (OSError, psutil.Error):
            continue
    head.wait()


def run_ray(command: list[str], log: Path, head: subprocess.Popen, attempts: int = 3,
            interval: float = 0.2) -> dict:
    """:func:`run` for a tag-corpus command against the head, tried again when it fails (not
    when it was stopped); the failed attempts are kept in the result."""
    failed = []
    for _ in range(attempts):
        result = run(command, log, also=[head.pid], interval=interval)
        if result["returncode"] == 0 or _STOPPED[0]:
            break
        failed.append(result)
    result["failed_attempts"] = failed
    return result


def corpus_tokens(output: Path) -> int:
    """Tokens of a tag-corpus output (the tokens predict.py tags: the same reader)."""
    import pyarrow.parquet as pq

    return sum(pq.read_table(p, columns=["tokens"]).column(0).to_numpy().sum()
               for p in output.rglob("*.parquet")).item()


def keep_large(args: argparse.Namespace, tag: list[str], log: Path) -> int:
    """One segment of a ``large`` run kept in ``args.keep_dir`` (see the module docstring);
    0 once every input is tagged and every document is in the output once."""
    keep = args.keep_dir.absolute()
    corpus, output, listing = keep / "corpus", keep / "out", keep / "corpus.json"
    if not listing.is_file():
        shutil.rmtree(corpus, ignore_errors=True)
        size = make_corpus(corpus, args.large_mb, args.file_mb, seed=1)
        documents = {p.name: p.read_text().count("\n\n") + 1 for p in sorted(corpus.iterdir())}
        atomic_write_json(listing, {"bytes": size, "file_mb": args.file_mb, "documents": documents})
    expected = json.loads(listing.read_text())
    results = (json.loads(args.out.read_text()) if args.out.is_file() else
               {"machine": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                "model": args.model, "object_store_bytes": args.object_store_bytes,
                "corpus_bytes": expected["bytes"],
                "corpus_files": len(expected["documents"]),
                "corpus_documents": sum(expected["documents"].values()), "segments": []})
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    segment = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
               "load_average_at_start": os.getloadavg(),
               "inputs_done_before": len(list(output.glob("*.parquet")))}
    head_log = keep / "head.log"
    head_log.write_text("")  # start_head waits for the head's line in this log
    head, address = start_head(keep / "ray", 3, head_log,
                               object_store_bytes=args.object_store_bytes)
    try:
        segment.update(run_ray([*tag, "--address", address, str(corpus), "--output",
                                str(output), "--actors", "2"], log, head, interval=2.0))
    finally:
        stop_head(head)
        shutil.rmtree(keep / "ray", ignore_errors=True)
    segment["stopped_by_signal"] = _STOPPED[0]
    segment["inputs_done_after"] = len(list(output.glob("*.parquet")))
    segment["tokens_in_output"] = corpus_tokens(output) if segment["inputs_done_after"] else 0
    results["segments"].append(segment)
    if segment["inputs_done_after"] == len(expected["documents"]):
        results["check"] = _check_documents(output, expected["documents"])
        results["tokens"] = segment["tokens_in_output"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out, results)
    print(json.dumps({k: v for k, v in segment.items() if k != "command"}, indent=2))
    return 0 if results.get("check", {}).get("ok") else 1


def _check_documents(output: Path, documents: dict[str, int]) -> dict:
    """Each input's output rows against the number of documents it holds: every document
    once (no id twice in a file, as many rows as documents)."""
    import pyarrow.parquet as pq

    wrong = {}
    for name, count in documents.items():
        ids = pq.read_table(output / f"{name}.parquet", columns=["doc"]).column(0).to_pylist()
        if len(ids) != count or len(set(ids)) != count:
            wrong[name] = {"rows": len(ids), "distinct": len(set(ids)), "documents": count}
    return {"ok": not wrong, "inputs": len(documents),
            "documents": sum(documents.values()), "wrong": wrong}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--work-dir", type=Path)
    p.add_argument("--keep-dir", type=Path,
                   help="a large run kept here across invocations (no compare runs)")
    p.add_argument("--model", default="conll03")
    p.add_argument("--compare-mb", type=float, default=0.5)
    p.add_argument("--large-mb", type=float, default=0.0, help="0: skip the large run")
    p.add_argument("--file-mb", type=float, default=0.1, help="size of each input file")
    p.add_argument("--object-store-mb", type=float, default=None,
                   help="the Ray head's object store (default: Ray's, 30 percent of memory)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    args.object_store_bytes = (None if args.object_store_mb is None
                               else int(args.object_store_mb * 2**20))
    signal.signal(signal.SIGTERM, _stop_run)
    tag = [sys.executable, "-m", "docgraph.integrations.tag_corpus", "--model", args.model,
           "--documents", "paragraphs", "--quiet"]
    if args.keep_dir is not None:
        if not args.large_mb:
            p.error("--keep-dir needs --large-mb")
        args.keep_dir.mkdir(parents=True, exist_ok=True)
        # each sentence decoded alone, whatever the model's default: a kept job's segments
        # decode alike (its first ones ran before conll03 decoded with label consistency)
        return keep_large(args, [*tag, "--no-consistency"], args.out.with_suffix(".log"))
    if args.work_dir is None:
        p.error("--work-dir is needed (or --keep-dir)")
    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log = args.out.with_suffix(".log")
    log.write_text("")
    predict = [sys.executable, str(ROOT / "scripts" / "predict.py"), "--model", args.model,
               "--documents", "paragraphs", "--format", "jsonl"]
    # 3 CPUs: 2 actors and the reading
    head, address = start_head(work / "ray", 3, log, object_store_bytes=args.object_store_bytes)
    tag = [*tag, "--address", address]
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                     "machine": platform.processor() or platform.machine(),
                     "cores": os.cpu_count(), "model": args.model,
                     "object_store_bytes": args.object_store_bytes, "runs": {}}
    args.out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:  # after every run: an interrupted benchmark keeps what it measured
        atomic_write_json(args.out, results)

    try:
        corpus = work / "compare"
        results["compare_bytes"] = make_corpus(corpus, args.compare_mb, args.file_mb)
        files = sorted(map(str, corpus.iterdir()))
        for n in (1, 2):
            results["runs"][f"predict-{n}"] = run(
                [*predict, *files, "--processes", str(n), "--output", str(work / f"p{n}.jsonl")],
                log)
            save()
            out = work / f"ray{n}"
            results["runs"][f"ray-{n}"] = run_ray([*tag, str(corpus), "--output", str(out),
                                                   "--actors", str(n)], log, head)
            results["compare_tokens"] = corpus_tokens(out)
            save()
        tokens = results["compare_tokens"]
        for r in results["runs"].values():
            r["tokens_per_s"] = round(tokens / r["seconds"], 1)
        for n in (1, 2):
            ray, plain = results["runs"][f"ray-{n}"], results["runs"][f"predict-{n}"]
            results[f"overhead_{n}"] = round(1 - ray["tokens_per_s"] / plain["tokens_per_s"], 4)
        if args.large_mb:
            large = work / "large"
            results["large_bytes"] = make_corpus(large, args.large_mb, args.file_mb, seed=1)
            out = work / "ray-large"
            r = run_ray([*tag, str(large), "--output", str(out), "--actors", "2"], log, head)
            shutil.rmtree(large)
            r["tokens"] = corpus_tokens(out)
            r["tokens_per_s"] = round(r["tokens"] / r["seconds"], 1)
            r["cpu_seconds_per_million_tokens"] = round(r["cpu_seconds"] / r["tokens"] * 1e6, 1)
            r["wall_seconds_per_million_tokens"] = round(r["seconds"] / r["tokens"] * 1e6, 1)
            results["runs"]["ray-2-large"] = r
        for name, r in results["runs"].items():
            if r["returncode"] != 0:
                print(f"{name} failed (exit {r['returncode']}); see {log}", file=sys.stderr)
    finally:
        stop_head(head)
        shutil.rmtree(work, ignore_errors=True)
    save()
    print(json.dumps({k: v for k, v in results.items() if k != "runs"}, indent=2))
    return 0
