"""CPU speed of the lean training steps (80f2580) against an earlier checkout of the code.

Times the same training and tagging batches with two versions of ``docgraph``: this
checkout and another one (``--against DIR``, e.g. a ``git worktree`` of the commit before
the lean steps). Each measurement runs in its own subprocess with that version on
``PYTHONPATH``, one thread, and the versions alternate (A B A B ...) so that both see the
same drift of a shared machine; the figures are tokens per second of *process CPU time*
(less sensitive to other jobs than wall time), median over the rounds.

A training step is forward, backward, gradient clipping and an Adam step on one batch, as
each version's trainer runs it (this checkout: collation with the host-side plan and
``training_step``; an older one: ``Batch.from_data_list`` and its own step); tagging is
``GCDoc.predict``.

    git worktree add /tmp/before 498d924
    python benchmarks/lean_steps.py --against /tmp/before --dataset ontonotes \\
        --data-dir ../shared/data/ontonotes --out benchmarks/results/measurements/lean-steps/X.json
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

WORKER = r'''
import json, sys, time, torch
torch.set_num_threads(1)
from torch_geometric.data import Batch
import docgraph.training.loop as T
from docgraph.config import TrainConfig
from docgraph.data.registry import load_dataset
from docgraph.data.vocab import Vocabularies
from docgraph.batching.sampler import TokenBudgetBatchSampler
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig
dataset, data_dir, split, budget, count, model_name = sys.argv[1:7]
docs = load_dataset(dataset, data_dir or None, splits=(split,))[split]
vocabs = Vocabularies.build(docs)
graphs = documents_to_graphs(docs, vocabs, GraphConfig())
lengths = [int(g.num_nodes) for g in graphs]
batches = TokenBudgetBatchSampler(lengths, int(budget), shuffle=True, seed=0).all_batches()
batches = batches[:int(count) + 1]
config = GCDocConfig.baseline() if model_name == "baseline" else GCDocConfig()
torch.manual_seed(0)
try:  # where the versions keep the model builder and the collation
    from docgraph.persistence.model_dir import build_model
except ImportError:
    build_model = T.build_model
try:
    from docgraph.batching.loader import collate
except ImportError:
    collate = getattr(T, "collate", None)
model = build_model(config, vocabs)
optimizer = T.make_optimizer(model, TrainConfig(optimizer="adam", lr=0.002))
groups = T.clip_groups(model)
lean = hasattr(T, "training_step")
def batch_of(indices):
    if lean:
        return collate(graphs, indices, torch.device("cpu"), model)
    return Batch.from_data_list([graphs[i] for i in indices])
def step(indices):
    batch = batch_of(indices)
    if lean:
        loss, _ = T.training_step(model, optimizer, batch, groups, 5.0)
        return float(loss)
    out = model(batch)
    loss = out.loss / max(out.num_sentences, 1)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    for group in groups:
        torch.nn.utils.clip_grad_norm_(group, 5.0)
    optimizer.step()
    return float(loss.detach())
step(batches[0])  # warm-up (optimizer state)
timed = batches[1:]
tokens = sum(sum(lengths[i] for i in b) for b in timed)
cpu = time.process_time()
for b in timed:
    step(b)
train = time.process_time() - cpu
cpu = time.process_time()
for b in timed:
    model.predict(batch_of(b))
tag = time.process_time() - cpu
print(json.dumps({"tokens": tokens, "train_cpu_s": train, "tag_cpu_s": tag, "lean": lean}))
'''


def measure(code: Path, args: argparse.Namespace, model: str) -> dict:
    """One subprocess run of the worker with the checkout ``code`` on ``PYTHONPATH``."""
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1",
           "PYTHONWARNINGS": "ignore"}
    res = subprocess.run(
        [sys.executable, "-c", WORKER, args.dataset, args.data_dir or "", args.split,
         str(args.batch_tokens), str(args.batches), model],
        capture_output=True, text=True, env=env, cwd=code, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"worker failed in {code}:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="checkout of the earlier code")
    parser.add_argument("--dataset", default="ontonotes")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--split", default="train")
    parser.add_argument("--batch-tokens", type=int, default=4000)
    parser.add_argument("--batches", type=int, default=4, help="timed batches per run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    versions = {"before": Path(args.against).resolve(), "lean": HERE}
    samples: dict[str, dict[str, list[dict]]] = {}
    for _ in range(args.rounds):
        for model in ("baseline", "gcdoc"):
            for name, code in versions.items():
                run = measure(code, args, model)
                samples.setdefault(model, {}).setdefault(name, []).append(run)
                print(name, model, json.dumps(run), flush=True)
    result: dict = {"dataset": args.dataset, "split": args.split,
                    "batch_tokens": args.batch_tokens, "batches": args.batches,
                    "rounds": args.rounds, "against": str(versions["before"]),
                    "against_commit": _commit(versions["before"]), "lean_commit": _commit(HERE),
                    "models": {}}
    for model, by_version in samples.items():
        row = {}
        for name, runs in by_version.items():
            for kind in ("train", "tag"):
                row[f"{name}_{kind}_tokens_per_cpu_s"] = statistics.median(
                    r["tokens"] / r[f"{kind}_cpu_s"] for r in runs)
        for kind in ("train", "tag"):
            row[f"{kind}_speedup"] = (row[f"lean_{kind}_tokens_per_cpu_s"]
                                      / row[f"before_{kind}_tokens_per_cpu_s"])
        result["models"][model] = row
    result["date"] = _dt.datetime.now().isoformat(timespec="seconds")
    result["command"] = " ".join(["python benchmarks/lean_steps.py", *(argv or sys.argv[1:])])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(out)
    for model, row in result["models"].items():
        print(f"{model}: train {row['before_train_tokens_per_cpu_s']:.0f} -> "
              f"{row['lean_train_tokens_per_cpu_s']:.0f} tok/CPU-s (x{row['train_speedup']:.2f}), "
              f"tag {row['before_tag_tokens_per_cpu_s']:.0f} -> "
              f"{row['lean_tag_tokens_per_cpu_s']:.0f} (x{row['tag_speedup']:.2f})")
    return 0


def _commit(path: Path) -> str:
    res = subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)
    return res.stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
