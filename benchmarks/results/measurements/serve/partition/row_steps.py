"""Padded LSTM row-steps per token of the service's pass function on one-sentence documents,
by pass size: every call of every BiLSTM direction counted (rows x steps of its input), by the
LSTM's hidden size (50: characters, 100: the Monte-Carlo tagger, 150: sentence encoders,
200: the word encoder). 2.0 is no padding at all (two directions).

    PYTHONPATH=<checkout> python row_steps.py [--model conll03]
"""

import argparse
import collections
import json
import sys

import torch

import docgraph.nn.layout as layout
from docgraph.serve.batcher import PassDocument
from docgraph.serve.worker import tag_pass
from docgraph.tagging.tagger import Tagger
from docgraph_dev.serve_load import texts

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="conll03")
args = parser.parse_args()
torch.set_num_threads(1)
tagger = Tagger.load(args.model, threads=1)
pool = texts("sentence", 512)
steps: collections.Counter = collections.Counter()
calls: collections.Counter = collections.Counter()
direction = layout.lstm_direction


def counted(lstm, x, suffix, h0=None):
    steps[lstm.hidden_size] += x.shape[0] * x.shape[1]
    calls[lstm.hidden_size] += 1
    return direction(lstm, x, suffix, h0)


layout.lstm_direction = counted
found = {}
for size in (1, 4, 8, 16, 32, 256):
    steps.clear()
    calls.clear()
    tokens = passes = 0
    for start in range(0, len(pool), size):
        batch = [PassDocument(f"d{j}", text) for j, text in enumerate(pool[start:start + size])]
        tokens += sum(count for _, count in tag_pass(tagger, batch))
        passes += 1
    found[size] = {f"hidden {h}": {"row_steps_per_token": round(steps[h] / tokens, 2),
                                   "calls_per_pass": round(calls[h] / passes, 1)}
                   for h in sorted(steps)}
json.dump({"model": args.model, "documents": len(pool), "by_pass_size": found}, sys.stdout,
          indent=1)
print()
