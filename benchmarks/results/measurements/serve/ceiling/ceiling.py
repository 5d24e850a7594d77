"""What two workers could tag at best on one-sentence requests, against predict.py offline, all
in the same conditions: one process, or two at once (as the service's two workers and
predict.py's two processes run), each tagging passes of SIZE one-sentence documents of the
sample with the service's own pass function (docgraph.serve.worker.tag_pass) for a fixed time,
with no HTTP, no queue and no wait: every pass full, no front process. Then predict.py offline
in one and in two processes on the same sentences (docgraph_dev.serve_load.offline). Rounds
alternate the arms.

    PYTHONPATH=<checkout> python ceiling.py [--sizes 8 16 256] [--seconds 15] [--rounds 3]
    PYTHONPATH=<checkout> python ceiling.py tag --size 16 --seconds 15   # one process (internal)
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def tag(size: int, seconds: float) -> None:
    """Load, say ready, wait for a line on stdin, tag passes for ``seconds``, print JSON."""
    import torch

    from docgraph.serve.batcher import PassDocument
    from docgraph.serve.worker import tag_pass
    from docgraph.tagging.tagger import Tagger
    from docgraph_dev.serve_load import texts

    torch.set_num_threads(1)
    tagger = Tagger.load("conll03", threads=1)
    pool = texts("sentence", 100_000)
    tag_pass(tagger, [PassDocument(f"d{j}", text) for j, text in enumerate(pool[:size])])
    print("ready", flush=True)
    sys.stdin.readline()
    tokens = passes = 0
    start, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        first = (passes * size) % len(pool)
        batch = [PassDocument(f"d{j}", pool[(first + j) % len(pool)]) for j in range(size)]
        tokens += sum(count for _, count in tag_pass(tagger, batch))
        passes += 1
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"tokens": tokens, "passes": passes, "wall_s": wall, "cpu_s": cpu}),
          flush=True)


def at_once(size: int, seconds: float, processes: int) -> dict:
    """``processes`` tagging processes started together; their summed tokens/s."""
    command = [sys.executable, __file__, "tag", "--size", str(size), "--seconds", str(seconds)]
    children = [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True) for _ in range(processes)]
    try:
        for child in children:
            if child.stdout.readline().strip() != "ready":
                raise RuntimeError("a tagging process did not start")
        for child in children:
            child.stdin.write("go\n")
            child.stdin.flush()
        found = [json.loads(child.stdout.readline()) for child in children]
    finally:
        for child in children:
            child.kill()
            child.wait()
    return {"tokens_per_s": round(sum(f["tokens"] / f["wall_s"] for f in found), 1),
            "tokens_per_cpu_s": [round(f["tokens"] / f["cpu_s"], 1) for f in found],
            "passes": [f["passes"] for f in found]}


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    one = sub.add_parser("tag")
    one.add_argument("--size", type=int, required=True)
    one.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 256])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.command == "tag":
        tag(args.size, args.seconds)
        return
    from docgraph_dev.serve_load import _machine, offline, texts

    pool = texts("sentence", 100_000)
    tokens = [len(text.split()) for text in pool]
    found: dict = {"machine": _machine(), "sentences": len(pool), "seconds": args.seconds,
                   "rounds": []}
    for round_ in range(args.rounds):
        arms = [(p, s) for p in (1, 2) for s in args.sizes]
        if round_ % 2:
            arms.reverse()
        row: dict = {}
        for processes, size in arms:
            row[f"passes of {size}, {processes} process(es)"] = at_once(size, args.seconds,
                                                                         processes)
        with tempfile.TemporaryDirectory() as work:
            for processes in ((1, 2) if round_ % 2 == 0 else (2, 1)):
                row[f"predict.py, {processes} process(es)"] = offline(
                    "conll03", pool, tokens, 60_000, 1, processes, Path(work))
        found["rounds"].append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    keys = list(found["rounds"][0])
    found["median_tokens_per_s"] = {key: statistics.median(r[key]["tokens_per_s"]
                                                           for r in found["rounds"])
                                    for key in keys}
    json.dump(found, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
