"""Tagging speed and tags of two docgraph trees side by side (an inference change against the
code before it).

A *tree* is a directory holding a ``docgraph`` package (e.g. ``git archive COMMIT docgraph |
tar -x -C DIR``); every run is a fresh process with that tree first on ``PYTHONPATH``, one
process and one thread, and a tree may carry environment settings (``DIR@NAME=VALUE``, e.g.
``ONEDNN_PRIMITIVE_CACHE_CAPACITY``).

* ``speed``: the first ``--limit`` OntoNotes test documents as raw text (docgraph's tokeniser
  and sentence splitter, as ``predict.py --documents paragraphs`` reads them), their graphs
  built, then tagged (``predict_graphs``, the model's batches) and timed: CPU and wall seconds
  of the tagging alone, in ``--rounds`` alternating rounds (A B A B ...), medians reported.
* ``tags``: a whole test split tagged as ``evaluate.py`` does (``Tagger.evaluate``, one
  process); the share of tokens whose tags agree between the trees and each tree's F1.

    python benchmarks/tagging_speed.py speed --trees BEFORE AFTER --model ontonotes \\
        --data-dir DIR [--limit 100] [--rounds 3] --out OUT.json
    python benchmarks/tagging_speed.py tags --trees BEFORE AFTER --model conll03 \\
        --dataset conll03 --data-dir DIR --out OUT.json
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev


def _tree(spec: str) -> tuple[str, dict[str, str]]:
    """``DIR@NAME=VALUE@...`` -> ``(DIR, {NAME: VALUE})``."""
    path, *settings = spec.split("@")
    return path, dict(s.split("=", 1) for s in settings)


def _run(spec: str, args: list[str]) -> dict[str, Any]:
    """One worker run of this script with the tree of ``spec``; its JSON record."""
    path, settings = _tree(spec)
    env = {**os.environ, **settings, "PYTHONPATH": str(Path(path).resolve()),
           "OMP_NUM_THREADS": "1"}
    env.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "64")  # what predict.py sets
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "record.json"
        result = subprocess.run([sys.executable, str(Path(__file__).resolve()), "worker", *args,
                                 "--out", str(out)],
                                env=env, capture_output=True, text=True, cwd=tmp)
        if result.returncode:
            raise RuntimeError(f"{spec}: {result.stderr.strip()[-800:]}")
        return json.loads(out.read_text())


def worker(args: argparse.Namespace) -> None:
    """Run in the tree's process: tag and write the record."""
    import torch

    import docgraph
    from docgraph.data.registry import load_dataset
    from docgraph.tagging.tagger import Tagger

    torch.set_num_threads(1)
    tagger = Tagger.load(args.model)
    record: dict[str, Any] = {"docgraph": str(Path(docgraph.__file__).parent),
                              "model": args.model}
    if args.kind == "speed":
        from docgraph.tagging import pipeline
        from docgraph.tagging.inference import predict_graphs
        from docgraph.tagging.prediction_io import ReadOptions, chunk_document, read_chunks
        from docgraph_dev.peer_speed import split_text

        documents = load_dataset("ontonotes", args.data_dir, splits=("test",))["test"]
        text, _ = split_text(documents[:args.limit] if args.limit else documents)
        path = Path(args.out).with_suffix(".txt")
        path.write_text(text, encoding="utf-8")
        options = ReadOptions("text", False, "paragraphs", tagger.max_doc_tokens or 10**9)
        docs = [d for d in map(chunk_document, read_chunks(path, options)) if d.sentences]
        graphs = pipeline._graphs(docs, tagger)
        wall, cpu = time.perf_counter(), time.process_time()
        tags = predict_graphs(tagger.model, graphs, tagger.vocabs, tagger.batch_tokens)
        record.update(wall=time.perf_counter() - wall, cpu=time.process_time() - cpu,
                      tokens=sum(int(g.num_nodes) for g in graphs), tags=tags)
    else:
        documents = load_dataset(args.dataset, args.data_dir, splits=("test",))["test"]
        wall, cpu = time.perf_counter(), time.process_time()
        evaluation = tagger.evaluate(documents, processes=1)
        record.update(wall=time.perf_counter() - wall, cpu=time.process_time() - cpu,
                      tokens=sum(d.num_tokens for d in evaluation.documents),
                      f1=evaluation.scores.f1, tags=evaluation.predictions)
    Path(args.out).write_text(json.dumps(record))


