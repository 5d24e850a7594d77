"""Make a trained run a shipped model, and measure what packing it changed.

``scripts/ship_model.py RUN_DIR --name NAME`` packs the run's model
(:func:`~docgraph.persistence.packing.pack_model_dir`) into ``docgraph_models/NAME/`` and tags
the run's test split with both: the run's float32 model and the packed one. It writes a JSON
record (``--out``) with the share of test tokens whose tags are equal, both test F1 scores,
what was left out and the sizes; it exits 1 when the packed model misses ``--min-agreement``
or ``--max-f1-change``, so a packing that changes the tags never ships unnoticed.

``--threshold`` stores a tagging threshold (chosen on dev, e.g. with
``benchmarks/inference_threshold.py``) in the packed model's ``config.json``; the record keeps
the trained one.

    python scripts/ship_model.py RUN_DIR --name conll03 [--dtype float16]
        [--keep-float32 'crf.*' ...] [--int8-embeddings] [--threshold T] [--data-dir DIR]
        [--out RECORD.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from datetime import date
from pathlib import Path
from typing import Any

from docgraph.persistence.manifest import save_threshold, verify_manifest
from docgraph.persistence.packing import pack_model_dir
from docgraph.persistence.shipped import SHIPPED_DIR
from docgraph.runtime.atomic import atomic_write_json
from docgraph.runtime.machine import cpu_model


def parser() -> argparse.ArgumentParser:
    """The command line of ``scripts/ship_model.py``."""
    p = argparse.ArgumentParser(
        allow_abbrev=False, prog="ship_model.py", description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", help="the trained run directory")
    p.add_argument("--name", required=True, help="the shipped model's name")
    p.add_argument("--dtype", default="float16", choices=("float16", "bfloat16", "float32"))
    p.add_argument("--keep-float32", nargs="*", default=[], metavar="PATTERN",
                   help="state-dict keys (fnmatch patterns) stored as float32")
    p.add_argument("--int8-embeddings", action="store_true",
                   help="store the word embedding as 8-bit rows with a scale each")
    p.add_argument("--threshold", type=float, default=None,
                   help="tagging threshold stored in the packed model (default: the trained)")
    p.add_argument("--data-dir", default=None, help="corpus directory of the test split")
    p.add_argument("--target", default=None,
                   help="where to write the packed model (default: docgraph_models/NAME)")
    p.add_argument("--out", default=None, help="the JSON record (default: print only)")
    p.add_argument("--min-agreement", type=float, default=99.9,
                   help="least share of test tokens (%%) with equal tags")
    p.add_argument("--max-f1-change", type=float, default=0.05,
                   help="largest test F1 change (points)")
    return p


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def compare(run_dir: str | Path, packed_dir: str | Path, threshold: float | None,
            data_dir: str | None) -> dict[str, Any]:
    """Tag the test split of ``run_dir``'s corpus with the run's model and the packed one:
    token agreement (%), both F1 scores and the seconds each took."""
    from docgraph.data.registry import load_dataset
    from docgraph.tagging.tagger import Tagger

    full = Tagger.load(run_dir, threshold=threshold, speed="faithful")
    small = Tagger.load(packed_dir, speed="faithful")
    documents = load_dataset(full.config.dataset, data_dir or full.config.data_dir,
                             splits=("test",))["test"]
    results = {}
    for name, tagger in (("float32", full), ("packed", small)):
        start = time.perf_counter()
        results[name] = (tagger.evaluate(documents), time.perf_counter() - start)
    tags = {name: [t for doc in ev.predictions for s in doc for t in s]
            for name, (ev, _) in results.items()}
    equal = sum(a == b for a, b in zip(tags["float32"], tags["packed"]))
    return {
        "dataset": full.config.dataset,
        "test_tokens": len(tags["float32"]),
        "tokens_with_equal_tags": equal,
        "agreement": 100.0 * equal / max(len(tags["float32"]), 1),
        "test_f1_float32": results["float32"][0].scores.f1,
        "test_f1_packed": results["packed"][0].scores.f1,
        "seconds_float32": results["float32"][1],
        "seconds_packed": results["packed"][1],
    }


def main(argv: list[str] | None = None) -> int:
    """``scripts/ship_model.py``: pack, compare, record; exit 1 past the tolerances."""
    args = parser().parse_args(argv)
    target = Path(args.target) if args.target else SHIPPED_DIR / args.name
    summary = pack_model_dir(args.run_dir, target, args.dtype, args.keep_float32,
                             int8_embeddings=args.int8_embeddings)
    trained = None
    if args.threshold is not None:
        trained = save_threshold(target, args.threshold)
    record = {
        "name": args.name, "run_dir": str(args.run_dir), "dtype": args.dtype,
        "keep_float32": args.keep_float32, "int8_embeddings": args.int8_embeddings,
        "words": summary.words,
        "dropped_words": summary.dropped_words,
        "bytes": sum(p.stat().st_size for p in target.iterdir()),
        "run_model_bytes": (Path(args.run_dir) / "model.pt").stat().st_size,
        "tagging_threshold": args.threshold, "trained_threshold": trained,
        **compare(args.run_dir, target, args.threshold, args.data_dir),
        "date": date.today().isoformat(), "commit": _commit(), "cpu": cpu_model(),
        "files": (verify_manifest(target) or {}).get("files"),
    }
    change = abs(record["test_f1_packed"] - record["test_f1_float32"])
    record["within_tolerance"] = (record["agreement"] >= args.min_agreement
                                  and change <= args.max_f1_change)
    print(json.dumps({k: v for k, v in record.items() if k != "files"}, indent=2))
    if args.out:
        atomic_write_json(args.out, record)
    if not record["within_tolerance"]:
        print(f"ship_model.py: the packed model is off: {record['agreement']:.3f}% of tokens "
              f"with equal tags (at least {args.min_agreement}), test F1 changed by "
              f"{change:.3f} (at most {args.max_f1_change})")
        return 1
    return 0


__all__ = ["compare", "main", "parser"]
