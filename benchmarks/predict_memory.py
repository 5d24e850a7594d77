"""Peak memory and speed of ``scripts/predict.py`` as its input grows.

Generates deterministic English-like inputs of 10 KB, 100 KB, 1 MB and 10 MB from the sample
corpus (its sentences drawn at random with a fixed seed, detokenised: no space before
``, . ; : ! ? % )`` or after ``( $``), in two layouts -- ``line``: the whole input on one line,
``paragraphs``: paragraphs of 3 to 8 sentences separated by blank lines -- and runs
``scripts/predict.py`` on each, for each model, in a fresh process, as a user would
(``--device cpu``, automatic processes, JSON lines written to a file). Reports per run:

* ``peak_rss_mb``: the peak resident memory of the whole process tree (predict.py and its
  tagging processes), the sum of their RSS sampled from ``/proc`` every 50 ms or so (pages
  shared by processes, such as torch's libraries, counted once per process);
* ``peak_pss_mb``: the same for the proportional set size (shared pages counted once);
* ``peak_rss_process_mb``: the largest peak of any single process of the tree
  (``ru_maxrss`` of ``os.wait4``, exact);
* ``tokens``, ``seconds`` (wall, start-up included) and ``tokens_per_s``.

The check (:func:`check`): every run's ``peak_rss_mb`` stays under 2 GB, and memory grows at
most linearly with the input.

Without ``--model NAME=DIR`` it trains the two models on the sample corpus first (GCDoc with
the sample preset, and the BiLSTM-CRF with ``--baseline``; about a minute each on 2 cores)::

    python benchmarks/predict_memory.py --work-dir /tmp/predict-memory \\
        --out benchmarks/results/measurements/predict-memory/results.json

``--code DIR`` runs ``DIR/scripts/predict.py`` with ``DIR`` on ``PYTHONPATH`` (e.g. an
exported older commit, to compare); ``--sizes`` and ``--layouts`` choose the inputs.
``--probe-batches 2000 3000 4000 8000`` also measures one tagging process alone (peak RSS,
RSS after each group, tokens per CPU second) for each batch budget, and with oneDNN's default
primitive cache (:func:`probe_child`): what chose ``docgraph.tagging.pipeline.BATCH_TOKENS`` and
``ONEDNN_CACHE``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"10KB": 10_000, "100KB": 100_000, "1MB": 1_000_000, "10MB": 10_000_000}
LAYOUTS = ("line", "paragraphs")
LIMIT_MB = 2048
NOISE_MB = 32
NO_SPACE_BEFORE = frozenset(",.;:!?%)]}'") | {"'s", "n't", "''"}
NO_SPACE_AFTER = frozenset("([{$") | {"``"}


def corpus_sentences() -> list[list[str]]:
    """The token lists of every sentence of the bundled sample corpus."""
    from docgraph.data.registry import load_dataset

    splits = load_dataset("sample")
    return [list(s.tokens) for docs in splits.values() for d in docs for s in d.sentences]


def detokenize(tokens: list[str]) -> str:
    """Tokens joined as running text (no space before closing punctuation, none after an
    opening bracket or a currency sign)."""
    out: list[str] = []
    for i, token in enumerate(tokens):
        if i and token not in NO_SPACE_BEFORE and tokens[i - 1] not in NO_SPACE_AFTER:
            out.append(" ")
        out.append(token)
    return "".join(out)


def make_text(size: int, layout: str, sentences: list[list[str]], seed: int = 0) -> str:
    """At least ``size`` bytes of text: random corpus sentences (fixed ``seed``), on one line
    or in paragraphs of 3 to 8 sentences."""
    rng = random.Random(f"{seed}-{layout}")
    parts: list[str] = []
    length = 0
    while length < size:
        count = rng.randint(3, 8) if layout == "paragraphs" else 1
        paragraph = " ".join(detokenize(rng.choice(sentences)) for _ in range(count))
        separator = "\n\n" if layout == "paragraphs" else " "
        parts.append(paragraph)
        length += len(paragraph.encode()) + len(separator)
    separator = "\n\n" if layout == "paragraphs" else " "
    return separator.join(parts) + "\n"


def count_tokens(text: str) -> int:
    """Tokens of ``text`` as ``predict.py`` reads it (:mod:`docgraph.data.tokenize`)."""
    from docgraph.data.tokenize import text_to_sentence_spans

    return sum(len(s) for s in text_to_sentence_spans(text))


def _pss(pid: int) -> int:
    """Proportional set size of a process in bytes (``/proc/PID/smaps_rollup``; 0 if gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_memory(root: int) -> tuple[int, int]:
    """Resident and proportional bytes (RSS, PSS) of ``root`` and all its descendants, from
    ``/proc``. The RSS sum counts pages shared by several processes (the libraries of torch)
    once per process; the PSS sum counts them once."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/statm") as f:
                resident = int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parent = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(parent, []).append(int(entry))
        rss[int(entry)] = resident * page
    total_rss = total_pss = 0
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in rss:
            total_rss += rss[pid]
            total_pss += _pss(pid)
        todo.extend(children.get(pid, []))
    return total_rss, total_pss


def run_predict(command: list[str], env: dict[str, str]) -> dict:
    """Run one command; its wall time, exit status, peak tree RSS and PSS (polled), the
    largest single-process peak RSS (``wait4``) and the load average before it."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak_rss = peak_pss = 0
    done = threading.Event()

    def poll() -> None:
        nonlocal peak_rss, peak_pss
        while not done.is_set():
            rss, pss = tree_memory(proc.pid)
            peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
            time.sleep(0.05)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    done.set()
    poller.join()
    return {"returncode": proc.returncode, "seconds": round(seconds, 2),
            "peak_rss_mb": round(peak_rss / 2**20, 1), "peak_pss_mb": round(peak_pss / 2**20, 1),
            "peak_rss_process_mb": round(usage.ru_maxrss / 1024, 1),
            "load_before": round(load, 2), "stderr_tail": stderr.decode(errors="replace")[-500:]}


def train_models(work: Path) -> dict[str, Path]:
    """Train GCDoc and the BiLSTM-CRF on the sample corpus under ``work`` (kept if there)."""
    models = {"gcdoc": (work / "gcdoc", []), "bilstm-crf": (work / "bilstm-crf", ["--baseline"])}
    for name, (directory, flags) in models.items():
        if not (directory / "model.pt").is_file():
            print(f"training {name} into {directory}", flush=True)
            subprocess.run([sys.executable, str(ROOT / "scripts" / "train.py"), "--output-dir",
                            str(directory), "--quiet", *flags], check=True)
    return {name: directory for name, (directory, _) in models.items()}


def check(results: list[dict]) -> dict:
    """The two requirements on a list of runs: every peak under :data:`LIMIT_MB`, and growth
    at most linear -- from the second largest input ``b`` to the largest ``c``, the peak grows
    by no more than the growth from the smallest ``a`` to ``b`` extrapolated,
    ``(c - b) / (b - a) * max(0, peak(b) - peak(a))``, plus :data:`NOISE_MB`. Also the growth
    in MB of memory per MB of input from ``b`` to ``c`` of each model, setting and layout."""
    linear, growth = True, {}
    for model, setting in sorted({(r["model"], r["setting"]) for r in results}):
        for layout in sorted({r["layout"] for r in results}):
            runs = sorted((r for r in results if r["model"] == model
                           and r["setting"] == setting and r["layout"] == layout),
                          key=lambda r: r["bytes"])
            if len(runs) < 3:
                continue
            a, b, c = runs[0], runs[-2], runs[-1]
            allowed = ((c["bytes"] - b["bytes"]) / (b["bytes"] - a["bytes"])
                       * max(0.0, b["peak_rss_mb"] - a["peak_rss_mb"]) + NOISE_MB)
            linear &= c["peak_rss_mb"] - b["peak_rss_mb"] <= allowed
            growth[f"{model} {setting} {layout}"] = round(
                (c["peak_rss_mb"] - b["peak_rss_mb"]) / ((c["bytes"] - b["bytes"]) / 2**20), 2)
    return {"all_under_2gb": all(r["peak_rss_mb"] < LIMIT_MB for r in results),
            "at_most_linear": linear, "max_peak_rss_mb": max(r["peak_rss_mb"] for r in results),
            "mb_per_input_mb_largest_two": growth}


def probe_child(model: str, budget: int, cache: str, path: str, groups: int) -> dict:
    """In a fresh process (``--probe-child``): one tagging process of ``predict.py`` -- the
    model loaded as a pool process loads it, one thread -- tagging the first ``groups``
    groups of ``path`` with ``budget``-token batches and oneDNN's primitive cache capped at
    ``cache``. Its peak RSS, its RSS after each group (freed memory given back to the system
    first, ``malloc_trim``) and its speed in tokens per CPU second."""
    import ctypes
    import resource

    os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] = cache
    import torch

    from docgraph.tagging import pipeline
    from docgraph.tagging.prediction_io import ReadOptions, chunk_document, read_chunks

    torch.set_num_threads(1)
    pipeline.BATCH_TOKENS = budget
    pipeline._load_worker(model, None, 1)
    libc = ctypes.CDLL("libc.so.6")
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    chunks = read_chunks(Path(path), ReadOptions(max_tokens=2000))
    tokens, cpu, after = 0, 0.0, []
    for group, _ in zip(pipeline.group_items(chunks, lambda c: c.num_tokens), range(groups)):
        start = time.process_time()
        pipeline._tag_in_worker([chunk_document(c) for c in group if c.pieces], 0)
        cpu += time.process_time() - start
        tokens += sum(c.num_tokens for c in group)
        libc.malloc_trim(0)
        with open("/proc/self/statm") as f:
            after.append(round(int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"batch_tokens": budget, "onednn_cache": int(cache), "tokens": tokens,
            "loaded_mb": round(loaded), "peak_rss_mb": round(peak),
            "rss_after_each_group_mb": after, "tokens_per_cpu_s": round(tokens / cpu)}


def run_probes(models: dict[str, str], path: Path, budgets: list[int], groups: int) -> list:
    """:func:`probe_child` for every model, batch budget (cache 64) and, at the largest
    budget, the default cache (1024), each in a fresh process."""
    settings = [(b, "64") for b in budgets] + [(max(budgets), "1024")]
    results = []
    for name, directory in models.items():
        for budget, cache in settings:
            out = subprocess.run(
                [sys.executable, __file__, "--probe-child", directory, str(budget), cache,
                 str(path), str(groups)],
                capture_output=True, text=True, check=True,
                env=dict(os.environ, PYTHONWARNINGS="ignore"))
            record = {"model": name, **json.loads(out.stdout.splitlines()[-1])}
            print(json.dumps(record), flush=True)
            results.append(record)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", default=[], metavar="NAME=DIR",
                        help="a model directory to run (repeatable; default: train both)")
    parser.add_argument("--work-dir", default="/tmp/predict-memory",
                        help="where inputs, outputs and trained models go")
    parser.add_argument("--sizes", nargs="+", choices=tuple(SIZES), default=list(SIZES))
    parser.add_argument("--layouts", nargs="+", choices=LAYOUTS, default=list(LAYOUTS))
    parser.add_argument("--code", default=str(ROOT),
                        help="the checkout whose scripts/predict.py runs (default: this one)")
    parser.add_argument("--out", default=None, help="write the results here (JSON)")
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=FLAGS",
                        help="run each model with these predict.py flags too, e.g. "
                             "'fast=--speed fast' (repeatable; default: predict.py's defaults)")
    parser.add_argument("--probe-batches", type=int, nargs="*", default=[],
                        metavar="TOKENS", help="also probe one tagging process with these "
                        "batch budgets on the 1 MB one-line input (--probe-groups groups)")
    parser.add_argument("--probe-groups", type=int, default=6)
    parser.add_argument("--probe-child", nargs=5, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe_child:
        model, budget, cache, path, groups = args.probe_child
        print(json.dumps(probe_child(model, int(budget), cache, path, int(groups))))
        return 0

    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    models = (dict(m.split("=", 1) for m in args.model) if args.model
              else {k: str(v) for k, v in train_models(work).items()})
    sentences = corpus_sentences()
    code = Path(args.code).resolve()
    env = dict(os.environ, PYTHONPATH=str(code), PYTHONWARNINGS="ignore")
    settings = dict(s.split("=", 1) for s in args.setting) or {"defaults": ""}
    results = []
    for layout in args.layouts:
        for size_name in args.sizes:
            text = make_text(SIZES[size_name], layout, sentences)
            path = work / f"{layout}-{size_name}.txt"
            path.write_text(text, encoding="utf-8")
            tokens = count_tokens(text)
            for (name, directory), (setting, flags) in itertools.product(models.items(),
                                                                         settings.items()):
                out = work / f"{layout}-{size_name}-{name}-{setting}.jsonl"
                command = [sys.executable, str(code / "scripts" / "predict.py"), "--model",
                           directory, "--device", "cpu", "--output", str(out), str(path),
                           *shlex.split(flags)]
                run = run_predict(command, env)
                entities = (sum(1 for _ in out.open(encoding="utf-8"))
                            if run["returncode"] == 0 else None)
                record = {"model": name, "setting": setting, "flags": flags,
                          "layout": layout, "size": size_name,
                          "bytes": len(text.encode()), "tokens": tokens, **run,
                          "tokens_per_s": round(tokens / run["seconds"]),
                          "entities": entities}
                if run["returncode"] == 0:
                    del record["stderr_tail"]
                results.append(record)
                print(json.dumps(record), flush=True)
                out.unlink(missing_ok=True)
    probes = []
    if args.probe_batches:
        path = work / "line-1MB.txt"
        path.write_text(make_text(SIZES["1MB"], "line", sentences), encoding="utf-8")
        probes = run_probes(models, path, args.probe_batches, args.probe_groups)
    summary = {"date": time.strftime("%Y-%m-%d"), "machine": platform.platform(),
               "cpus": os.cpu_count(), "python": platform.python_version(),
               "code": str(code), "models": models, "check": check(results),
               "runs": results, "probes": probes}
    print(json.dumps(summary["check"]))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")
    return 0 if all(r["returncode"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
