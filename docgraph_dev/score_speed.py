"""What entity scores cost: ``predict.py`` with and without ``--scores`` (or ``--consistency``,
which needs them) on the raw text of OntoNotes test documents, side by side.

The text is that of :func:`docgraph_dev.peer_speed.split_text` (a paragraph per document, a
line per sentence); each model runs ``predict.py --documents paragraphs --quiet`` with its
defaults, alternating the arms (without and with ``--scores`` unless ``--arms`` says
otherwise) for ``--rounds`` rounds; a round's
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


#: The arms a run may measure: ``predict.py``'s flags for each (each sentence decoded alone
#: but in the ``consistency`` arm, whatever the model's default).
ARMS = {"plain": ["--no-consistency"], "scores": ["--scores", "--no-consistency"],
        "consistency": ["--consistency"]}


def _command(model: str, path: Path, arm: str) -> list[str]:
    return [sys.executable, str(ROOT / "scripts" / "predict.py"), "--model", model, str(path),
            "--documents", "paragraphs", "--quiet", *ARMS[arm]]


def measure(models: Sequence[str], data_dir: str | None, rounds: int, limit: int,
            arms: Sequence[str] = ("plain", "scores")) -> dict[str, Any]:
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
            runs: dict[str, list[float]] = {arm: [] for arm in arms}
            outputs: dict[str, str] = {}
            for _ in range(rounds):
                for arm in arms:
                    startup, _ = _seconds(_command(model, probe, arm))
                    wall, outputs[arm] = _seconds(_command(model, path, arm))
                    runs[arm].append(max(wall - startup, 1e-9))
            records = {arm: [json.loads(line) for line in out.splitlines()]
                       for arm, out in outputs.items()}
            rate = {arm: tokens / statistics.median(s) for arm, s in runs.items()}
            found: dict[str, Any] = {"tag_seconds": runs, "tokens_per_second": rate,
                                     "entities": {arm: len(r) for arm, r in records.items()}}
            for arm in arms[1:]:
                found[f"{arm}_over_{arms[0]}"] = rate[arm] / rate[arms[0]]
            if "plain" in records and "scores" in records:  # the scores change nothing else
                found["same_entities"] = records["plain"] == [
                    {k: v for k, v in r.items() if k != "score"} for r in records["scores"]]
            record["models"][model] = found
            print(f"{model}: " + ", ".join(f"{arm} {rate[arm]:,.0f} tokens/s" for arm in arms)
                  + f"; same entities with scores: {found.get('same_entities')}", flush=True)
    return record


def main(argv: Sequence[str] | None = None) -> int:
    """Command line of ``benchmarks/score_speed.py``."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["conll03", "ontonotes"])
    parser.add_argument("--data-dir", default=None, help="corpus directory of OntoNotes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=100, help="first N documents (0: all)")
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=["plain", "scores"],
                        help="what to run side by side (the first is the reference)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds: must be >= 1, got {args.rounds}")
    record = measure(args.models, args.data_dir, args.rounds, args.limit, args.arms)
    record["argv"] = sys.argv[1:] if argv is None else list(argv)
    atomic_write_json(args.out, record)
    return 0
