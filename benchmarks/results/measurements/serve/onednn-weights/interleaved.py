"""One worker's tokens per CPU second by pass size with each LSTM call reordering its weights
into oneDNN's layout (``old``: torch's own call, as before) and with the weights kept in that
layout between calls (``new``: docgraph.nn.layout.lstm_direction's call of
``mkldnn_rnn_layer``), in one process of one thread, the two alternating pass by pass on the
same documents, so that the machine's drift falls on both alike. The service's own pass
function (docgraph.serve.worker.tag_pass); also counts the LSTM calls of each path.

    PYTHONPATH=<checkout> python interleaved.py [--kind sentence] [--rounds 3] [--sizes 4 16]
"""

import argparse
import json
import statistics
import sys
import time

import torch

import docgraph.nn.layout as layout
from docgraph.serve.batcher import PassDocument
from docgraph.serve.worker import tag_pass
from docgraph.tagging.tagger import Tagger
from docgraph_dev.serve_load import texts

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="conll03")
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16, 32, 256])
parser.add_argument("--documents", type=int, default=512)
parser.add_argument("--kind", default="sentence")
parser.add_argument("--precision", default="auto")
args = parser.parse_args()
torch.set_num_threads(1)
chosen = layout._onednn_dtype
calls = {"old": 0, "new": 0}


def counted(x, h0, weights):
    dtype = chosen(x, h0, weights)
    calls["new" if dtype is not None else "old"] += 1
    return dtype


variants = {"old": lambda x, h0, weights: None, "new": counted}
tagger = Tagger.load(args.model, threads=1, precision=args.precision)
pool = texts(args.kind, args.documents)
for name in variants:  # warm both paths
    layout._onednn_dtype = variants[name]
    tag_pass(tagger, [PassDocument(f"d{j}", text) for j, text in enumerate(pool[:16])])
rates: dict = {name: {size: [] for size in args.sizes} for name in variants}
for round_ in range(args.rounds):
    for size in args.sizes:
        spent = dict.fromkeys(variants, 0.0)
        tokens = dict.fromkeys(variants, 0)
        for start in range(0, len(pool) - size + 1, size):
            batch = [PassDocument(f"d{j}", text) for j, text in enumerate(pool[start:start + size])]
            order = list(variants) if (start // size + round_) % 2 == 0 else list(variants)[::-1]
            for name in order:
                layout._onednn_dtype = variants[name]
                begin = time.process_time()
                tokens[name] += sum(count for _, count in tag_pass(tagger, batch))
                spent[name] += time.process_time() - begin
        for name in variants:
            rates[name][size].append(round(tokens[name] / spent[name], 1))
layout._onednn_dtype = chosen
json.dump({"model": args.model, "kind": args.kind, "precision": args.precision,
           "documents": len(pool), "rounds": args.rounds,
           "lstm_calls_on_the_kept_weights": calls["new"],
           "lstm_calls_left_to_torch_by_the_new_path": calls["old"],
           "tokens_per_cpu_second": rates,
           "median": {name: {size: statistics.median(v) for size, v in by.items()}
                      for name, by in rates.items()},
           "new_over_old": {size: round(statistics.median(rates["new"][size])
                                        / statistics.median(rates["old"][size]), 3)
                            for size in args.sizes}}, sys.stdout, indent=1)
print()
