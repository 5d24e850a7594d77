"""Wall time of the tagging tools with one and with two processes, end to end.

Runs ``scripts/evaluate.py --processes N`` on a model directory and a split (process start,
imports, model loading, graph building, tagging, scoring and writing included: what a user
waits for), alternating the settings, and prints the median of ``--repeats`` runs per setting
and the speed-up of each over one process. The F1 of every run is printed too: with pruning on,
the tags of two processes may differ from those of one in a few tokens (the Monte-Carlo masks
and sampled neighbours of each share are drawn from the same seeds as for the whole split).

    python benchmarks/tagging_processes.py --model runs/conll03-gcdoc-ddp2-cpu-s1 \\
        --dataset conll03 --split test \\
        --out benchmarks/results/measurements/tagging-processes/x.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def time_evaluate(model: str, dataset: str | None, split: str, processes: int,
                  data_dir: str | None) -> tuple[float, float]:
    """Wall seconds and test F1 of one ``evaluate.py`` run."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, str(ROOT / "scripts" / "evaluate.py"), "--model", model,
               "--split", split, "--output-dir", out, "--processes", str(processes)]
        if dataset:
            cmd += ["--dataset", dataset]
        if data_dir:
            cmd += ["--data-dir", data_dir]
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
        start = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True, env=env)
        seconds = time.perf_counter() - start
        if res.returncode != 0:
            raise SystemExit(f"evaluate.py failed:\n{res.stderr[-2000:]}")
        metrics = json.loads(Path(out, f"{split}_metrics.json").read_text())
    return seconds, metrics[split]["f1"]


def main() -> None:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--dataset", default=None)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--split", default="test")
    p.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None, help="JSON file for the results")
    args = p.parse_args()
    runs: dict[int, list[tuple[float, float]]] = {n: [] for n in args.processes}
    for _ in range(args.repeats):
        for n in args.processes:
            runs[n].append(time_evaluate(args.model, args.dataset, args.split, n,
                                         args.data_dir))
            print(f"processes {n}: {runs[n][-1][0]:.1f} s, F1 {runs[n][-1][1]:.2f}",
                  flush=True)
    median = {n: statistics.median(s for s, _ in r) for n, r in runs.items()}
    base = median[args.processes[0]]
    result = {
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "model": args.model, "split": args.split, "repeats": args.repeats,
        "median_seconds": {str(n): s for n, s in median.items()},
        "speedup_over_first": {str(n): base / s for n, s in median.items()},
        "f1": {str(n): [f for _, f in r] for n, r in runs.items()},
        "seconds": {str(n): [s for s, _ in r] for n, r in runs.items()},
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    for n in args.processes:
        print(f"processes {n}: median {median[n]:.1f} s, speed-up {base / median[n]:.2f}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