def _agreement(a: list, b: list) -> tuple[int, int]:
    """``(tokens whose tags agree, tokens)`` of two per-document, per-sentence tag lists."""
    flat_a = [t for doc in a for sentence in doc for t in sentence]
    flat_b = [t for doc in b for sentence in doc for t in sentence]
    if len(flat_a) != len(flat_b):
        raise RuntimeError(f"the trees tagged {len(flat_a)} and {len(flat_b)} tokens")
    return sum(x == y for x, y in zip(flat_a, flat_b)), len(flat_a)


def main() -> int:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=["speed", "tags", "worker"])
    p.add_argument("--trees", nargs=2, metavar=("BEFORE", "AFTER"))
    p.add_argument("--model", required=True)
    p.add_argument("--dataset", default="ontonotes", help="test split of (tags)")
    p.add_argument("--data-dir", required=True, help="the corpus directory")
    p.add_argument("--limit", type=int, default=100, help="first N documents (speed; 0: all)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds (speed)")
    p.add_argument("--worker-kind", dest="kind_of_worker", default="speed",
                   help=argparse.SUPPRESS)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if args.kind == "worker":
        args.kind = args.kind_of_worker
        worker(args)
        return 0
    from docgraph.runtime.atomic import atomic_write_json
    from docgraph.runtime.machine import cpu_model

    data_dir = str(Path(args.data_dir).resolve())
    common = ["--model", args.model, "--data-dir", data_dir, "--dataset", args.dataset,
              "--limit", str(args.limit), "--worker-kind", args.kind]
    rounds = args.rounds if args.kind == "speed" else 1
    runs: dict[str, list[dict[str, Any]]] = {spec: [] for spec in args.trees}
    for r in range(rounds):
        for spec in args.trees:
            record = _run(spec, common)
            runs[spec].append(record)
            print(f"round {r + 1} {spec}: {record['tokens']:,} tokens, {record['cpu']:.2f} CPU s, "
                  f"{record['wall']:.2f} s" + (f", F1 {record['f1']:.2f}" if "f1" in record
                                                else ""), flush=True)
    before, after = (runs[spec] for spec in args.trees)
    agree, tokens = _agreement(before[-1]["tags"], after[-1]["tags"])
    summary: dict[str, Any] = {"tokens": tokens, "tags_agree": agree,
                               "tags_agree_share": agree / tokens if tokens else 1.0}
    for name, measured in zip(("before", "after"), (before, after)):
        cpu = statistics.median(m["cpu"] for m in measured)
        wall = statistics.median(m["wall"] for m in measured)
        summary[name] = {"tree": measured[0]["docgraph"], "cpu_median": cpu,
                         "wall_median": wall, "tokens_per_cpu_second": tokens / cpu,
                         "tokens_per_second": tokens / wall,
                         "cpu": [m["cpu"] for m in measured],
                         "wall": [m["wall"] for m in measured]}
        if "f1" in measured[-1]:
            summary[name]["f1"] = measured[-1]["f1"]
    summary["cpu_ratio"] = summary["before"]["cpu_median"] / summary["after"]["cpu_median"]
    print(json.dumps(summary, indent=2))
    atomic_write_json(args.out, {"command": " ".join(sys.argv), "cpu": cpu_model(),
                                 "kind": args.kind, "model": args.model,
                                 "dataset": args.dataset if args.kind == "tags" else "ontonotes",
                                 "trees": args.trees, **summary})
    return 0


if __name__ == "__main__":
    sys.exit(main())
