"""Load test of ``docgraph serve`` on loopback with wrk, side by side with ``predict.py``
offline on the same texts and with a naive server that tags one request at a time.

Texts come from the bundled sample corpus (invented names, no licence): ``sentence`` (one
sentence a request), ``paragraph`` (five sentences) and ``long`` (a document of about 1,500
tokens). For each kind and each number of concurrent clients, wrk (Debian's ``wrk``, one
connection per client, for ``--seconds``, stopping early at ``--max-requests``) sends
``POST /v1/entities`` bodies in turn; the record has requests/s, tokens/s (each text's tokens
as the server counts them), p50/p95/p99 latency, errors (sockets, timeouts, non-2xx) and
where the CPU went (cores used by the server's front process, each worker and wrk).

* ``predict.py`` offline: the same texts as one file (a paragraph per text), repeated to at
  least ``--offline-tokens`` tokens, ``--documents paragraphs``, ``--offline-processes``; its
  tagging seconds are its wall time less that of the same command on a one-sentence file.
* The naive server (``naive-server``): FastAPI calling ``Tagger.pipe`` on each request alone,
  behind a lock, in one process, as a user who wraps the tagger in a web framework does.
* The soak: ``docgraph serve`` under ``--soak-clients`` clients sending paragraphs for
  ``--soak-seconds``; the resident memory of the server and its workers every 5 s, and its
  growth from the first to the last fifth of the run.

    python benchmarks/serve_load.py run --out benchmarks/results/measurements/serve
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "docgraph" / "data" / "sample"
KINDS = ("sentence", "paragraph", "long")
CLIENTS = (1, 8, 32, 128)
_WRK_MARK = "WRKJSON "


# ----------------------------------------------------------------------------- texts
def _sentences(name: str) -> list[str]:
    from docgraph.data.conll import read_conll

    return [" ".join(s.tokens) for d in read_conll(SAMPLE / name) for s in d.sentences
            if len(s) >= 4]


def texts(kind: str, count: int) -> list[str]:
    """``count`` different texts of a kind, from the sample corpus's sentences."""
    pool = _sentences("train.txt") + _sentences("dev.txt") + _sentences("test.txt")
    if kind == "sentence":
        return pool[:count]
    if kind == "paragraph":
        return [" ".join(pool[5 * k:5 * k + 5]) for k in range(count)]
    out, start = [], 0
    for _ in range(count):
        words, end = 0, start
        while words < 1500:
            words += len(pool[end % len(pool)].split())
            end += 1
        out.append(" ".join(pool[k % len(pool)] for k in range(start, end)))
        start = end
    return out


