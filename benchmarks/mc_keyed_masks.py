"""Does a trained GCDoc tag a split the same in any batches, and what does it cost?

GCDoc prunes its document graph by Monte-Carlo-dropout uncertainty, so tagging is random even in
eval mode. Drawn from torch's global random stream, a document's masks depend on everything
tagged before it in the same call: the tags, and the dev F1 that selects the best epoch, then
move with the batch size and with the number of processes the documents are shared out over
(in-training evaluation shares dev over the training processes; the final evaluation tags it
in one). Per-document masks (today's default) key every document's masks by a hash of the
document and the tagging seed.

For a trained run directory this script tags a split:

* with per-document masks, in ``eval_batch_tokens`` batches, in ``--small-batch`` batches and
  in two interleaved shards (as the evaluation of two training processes does), and with
  tagging seeds ``0 .. --seeds - 1``;
* with the global stream (seeded with 0 before each call, as before), in the same three ways;

and reports entity F1 for each, whether the three ways gave identical tags, and the wall time
of every whole-split call (``--repeats`` extra timed calls per kind, interleaved).

    python benchmarks/mc_keyed_masks.py RUN_DIR [--split dev] [--seeds 4] [--repeats 2]
        [--small-batch 2000] [--spread-only] [--threads 2] [--out OUT.json]
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from docgraph.graph.splits import prepare_run_split
from docgraph.persistence.checkpoint import CheckpointError
from docgraph.persistence.model_dir import load_model_dir
from docgraph.runtime.atomic import atomic_write_json
from docgraph.runtime.machine import cpu_model
from docgraph.tagging.inference import (
    interleaved_shard,
    merge_shards,
    predict_graphs,
    score_predictions,
)

Predictions = list[list[list[str]]]


def sharded(tag: Callable[[list], Predictions], graphs: list, shards: int) -> Predictions:
    """Tag every ``shards``-th graph in one call per shard and merge, as
    :func:`~docgraph.tagging.inference.evaluate_sharded` does with one process per shard."""
    parts = []
    for rank in range(shards):
        indices = interleaved_shard(len(graphs), shards, rank)
        parts.append((indices, tag([graphs[i] for i in indices])))
    return merge_shards(parts, len(graphs))


def measure(run_dir: str | Path, split: str = "dev", seeds: int = 4, repeats: int = 2,
            small_batch: int = 2000, data_dir: str | None = None, spread_only: bool = False
            ) -> dict[str, Any]:
    """Tag ``split`` with a trained model in the ways of the module docstring (only with the
    tagging seeds when ``spread_only``)."""
    model, vocabs, config = load_model_dir(run_dir)
    if model.document_graph is None or model.document_graph.uncertainty is None:
        raise ValueError("this model does not prune its document graph: its tags are not random")
    prepared = prepare_run_split(config, vocabs, split, data_dir)
    graphs, batch = prepared.graphs, config.train.eval_batch_tokens
    seconds: dict[str, list[float]] = {"per_document": [], "global": []}

    def tag(graph_list: list, keyed: bool, seed: int = 0, tokens: int = batch) -> Predictions:
        if not keyed:
            torch.manual_seed(seed)
        start = time.perf_counter()
        out = predict_graphs(model, graph_list, vocabs, tokens, seed=seed if keyed else None)
        if graph_list is graphs and tokens == batch:
            seconds["per_document" if keyed else "global"].append(time.perf_counter() - start)
        return out

    result: dict[str, Any] = {"per_document": {}}
    for keyed, name in () if spread_only else ((True, "per_document"), (False, "global")):
        ways = {
            f"batches of {batch} tokens": tag(graphs, keyed),
            f"batches of {small_batch} tokens": tag(graphs, keyed, tokens=small_batch),
            "two shards": sharded(lambda g, k=keyed: tag(g, k), graphs, 2),
        }
        f1 = {way: score_predictions(prepared, tags).f1 for way, tags in ways.items()}
        first = next(iter(ways.values()))
        result[name] = {"f1": f1, "identical": all(t == first for t in ways.values())}
        print(f"{name}: " + ", ".join(f"{w} {v:.2f}" for w, v in f1.items())
              + f"; identical tags: {result[name]['identical']}", flush=True)
    for _ in range(0 if spread_only else repeats):
        tag(graphs, False)
        tag(graphs, True)
    by_seed = [score_predictions(prepared, tag(graphs, True, seed)).f1 for seed in range(seeds)]
    result["per_document"]["f1_by_seed"] = by_seed
    print("per-document masks, F1 by tagging seed: "
          + ", ".join(f"{f:.2f}" for f in by_seed), flush=True)
    result["seconds"] = seconds
    result["median_seconds"] = {k: statistics.median(v) for k, v in seconds.items() if v}
    print("median seconds per whole-split call: "
          + ", ".join(f"{k} {v:.1f} s ({len(seconds[k])} calls)"
                      for k, v in result["median_seconds"].items()), flush=True)
    result.update(run_dir=str(run_dir), split=split, tokens=sum(int(g.num_nodes) for g in graphs),
                  documents=len(graphs), eval_batch_tokens=batch, small_batch=small_batch,
                  threads=torch.get_num_threads(), cpu=cpu_model(), torch=torch.__version__)
    return result


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", help="a trained GCDoc model directory with pruning")
    p.add_argument("--split", default="dev", help="split of the run's data set (default: dev)")
    p.add_argument("--seeds", type=int, default=4, help="tagging seeds of the F1 spread")
    p.add_argument("--repeats", type=int, default=2, help="extra timed calls per kind")
    p.add_argument("--small-batch", type=int, default=2000, help="the smaller token budget")
    p.add_argument("--data-dir", default=None,
                   help="corpus directory (default: the run's, else DOCGRAPH_DATA_DIR)")
    p.add_argument("--spread-only", action="store_true",
                   help="only tag with --seeds tagging seeds (per-document masks)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=None, help="JSON file to write")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        result = measure(args.run_dir, args.split, args.seeds, args.repeats, args.small_batch,
                         args.data_dir, args.spread_only)
    except (ValueError, FileNotFoundError, CheckpointError) as err:
        raise SystemExit(f"{args.run_dir}: {err}") from None
    if args.out:
        atomic_write_json(Path(args.out), result)


if __name__ == "__main__":
    main()
