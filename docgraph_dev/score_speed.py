"""What entity scores cost: ``predict.py`` with and without ``--scores`` on the raw text of
OntoNotes test documents, side by side.

The text is that of :func:`docgraph_dev.peer_speed.split_text` (a paragraph per document, a
line per sentence); each model runs ``predict.py --documents paragraphs --quiet`` with its
defaults, alternating with and without ``--scores`` for ``--rounds`` rounds; a round's
tagging seconds are its wall time less that of the same command on a one-sentence file. The
record gives the median tokens per second of each, their ratio, and whether the entities are
the same (the scores must change nothing else).

    python benchmarks/score_speed.py --models conll03 ontonotes --limit 100 --rounds 3 \\
        --out benchmarks/results/measurements/calibration/score-speed.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docgraph.runtime.atomic import atomic_write_json

ROOT = Path(__file__).resolve().parents[1]


def _seconds(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.strip()[-500:]}")
    return time.perf_counter() - start, result.stdout


def _command(model: str, path: Path, scores: bool) -> list[str]:
    return [sys.executable, str(ROOT / "scripts" / "predict.py"), "--model", model, str(path),
            "--documents", "paragraphs", "--quiet"] + (["--scores"] if scores else [])


def measure(models: Sequence[str], data_dir: str | None, rounds: int, limit: int
            ) -> dict[str, Any]:
    """The record of one run (see the module docstring)."""
    from docgraph.data.registry import load_dataset
    from docgraph_dev.peer_speed import split_text

    documents = load_dataset("ontonotes", data_dir, splits=("test",))["test"][:limit or None]
    text, _ = split_text(documents)
    tokens = sum(d.num_tokens for d in documents)
    record: dict[str, Any] = {"documents": len(documents), "tokens": tokens, "rounds": rounds,
                              "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        path, probe = Path(tmp) / "text.txt", Path(tmp) / "probe.txt"
        path.write_text(text, encoding="utf-8")
        probe.write_text("John lives in Paris.", encoding="utf-8")
        for model in models:
            runs: dict[str, list[float]] = {"plain": [], "scores": []}
            outputs: dict[str, str] = {}
            for _ in range(rounds):
                for arm in ("plain", "scores"):
                    startup, _ = _seconds(_command(model, probe, arm == "scores"))
                    wall, outputs[arm] = _seconds(_command(model, path, arm == "scores"))
                    runs[arm].append(max(wall - startup, 1e-9))
            plain = [json.loads(line) for line in outputs["plain"].splitlines()]
            scored = [json.loads(line) for line in outputs["scores"].splitlines()]
            same = plain == [{k: v for k, v in r.items() if k != "score"} for r in scored]
            rate = {arm: tokens / statistics.median(s) for arm, s in runs.items()}
            record["models"][model] = {
                "tag_seconds": runs, "tokens_per_second": rate,
                "scores_over_plain": rate["scores"] / rate["plain"],
                "same_entities": same, "entities": len(plain)}
            print(f"{model}: {rate['plain']:,.0f} tokens/s without scores, "
                  f"{rate['scores']:,.0f} with ({rate['scores'] / rate['plain']:.3f}); "
                  f"same entities: {same}", flush=True)
    return record


def main(argv: Sequence[str] | None = None) -> int:
    """Command line of ``benchmarks/score_speed.py``."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["conll03", "ontonotes"])
    parser.add_argument("--data-dir", default=None, help="corpus directory of OntoNotes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=100, help="first N documents (0: all)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds: must be >= 1, got {args.rounds}")
    record = measure(args.models, args.data_dir, args.rounds, args.limit)
    record["argv"] = sys.argv[1:] if argv is None else list(argv)
    atomic_write_json(args.out, record)
    return 0