# ----------------------------------------------------------------------------- wrk
def lua_script(bodies: Sequence[str], max_requests: int, threads: int) -> str:
    """A wrk script that posts ``bodies`` in turn (each thread from its own place), stops a
    thread after its share of ``max_requests`` answers and prints the summary as JSON."""
    quoted = ",\n".join(f"[==[{body}]==]" for body in bodies)
    cap = max(1, max_requests // threads)
    return f"""
local bodies = {{
{quoted}
}}
local headers = {{["Content-Type"] = "application/json"}}
local counter = 0
local answered = 0
local index = 0
setup = function(thread)
  thread:set("offset", index * 7919)
  index = index + 1
end
request = function()
  counter = counter + 1
  local k = ((counter + (offset or 0)) % #bodies) + 1
  return wrk.format("POST", "/v1/entities", headers, bodies[k])
end
response = function(status, headers, body)
  answered = answered + 1
  if answered >= {cap} then wrk.thread:stop() end
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{_WRK_MARK}{{"requests": %d, "duration_us": %d, "connect": %d, "read": %d, ' ..
    '"write": %d, "status": %d, "timeout": %d, "p50_us": %d, "p95_us": %d, ' ..
    '"p99_us": %d, "max_us": %d}}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max))
end
"""


def parse_wrk(output: str) -> dict[str, Any]:
    """The summary the script of :func:`lua_script` printed."""
    for line in output.splitlines():
        if line.startswith(_WRK_MARK):
            return json.loads(line[len(_WRK_MARK):])
    raise ValueError(f"no summary in wrk's output:\n{output[-2000:]}")


def load(url: str, bodies: Sequence[str], clients: int, seconds: float, max_requests: int,
         tokens_per_request: float, work: Path) -> dict[str, Any]:
    """One wrk run: ``clients`` connections for at most ``seconds`` and ``max_requests``."""
    threads = min(clients, 2)
    script = work / "load.lua"
    script.write_text(lua_script(bodies, max_requests, threads))
    command = ["wrk", "-t", str(threads), "-c", str(clients), "-d", f"{seconds:g}s",
               "--timeout", "120s", "-s", str(script), url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120)
    summary = parse_wrk(done.stdout)
    elapsed = summary["duration_us"] / 1e6
    errors = sum(summary[k] for k in ("connect", "read", "write", "status", "timeout"))
    good = summary["requests"] - summary["status"]
    # wrk runs for its whole duration: a run that met the cap idled after it, its rates are
    # lower bounds
    capped = summary["requests"] >= max(1, max_requests // threads) * threads
    return {"clients": clients, "requests": summary["requests"], "seconds": round(elapsed, 2),
            "capped": capped,
            "requests_per_s": round(summary["requests"] / elapsed, 2),
            "tokens_per_s": round(good * tokens_per_request / elapsed, 1),
            "p50_ms": summary["p50_us"] / 1e3, "p95_ms": summary["p95_us"] / 1e3,
            "p99_ms": summary["p99_us"] / 1e3, "max_ms": summary["max_us"] / 1e3,
            "errors": errors, "error_kinds": {k: summary[k] for k in
                                              ("connect", "read", "write", "status", "timeout")}}


# ----------------------------------------------------------------------------- servers
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, timeout: float = 5.0) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return answer.status
    except OSError:
        return 0


def _post(url: str, body: dict, timeout: float = 600.0) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.loads(answer.read())


def _process_tree(pid: int) -> list:
    """The process ``pid`` and its descendants (psutil processes; none once it ended)."""
    import psutil

    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


class _Process:
    """A server in a subprocess of its own session, ready when ``ready_path`` answers 200;
    stopped (SIGTERM, then SIGKILL of its session) on the way out."""

    def __init__(self, command: list[str], port: int, log: Path, ready_path: str) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        with open(log, "wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                            cwd=ROOT, start_new_session=True)
        deadline = time.monotonic() + 600
        while _get(self.url + ready_path) != 200:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{command[:4]} did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)

    def rss_mb(self) -> float:
        """Resident memory of the server and its descendants, MB."""
        import psutil

        total = 0
        for proc in _process_tree(self.process.pid):
            with contextlib.suppress(psutil.NoSuchProcess):
                total += proc.memory_info().rss
        return total / 2**20

    def stop(self) -> int | None:
        status = None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = self.process.wait(120)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        return status if status is not None else self.process.returncode

    def __enter__(self) -> _Process:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def docgraph_serve(model: str, workers: int, timeout: float, log: Path,
                   max_wait_ms: float | None = None,
                   balance_wait_ms: float | None = None, threads: int = 1) -> _Process:
    """``docgraph serve`` with its defaults but ``workers``, ``timeout``, ``threads`` per
    worker and, when given, ``max_wait_ms`` and ``balance_wait_ms``."""
    port = _free_port()
    options = [] if threads == 1 else ["--threads", str(threads)]
    options += [] if max_wait_ms is None else ["--max-wait-ms", str(max_wait_ms)]
    if balance_wait_ms is not None:
        options += ["--balance-wait-ms", str(balance_wait_ms)]
    return _Process([sys.executable, "-m", "docgraph", "serve", "--model", model, "--port",
                     str(port), "--workers", str(workers), "--timeout-s", str(timeout), *options],
                    port, log, "/ready")


def naive_serve(model: str, log: Path) -> _Process:
    """The naive server (:func:`naive_app`)."""
    port = _free_port()
    return _Process([sys.executable, str(ROOT / "benchmarks" / "serve_load.py"),
                     "naive-server", "--model", model, "--port", str(port)], port, log,
                    "/health")


def naive_app(model: str) -> Any:
    """An ASGI app around ``Tagger.pipe``: each request tagged alone, one at a time, records
    by the one serialiser; the same request and answer shapes as ``docgraph serve``'s."""
    import anyio
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from docgraph.tagging import entity_records
    from docgraph.tagging.tagger import Tagger

    tagger = Tagger.load(model, threads=1)
    lock = threading.Lock()

    def tag(contents: list) -> list[dict]:
        with lock:
            return [{"id": doc.doc, "tokens": sum(len(s.tokens) for s in doc.sentences),
                     "entities": entity_records(doc, scores=False)}
                    for doc in tagger.pipe(contents)]

    async def entities(request: Any) -> Response:
        body = json.loads(await request.body())
        contents = [body["text"]] if "text" in body else body["texts"]
        documents = await anyio.to_thread.run_sync(tag, contents)
        return Response(json.dumps({"model": model, "documents": documents}),
                        media_type="application/json")

    async def health(request: Any) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(routes=[Route("/v1/entities", entities, methods=["POST"]),
                             Route("/health", health)])


# ----------------------------------------------------------------------------- offline
def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()[-800:]}")
    return time.perf_counter() - start


