"""Adding a type by fine-tuning without losing the starting model's: train a run from
``conll03`` on 20 short documents annotated with a new type (PRODUCT) and PER, ORG and LOC
(not MISC), then score it on CoNLL-2003 dev and test (the model's four types: the run's
predictions of another type count as ``O`` there) and on the documents' own dev and test
files (all their types).

    DOCGRAPH_DATA_DIR=DIR python benchmarks/fine_tune_keep.py --name silver \\
        --out benchmarks/results/measurements/fine-tune-keep -- --keep-types silver
    python benchmarks/fine_tune_keep.py --name conll03 --model conll03 --out ...   # no training

Everything after ``--`` is given to ``scripts/train.py`` after the run's corpus, starting
model, seed and output directory. One JSON record per run in ``--out/runs`` and its
``train.log``; ``--reuse`` scores a finished run directory without training it again.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's docgraph_dev
DATA = ROOT / "benchmarks" / "data" / "fine-tune-keep"
OLD_TYPES = ("LOC", "MISC", "ORG", "PER")


def _scores(tagger: Any, documents: list, keep: tuple[str, ...] | None) -> dict[str, Any]:
    """Scores of ``tagger`` on ``documents``, rounded; with ``keep``, predictions of other
    types count as ``O``."""
    from docgraph_dev.adaptation import test_scores

    result = test_scores(tagger, documents, keep)
    result["per_type"] = {k: round(v["f1"], 2) for k, v in result["per_type"].items()}
    return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in result.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    p.add_argument("--name", required=True, help="the run's name (its record's file name)")
    p.add_argument("--out", required=True, help="measurement folder")
    p.add_argument("--work", default="runs/fine-tune-keep", help="run directories")
    p.add_argument("--model", default=None, help="score this model instead of training")
    p.add_argument("--init-from", default="conll03", help="the starting model")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--reuse", action="store_true", help="score a finished run directory")
    p.add_argument("--source", default=None,
                   help="train with the docgraph of this source tree (an earlier commit's)")
    p.add_argument("train_args", nargs="*", help="more train.py arguments (after --)")
    args = p.parse_args()

    from docgraph.data.registry import load_dataset, read_labelled
    from docgraph.runtime.machine import cpu_model
    from docgraph.tagging.tagger import Tagger

    out = Path(args.out) / "runs"
    out.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    record: dict[str, Any] = {
        "name": args.name, "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M"),
        "commit": commit, "cpu": cpu_model(), "load_before": os.getloadavg()[0],
        "machine": "2 cores shared, beside other jobs"}
    model: str | Path
    if args.model is not None:
        model = args.model
    else:
        model = Path(args.work) / args.name
        source = Path(args.source).resolve() if args.source else ROOT
        command = [sys.executable, str(source / "scripts" / "train.py"),
                   "--train", str(DATA / "train.jsonl"), "--dev", str(DATA / "dev.jsonl"),
                   "--test", str(DATA / "test.jsonl"), "--init-from", args.init_from,
                   "--seed", str(args.seed), "--processes", "1", "--threads", "1",
                   "--device", "cpu", "--quiet", "--output-dir", str(model), *args.train_args]
        record["command"] = " ".join(["scripts/train.py", *command[2:]])
        if args.source:
            record["source"] = f"{args.source} (git archive of an earlier commit)"
        if not (args.reuse and (model / "metrics.json").is_file()):
            start = time.perf_counter()
            env = {**os.environ, **({"PYTHONPATH": str(source)} if args.source else {})}
            done = subprocess.run(command, env=env)
            if done.returncode != 0:
                return done.returncode
            record["train_wall_seconds"] = round(time.perf_counter() - start, 1)
        metrics = json.loads((model / "metrics.json").read_text())
        record.update({k: metrics.get(k) for k in ("epochs", "best_epoch", "stop_reason",
                                                   "train_seconds", "command")})
        record["train_config"] = metrics["config"]["train"]
        record["fine_tune_config"] = metrics["config"].get("fine_tune")
        record["dev_f1_own"] = round(metrics["dev"]["f1"], 2)
        record["files_bytes"] = {p.name: p.stat().st_size for p in sorted(model.iterdir())
                                 if p.is_file() and not p.name.startswith(".")}
        shutil.copyfile(model / "train.log", out / f"{args.name}.log")
    tagger = Tagger.load(model, threads=1, speed="faithful")
    conll = load_dataset("conll03", Path(os.environ["DOCGRAPH_DATA_DIR"]) / "conll2003",
                         splits=("dev", "test"))
    # the record is written after each split (a slow machine still leaves the first ones)
    for key, documents, keep in (
            ("conll03_test_old_types", conll["test"], OLD_TYPES),
            ("own_test", read_labelled(DATA / "test.jsonl"), None),
            ("own_dev", read_labelled(DATA / "dev.jsonl"), None),
            ("conll03_dev_old_types", conll["dev"], OLD_TYPES)):
        record[key] = _scores(tagger, documents, keep)
        record["load_after"] = os.getloadavg()[0]
        (out / f"{args.name}.json").write_text(json.dumps(record, indent=1) + "\n")
        print(f"{args.name}: {key} {record[key]['f1']} {record[key]['per_type']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
