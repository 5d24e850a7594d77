"""One worker's tokens/s by pass size with the length buckets chosen by padded steps alone
(``old``: as before the grid's rows counted) and by the steps they pad on the shape grid,
rows included (``new``: docgraph.nn.layout.length_partition with the grid's row quantum), in
one process of one thread, the two alternating pass by pass on the same documents, so that
the machine's drift falls on both alike. The service's own pass function
(docgraph.serve.worker.tag_pass) on documents of one kind (one sentence by default).

    PYTHONPATH=<checkout> python interleaved.py [--kind sentence] [--rounds 3] [--sizes 4 8 16]
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
parser.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16, 32, 256])
parser.add_argument("--documents", type=int, default=512)
parser.add_argument("--kind", default="sentence")
args = parser.parse_args()
torch.set_num_threads(1)
partition = layout.length_partition
variants = {"old": lambda lengths, buckets, row_quantum=1: partition(lengths, buckets),
            "new": partition}
tagger = Tagger.load(args.model, threads=1)
pool = texts(args.kind, args.documents)
rates: dict = {name: {size: [] for size in args.sizes} for name in variants}
for round_ in range(args.rounds):
    for size in args.sizes:
        spent = dict.fromkeys(variants, 0.0)
        tokens = dict.fromkeys(variants, 0)
        for start in range(0, len(pool) - size + 1, size):
            batch = [PassDocument(f"d{j}", text) for j, text in enumerate(pool[start:start + size])]
            order = list(variants) if (start // size + round_) % 2 == 0 else list(variants)[::-1]
            for name in order:
                layout.length_partition = variants[name]
                begin = time.process_time()
                tokens[name] += sum(count for _, count in tag_pass(tagger, batch))
                spent[name] += time.process_time() - begin
        for name in variants:
            rates[name][size].append(round(tokens[name] / spent[name], 1))
layout.length_partition = partition
json.dump({"model": args.model, "kind": args.kind, "documents": len(pool), "rounds": args.rounds,
           "tokens_per_cpu_second": rates,
           "median": {name: {size: statistics.median(v) for size, v in by.items()}
                      for name, by in rates.items()}}, sys.stdout, indent=1)
print()