def offline(model: str, pool: Sequence[str], tokens: Sequence[int], min_tokens: int,
            rounds: int, processes: int, work: Path) -> dict[str, Any]:
    """``predict.py --processes PROCESSES`` on the texts of ``pool`` repeated to
    ``min_tokens`` tokens: tokens/s of tagging (wall time less that of a one-sentence file),
    the median of ``rounds``."""
    repeat = max(1, -(-min_tokens // sum(tokens)))
    path, probe = work / "offline.txt", work / "probe.txt"
    path.write_text("\n\n".join(list(pool) * repeat) + "\n", encoding="utf-8")
    probe.write_text("John lives in Paris .\n", encoding="utf-8")
    total = sum(tokens) * repeat

    def command(file: Path) -> list[str]:
        return [sys.executable, str(ROOT / "scripts" / "predict.py"), "--model", model,
                str(file), "--documents", "paragraphs", "--quiet", "--processes",
                str(processes), "--output", str(work / "offline.jsonl")]

    seconds = []
    for _ in range(rounds):
        startup = _wall(command(probe))
        seconds.append(max(_wall(command(path)) - startup, 1e-9))
    return {"tokens": total, "tag_seconds": [round(s, 2) for s in seconds],
            "tokens_per_s": round(total / statistics.median(seconds), 1)}


# ----------------------------------------------------------------------------- the run
def _machine() -> dict[str, Any]:
    from docgraph.runtime.machine import cpu_model

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    return {"date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M"),
            "commit": commit, "cpu": cpu_model(), "cores": os.cpu_count(),
            "python": platform.python_version(), "load_average": os.getloadavg()}


def _cpu_seconds(server: _Process) -> dict[int, float]:
    """CPU seconds so far of the server's process and of each of its descendants, by pid."""
    import psutil

    found = {}
    for process in _process_tree(server.process.pid):
        with contextlib.suppress(psutil.NoSuchProcess):
            times = process.cpu_times()
            found[process.pid] = times.user + times.system
    return found


def _children_cpu() -> float:
    """CPU seconds of this process's waited-for children (wrk, once a run has ended)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pass_counts(metrics: str) -> tuple[float, float] | None:
    """The passes and their documents so far, from ``GET /metrics``'s text (``None`` when it
    has no ``docgraph_batch_documents`` histogram)."""
    found = {}
    for line in metrics.splitlines():
        name, _, value = line.partition(" ")
        if name in ("docgraph_batch_documents_count", "docgraph_batch_documents_sum"):
            found[name] = float(value)
    if len(found) < 2:
        return None
    return found["docgraph_batch_documents_count"], found["docgraph_batch_documents_sum"]


def _passes_so_far(url: str) -> tuple[float, float] | None:
    try:
        with urllib.request.urlopen(url + "/metrics", timeout=5.0) as answer:
            return pass_counts(answer.read().decode())
    except OSError:
        return None


def _server_rows(url: str, kinds: dict[str, tuple[list[str], list[int]]],
                 clients: Sequence[int], seconds: float, max_requests: int, work: Path,
                 label: str, server: _Process | None = None) -> list[dict[str, Any]]:
    """One load run per kind and number of clients; with ``server``, where the CPU went
    during each: cores used by its front process, by each worker and by wrk; and, where the
    server has ``/metrics``, its passes during each and their mean documents."""
    rows = []
    for kind, (pool, tokens) in kinds.items():
        bodies = [json.dumps({"text": text}) for text in pool]
        for count in clients:
            before = _cpu_seconds(server) if server else {}
            passes_before = _passes_so_far(url) if server else None
            wrk_before, start = _children_cpu(), time.monotonic()
            row = {"server": label, "kind": kind,
                   **load(url, bodies, count, seconds, max_requests,
                          statistics.fmean(tokens), work)}
            if server:
                wall, after = time.monotonic() - start, _cpu_seconds(server)
                used = {pid: (t - before.get(pid, 0.0)) / wall for pid, t in after.items()}
                front = used.pop(server.process.pid, 0.0)
                row["cpu_cores"] = {"front": round(front, 3),
                                    "workers": [round(c, 3) for c in used.values()],
                                    "load_generator": round((_children_cpu() - wrk_before)
                                                            / wall, 3)}
                passes_after = _passes_so_far(url)
                if passes_before and passes_after and passes_after[0] > passes_before[0]:
                    count = passes_after[0] - passes_before[0]
                    row["passes"] = {"count": int(count), "mean_documents": round(
                        (passes_after[1] - passes_before[1]) / count, 2)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The whole study (see the module docstring); the record, also written to ``--out``."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {"machine": _machine(), "model": args.model,
                              "workers": args.workers, "threads": args.threads,
                              "timeout_s": args.timeout,
                              "max_wait_ms": args.max_wait_ms,
                              "balance_wait_ms": args.balance_wait_ms,
                              "seconds": args.seconds,
                              "max_requests": args.max_requests, "clients": args.clients,
                              "note": args.note}
    counts = {"sentence": 200, "paragraph": 100, "long": 12}
    from docgraph.runtime.atomic import atomic_write_json

    def save() -> None:  # after each phase: a run cut short keeps what it measured
        record["targets"] = targets(record)
        atomic_write_json(out / "results.json", record)

    with tempfile.TemporaryDirectory(prefix="serve-load-") as tmp:
        work = Path(tmp)
        with docgraph_serve(args.model, args.workers, args.timeout, out / "server.log",
                            args.max_wait_ms, args.balance_wait_ms, args.threads) as server:
            kinds = {}
            for kind in args.kinds:
                pool = texts(kind, counts[kind])
                step = 1 if kind == "long" else 20
                kinds[kind] = (pool, [d["tokens"] for k in range(0, len(pool), step)
                                      for d in _post(server.url + "/v1/entities",
                                                     {"texts": pool[k:k + step]})["documents"]])
            record["tokens_per_text"] = {k: statistics.fmean(t) for k, (_, t) in kinds.items()}
            if "serve" in args.phases:
                record["serve"] = _server_rows(server.url, kinds, args.clients, args.seconds,
                                               args.max_requests, work, "docgraph serve",
                                               server)
                save()
            if args.soak_seconds:
                record["soak"] = soak(server, kinds["paragraph"], args.soak_clients,
                                      args.soak_seconds, work)
                save()
            record["serve_exit_status"] = server.stop()
        if "offline" in args.phases:
            record["offline"] = {kind: offline(args.model, pool, tokens, args.offline_tokens,
                                               args.rounds, args.offline_processes, work)
                                 for kind, (pool, tokens) in kinds.items()}
            print(json.dumps({"offline": record["offline"]}), flush=True)
            save()
        if "naive" in args.phases:
            with naive_serve(args.model, out / "naive-server.log") as naive:
                record["naive"] = _server_rows(naive.url, kinds, args.clients, args.seconds,
                                               args.max_requests, work, "naive")
    record["machine"]["load_average_after"] = os.getloadavg()
    save()
    return record


def soak(server: _Process, kind: tuple[list[str], list[int]], clients: int, seconds: float,
         work: Path) -> dict[str, Any]:
    """``clients`` clients for ``seconds`` while the server's memory is sampled every 5 s."""
    samples: list[tuple[float, float]] = []
    stop = threading.Event()
    start = time.monotonic()

    def sample() -> None:
        while not stop.is_set():
            samples.append((round(time.monotonic() - start, 1), round(server.rss_mb(), 1)))
            stop.wait(5.0)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    pool, tokens = kind
    try:
        row = load(server.url, [json.dumps({"text": t}) for t in pool], clients, seconds,
                   10**9, statistics.fmean(tokens), work)
    finally:
        stop.set()
        sampler.join()
    fifth = max(1, len(samples) // 5)
    first = statistics.fmean(m for _, m in samples[:fifth])
    last = statistics.fmean(m for _, m in samples[-fifth:])
    result = {**row, "rss_mb": samples, "rss_first_fifth_mb": round(first, 1),
              "rss_last_fifth_mb": round(last, 1), "rss_growth": round(last / first - 1, 4)}
    print(json.dumps({k: v for k, v in result.items() if k != "rss_mb"}), flush=True)
    return result


def targets(record: dict[str, Any]) -> dict[str, Any]:
    """The issue's targets against the record: met or not, with the measured figures."""
    found: dict[str, Any] = {}
    serve = {(r["kind"], r["clients"]): r for r in record.get("serve", [])}
    for kind, offline_row in record.get("offline", {}).items():
        row = serve.get((kind, 32))
        if row:
            share = row["tokens_per_s"] / offline_row["tokens_per_s"]
            found[f"{kind}_32_clients_over_offline"] = {"share": round(share, 3),
                                                        "target": 0.85, "met": share >= 0.85}
    row = serve.get(("sentence", 8))
    if row:
        found["sentence_8_clients_p99_ms"] = {"p99_ms": row["p99_ms"], "target": 300,
                                              "met": row["p99_ms"] <= 300}
    errors = sum(r["errors"] for r in record.get("serve", []))
    found["serve_errors"] = {"errors": errors, "target": 0, "met": errors == 0}
    if "soak" in record:
        growth = record["soak"]["rss_growth"]
        found["soak_rss_growth"] = {"growth": growth, "target": 0.05, "met": growth <= 0.05,
                                    "seconds": record["soak"]["seconds"]}
    return found


def markdown_table(record: dict[str, Any]) -> str:
    """The record as the table of ``docs/serve.md``: per kind and clients, docgraph serve
    beside the naive server, and predict.py offline per kind."""
    naive = {(r["kind"], r["clients"]): r for r in record.get("naive", [])}
    lines = ["| text | clients | serve req/s | serve tokens/s | p50 / p95 / p99 ms | errors "
             "| naive tokens/s | naive p99 ms | predict.py offline tokens/s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in record["serve"]:
        other = naive.get((row["kind"], row["clients"]))
        offline_row = record.get("offline", {}).get(row["kind"])
        naive_cells = (f"{other['tokens_per_s']:,.0f} | {other['p99_ms']:,.0f}" if other
                       else "- | -")
        offline_cell = f"{offline_row['tokens_per_s']:,.0f}" if offline_row else "-"
        lines.append(
            f"| {row['kind']} ({record['tokens_per_text'][row['kind']]:.0f} tokens) "
            f"| {row['clients']} | {row['requests_per_s']:.1f} | {row['tokens_per_s']:,.0f} "
            f"| {row['p50_ms']:,.0f} / {row['p95_ms']:,.0f} / {row['p99_ms']:,.0f} "
            f"| {row['errors']} | {naive_cells} | {offline_cell} |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- pass sizes
def pass_sizes(model: str, kind: str, sizes: Sequence[int], documents: int,
               rounds: int) -> dict[str, Any]:
    """One worker's tagging rate by the size of its pass, with nothing else in the way: in this
    process, one thread, the worker's own pass function (:func:`docgraph.serve.worker.tag_pass`)
    on ``size`` different texts of ``kind`` at a time, about ``documents`` documents per size and
    round; sizes alternate within each round. What a server can reach when its passes hold
    ``size`` documents: no HTTP, no queue, no wait."""
    from docgraph.serve.batcher import PassDocument
    from docgraph.serve.worker import tag_pass
    from docgraph.tagging.tagger import Tagger

    tagger = Tagger.load(model, threads=1)
    pool = texts(kind, max(documents, max(sizes)))
    tag_pass(tagger, [PassDocument("warm-up", pool[0])])
    rates: dict[int, list[float]] = {size: [] for size in sizes}
    for _ in range(rounds):
        for size in sizes:
            passes = max(1, documents // size)
            tokens, start = 0, time.perf_counter()
            for k in range(passes):
                batch = [PassDocument(f"d{j}", pool[(k * size + j) % len(pool)])
                         for j in range(size)]
                tokens += sum(count for _, count in tag_pass(tagger, batch))
            rates[size].append(tokens / (time.perf_counter() - start))
    return {"model": model, "kind": kind, "documents_per_size": documents, "rounds": rounds,
            "machine": _machine(),
            "tokens_per_s": {str(size): [round(r, 1) for r in rates[size]] for size in sizes},
            "median_tokens_per_s": {str(size): round(statistics.median(rates[size]), 1)
                                    for size in sizes}}


# ----------------------------------------------------------------------------- command line
def main(argv: Sequence[str] | None = None) -> int:
    """``serve_load.py run ...`` (the study), ``passes`` (one worker's rate by pass size),
    ``table`` or ``naive-server``."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    study = sub.add_parser("run", help="the whole study")
    study.add_argument("--model", default="conll03")
    study.add_argument("--workers", type=int, default=2)
    study.add_argument("--threads", type=int, default=1, help="torch threads per worker")
    study.add_argument("--timeout", type=float, default=120.0,
                       help="the server's --timeout-s (wrk waits 120 s)")
    study.add_argument("--max-wait-ms", type=float, default=None,
                       help="the server's --max-wait-ms (default: the server's own)")
    study.add_argument("--balance-wait-ms", type=float, default=None,
                       help="the server's --balance-wait-ms (default: the server's own)")
    study.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    study.add_argument("--clients", type=int, nargs="+", default=list(CLIENTS))
    study.add_argument("--seconds", type=float, default=15.0, help="per load run")
    study.add_argument("--max-requests", type=int, default=20_000, help="per load run")
    study.add_argument("--offline-tokens", type=int, default=60_000)
    study.add_argument("--rounds", type=int, default=3,
                       help="of predict.py offline (the median is its figure)")
    study.add_argument("--offline-processes", type=int, default=2,
                       help="predict.py's processes (as many as the server's workers)")
    study.add_argument("--soak-seconds", type=float, default=600.0)
    study.add_argument("--soak-clients", type=int, default=32)
    study.add_argument("--phases", nargs="+", choices=("serve", "offline", "naive"),
                       default=["serve", "offline", "naive"],
                       help="what to measure (the token counts always come from the server)")
    study.add_argument("--note", default="", help="what else ran on the machine")
    study.add_argument("--out", required=True, help="folder of results.json and the logs")
    table = sub.add_parser("table", help="a results.json as docs/serve.md's table")
    table.add_argument("results")
    sizes = sub.add_parser("passes", help="one worker's tokens/s by the size of its pass")
    sizes.add_argument("--model", default="conll03")
    sizes.add_argument("--kind", choices=KINDS, default="sentence")
    sizes.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 8, 16, 32, 64, 256])
    sizes.add_argument("--documents", type=int, default=512, help="per size and round")
    sizes.add_argument("--rounds", type=int, default=3)
    sizes.add_argument("--out", required=True, help="the JSON record")
    naive = sub.add_parser("naive-server", help="the one-request-at-a-time server")
    naive.add_argument("--model", default="conll03")
    naive.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    if args.command == "table":
        print(markdown_table(json.loads(Path(args.results).read_text())))
        return 0
    if args.command == "passes":
        from docgraph.runtime.atomic import atomic_write_json

        record = pass_sizes(args.model, args.kind, args.sizes, args.documents, args.rounds)
        atomic_write_json(args.out, record)
        print(json.dumps(record["median_tokens_per_s"]))
        return 0
    if args.command == "naive-server":
        import uvicorn

        uvicorn.run(naive_app(args.model), host="127.0.0.1", port=args.port,
                    access_log=False, log_level="warning")
        return 0
    run(args)
    return 0
