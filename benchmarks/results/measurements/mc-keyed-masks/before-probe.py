"""The probe behind before-47de190.log (run with the code of 47de190; tidied for ruff after the
run, same calls): dev F1 of one trained GCDoc tagged in several ways with the global-stream
Monte-Carlo masks of that code.

    python before-probe.py runs/ontonotes-gcdoc-ddp2-cpu/seed-3
"""
import json
import sys
import time

import torch

from docgraph.data.registry import load_dataset
from docgraph.inference import predict_graphs, score_predictions
from docgraph.model_dir import load_model_dir
from docgraph.splits import prepare_split

torch.set_num_threads(2)
model, vocabs, config = load_model_dir(sys.argv[1], "cpu")
model.eval()
docs = load_dataset(config.dataset, None, splits=("dev",))["dev"]
prep = prepare_split(docs, vocabs, config)
bt = config.train.eval_batch_tokens
res = {}


def run(name, fn):
    start = time.time()
    f1 = score_predictions(prep, fn()).f1
    res[name] = f1
    print(name, round(f1, 2), f"{time.time() - start:.0f}s", flush=True)


def sharded():
    graphs = prep.graphs
    out = [None] * len(graphs)
    for rank in range(2):
        idx = list(range(rank, len(graphs), 2))
        for i, tags in zip(idx, predict_graphs(model, [graphs[i] for i in idx], vocabs, bt)):
            out[i] = tags
    return out


for seed in range(4):
    run(f"seed{seed}", lambda s=seed: predict_graphs(model, prep.graphs, vocabs, bt, seed=s))
run("sharded2", sharded)
run("bt2000", lambda: predict_graphs(model, prep.graphs, vocabs, 2000))
model.set_threshold(100.0)
run("noprune", lambda: predict_graphs(model, prep.graphs, vocabs, bt))
print(json.dumps(res))
