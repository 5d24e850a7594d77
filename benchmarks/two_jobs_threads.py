"""Two training jobs side by side on a 2-core machine: one intra-op thread each, or two?

Starts two independent processes at once, each training the BiLSTM-CRF (or GCDoc with
``--model gcdoc``) on the same real CoNLL-2003 batches for ``--seconds`` seconds with
``--threads`` torch threads, and prints the training tokens/s of each. Run it with
``--threads 1`` and ``--threads 2`` on an otherwise idle machine: the second is what a user gets
who starts two runs with torch's default thread count, the reason ``scripts/train.py`` gives a
single CPU training process one thread unless told otherwise.

    python benchmarks/two_jobs_threads.py --data-dir ../shared/data/conll2003 --threads 2
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev


def _job(data_dir: str, model_name: str, threads: int, seconds: float, queue, go) -> None:
    import torch
    from torch_geometric.data import Batch

    from docgraph.data.registry import load_dataset
    from docgraph.data.vocab import Vocabularies
    from docgraph.graph import GraphConfig, documents_to_graphs
    from docgraph.model import GCDocConfig
    from docgraph.persistence.model_dir import build_model
    from docgraph.training.loop import training_step
    from docgraph_dev.batches import select_batch_indices

    torch.set_num_threads(threads)
    docs = load_dataset("conll03", data_dir, splits=("train",))["train"]
    vocabs = Vocabularies.build(docs)
    graphs = documents_to_graphs(docs, vocabs, GraphConfig())
    lengths = [int(g.num_nodes) for g in graphs]
    batches = [Batch.from_data_list([graphs[i] for i in idx])
               for idx in select_batch_indices(lengths, 4000, 8, 0)]
    config = GCDocConfig() if model_name == "gcdoc" else GCDocConfig.baseline()
    torch.manual_seed(0)
    model = build_model(config, vocabs)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    training_step(model, optimizer, batches[0])  # warm-up
    queue.put("ready")
    go.wait()  # all jobs time the same stretch
    tokens, start, k = 0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        batch = batches[k % len(batches)]
        training_step(model, optimizer, batch)
        tokens += int(batch.num_nodes)
        k += 1
    queue.put(tokens / (time.perf_counter() - start))


def main() -> None:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", required=True)
    p.add_argument("--model", choices=("baseline", "gcdoc"), default="baseline")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seconds", type=float, default=60.0)
    args = p.parse_args()
    ctx = multiprocessing.get_context("spawn")
    queue, go = ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=_job, args=(args.data_dir, args.model, args.threads,
                                            args.seconds, queue, go)) for _ in range(args.jobs)]
    for proc in procs:
        proc.start()
    assert all(queue.get() == "ready" for _ in procs)
    go.set()
    results = [queue.get() for _ in procs]
    for proc in procs:
        proc.join()
    print(json.dumps({"model": args.model, "jobs": args.jobs, "threads": args.threads,
                      "seconds": args.seconds, "train_tokens_per_s": results,
                      "date": time.strftime("%Y-%m-%dT%H:%M:%S")}))


if __name__ == "__main__":
    main()
