"""Does data-parallel training give the model quality of one process?

Trains the same configuration with ``--processes 1`` and ``--processes 2`` (same global batch
of ``batch_tokens``, one thread per process) for several seeds, then prints the best dev F1 and
the test F1 of every run, their mean and standard deviation per setting, and Welch's t-test of
the dev F1. Runs go one after the other (each uses the cores it asks for).

    python benchmarks/ddp_quality.py --dataset sample --seeds 1 2 3 \\
        --runs-dir runs/ddp-quality --out benchmarks/results/measurements/ddp-quality/sample.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

ROOT = Path(__file__).resolve().parents[1]


def train(dataset: str, seed: int, processes: int, out: Path, extra: list[str]) -> dict:
    """Run ``scripts/train.py`` once (skipped when ``out/metrics.json`` exists)."""
    if not (out / "metrics.json").is_file():
        cmd = [sys.executable, str(ROOT / "scripts" / "train.py"), "--dataset", dataset,
               "--seed", str(seed), "--processes", str(processes), "--threads", "1",
               "--output-dir", str(out), "--quiet", *extra]
        res = subprocess.run(cmd, capture_output=True, text=True,
                             env=dict(os.environ, PYTHONWARNINGS="ignore"))
        if res.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{res.stderr[-2000:]}")
    return json.loads((out / "metrics.json").read_text())


def welch_p(a: list[float], b: list[float]) -> float:
    """Two-sided p-value of Welch's t-test (as in ``scripts/report.py``)."""
    from docgraph_dev.report import welch_t_test

    return welch_t_test(a, b)[2]


def main() -> None:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--dataset", default="sample")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--runs-dir", default="runs/ddp-quality")
    p.add_argument("--out", default=None)
    p.add_argument("extra", nargs="*", help="more train.py options (after --)")
    args = p.parse_args()
    results: dict[str, list[dict]] = {}
    for seed in args.seeds:
        for processes in (1, 2):
            out = Path(args.runs_dir) / f"{args.dataset}-p{processes}-s{seed}"
            start = time.perf_counter()
            m = train(args.dataset, seed, processes, out, args.extra)
            row = {"seed": seed, "dev_f1": m["dev"]["f1"], "test_f1": m["test"]["f1"],
                   "epochs": m["epochs"], "stop_reason": m.get("stop_reason"),
                   "train_seconds": m.get("train_seconds"),
                   "wall_seconds": time.perf_counter() - start}
            results.setdefault(str(processes), []).append(row)
            print(f"processes {processes} seed {seed}: dev {row['dev_f1']:.2f} "
                  f"test {row['test_f1']:.2f} ({row['epochs']} epochs, {row['stop_reason']})",
                  flush=True)
    summary = {}
    for processes, rows in results.items():
        dev = [r["dev_f1"] for r in rows]
        test = [r["test_f1"] for r in rows]
        summary[processes] = {
            "dev_mean": statistics.mean(dev), "dev_std": statistics.stdev(dev),
            "test_mean": statistics.mean(test), "test_std": statistics.stdev(test)}
        print(f"processes {processes}: dev {summary[processes]['dev_mean']:.2f} ± "
              f"{summary[processes]['dev_std']:.2f}, test {summary[processes]['test_mean']:.2f}"
              f" ± {summary[processes]['test_std']:.2f} over {len(rows)} seeds")
    p_dev = welch_p([r["dev_f1"] for r in results["2"]], [r["dev_f1"] for r in results["1"]])
    print(f"Welch's t-test of dev F1, 2 processes vs 1: p = {p_dev:.3f}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({
            "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
            "dataset": args.dataset, "runs": results, "summary": summary,
            "welch_p_dev": p_dev, "date": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=2) + "\n")


if __name__ == "__main__":
    main()
