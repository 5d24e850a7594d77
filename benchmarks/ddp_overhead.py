"""Where does a two-process (DDP, gloo) GCDoc training step lose its time on a 2-core CPU?

Every batch of real CoNLL-2003 training documents (about 4000 tokens) is split in two by
tokens (:func:`docgraph_dev.batches.split_batch`); each process trains on its share, one thread
each. Four settings, each in fresh processes, time forward, backward and optimizer step:

* ``alone``: one process on its share, the other core idle (the per-process ideal);
* ``side by side``: two processes on their shares at once, no gradient exchange (what sharing
  the cores' caches and memory costs);
* ``ddp no_sync``: DDP-wrapped, but inside ``no_sync()`` (DDP's bookkeeping, no all-reduce);
* ``ddp``: what ``scripts/train.py`` does (gradients all-reduced during backward; each process
  waits for the other).

Also times a bare all-reduce of a tensor the size of the model's gradients. Prints per setting
the mean ms per step of each phase (over ``--rounds`` passes over the batches, after a warm-up).

    python benchmarks/ddp_overhead.py --data-dir ../shared/data/conll2003 \\
        --out benchmarks/results/measurements/ddp-overhead/conll03.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

SETTINGS = ("alone", "side by side", "ddp no_sync", "ddp")


def _shares(data_dir: str, rank: int, num_batches: int):
    from torch_geometric.data import Batch

    from docgraph.data.registry import load_dataset
    from docgraph.data.vocab import Vocabularies
    from docgraph.graph import GraphConfig, documents_to_graphs
    from docgraph_dev.batches import select_batch_indices, split_batch

    docs = load_dataset("conll03", data_dir, splits=("train",))["train"]
    vocabs = Vocabularies.build(docs)
    graphs = documents_to_graphs(docs, vocabs, GraphConfig())
    lengths = [int(g.num_nodes) for g in graphs]
    chosen = select_batch_indices(lengths, 4000, num_batches, 0)
    parts = [split_batch(idx, lengths, 2) for idx in chosen]
    # only batches that give both processes a share (a batch of one long document does not)
    batches = [Batch.from_data_list([graphs[i] for i in p[rank]]) for p in parts if all(p)]
    return batches, vocabs


def _worker(rank: int, setting: str, port: int, args: argparse.Namespace, out: str) -> None:
    from docgraph.model import GCDocConfig
    from docgraph.persistence.model_dir import build_model

    torch.set_num_threads(1)
    if setting != "alone":  # a process group for the barriers (and DDP's all-reduce)
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", rank=rank, world_size=2)
    batches, vocabs = _shares(args.data_dir, rank, args.batches)
    torch.manual_seed(0)
    model = build_model(GCDocConfig(), vocabs)
    network = (torch.nn.parallel.DistributedDataParallel(model) if setting.startswith("ddp")
               else model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    phases: dict[str, list[float]] = {"forward": [], "backward": [], "optimizer": [],
                                      "step": []}
    model.train()
    steps = len(batches) * (args.rounds + 1)
    for k in range(steps):
        batch = batches[k % len(batches)]
        if dist.is_initialized():
            dist.barrier()
        t0 = time.perf_counter()
        sync = network.no_sync() if setting == "ddp no_sync" else contextlib.nullcontext()
        with sync:
            result = network(batch)
            loss = result.loss / max(result.num_sentences, 1)
            t1 = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        t3 = time.perf_counter()
        if k >= len(batches):  # the first pass is a warm-up
            for name, value in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
                phases[name].append(1000 * value)
    record = {name: statistics.fmean(v) for name, v in phases.items()}
    record["tokens_per_step"] = statistics.fmean(int(b.num_nodes) for b in batches)
    if setting == "ddp":
        grads = torch.zeros(sum(p.numel() for p in model.parameters()))
        times = []
        for _ in range(12):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(grads)
            times.append(1000 * (time.perf_counter() - t0))
        record["bare_all_reduce_ms"] = statistics.median(times[2:])
        record["gradient_floats"] = grads.numel()
    with open(f"{out}.{rank}", "w") as handle:
        json.dump(record, handle)
    if dist.is_initialized():
        dist.destroy_process_group()


def run_setting(setting: str, args: argparse.Namespace, out: str) -> list[dict]:
    """Per-process records of one setting, each process fresh."""
    from docgraph.runtime.processes import free_port

    ctx = torch.multiprocessing.get_context("spawn")
    port = free_port()
    ranks = [0] if setting == "alone" else [0, 1]
    procs = [ctx.Process(target=_worker, args=(r, setting, port, args, out)) for r in ranks]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"{setting}: a process failed (exit {proc.exitcode})")
    records = []
    for r in ranks:
        with open(f"{out}.{r}") as handle:
            records.append(json.load(handle))
        os.remove(f"{out}.{r}")
    return records


def main() -> None:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", required=True)
    p.add_argument("--batches", type=int, default=6)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    scratch = f"/tmp/ddp-overhead-{os.getpid()}"
    results = {}
    for setting in SETTINGS:
        records = run_setting(setting, args, scratch)
        results[setting] = records
        phases = "  ".join(
            f"{k} {statistics.fmean(r[k] for r in records):.0f}"
            for k in ("forward", "backward", "optimizer", "step"))
        print(f"{setting:>13}: {phases} ms  ({len(records)} process(es), "
              f"{statistics.fmean(r['tokens_per_step'] for r in records):.0f} tokens each)",
              flush=True)
    ddp = results["ddp"][0]
    print(f"bare all-reduce of {ddp['gradient_floats']} floats: "
          f"{ddp['bare_all_reduce_ms']:.1f} ms")
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as handle:
            json.dump({"settings": results, "batches": args.batches, "rounds": args.rounds,
                       "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
                       "torch": torch.__version__}, handle, indent=2)
            handle.write("\n")


if __name__ == "__main__":
    main()
