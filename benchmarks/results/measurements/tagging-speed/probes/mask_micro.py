"""The Monte-Carlo masks of one 2,700-token batch (T = 8, 150 inputs, 200 outputs, five
documents) drawn by the uncertainty module of two trees, alternating, 15 repeats: CPU ms.

    python mask_micro.py BEFORE_TREE AFTER_TREE
"""
import importlib.util
import statistics
import sys
import time

import torch

torch.set_num_threads(1)


def tagger(tree, name):
    spec = importlib.util.spec_from_file_location(name, f"{tree}/docgraph/nn/uncertainty.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.UncertaintyTagger(150, 100, num_labels=73, num_samples=8).eval()


torch.manual_seed(0)
before, after = tagger(sys.argv[1], "before_uq"), tagger(sys.argv[2], "after_uq")
x = torch.randn(2700, 150)
sizes, seeds = [400, 500, 300, 600, 900], [1, 2, 3, 4, 5]
a = before._segment_masks(x, sizes, seeds)
b = after._segment_masks(x, sizes, seeds)
print("masks equal bit for bit:", all(torch.equal(p, q) for p, q in zip(a, b)))
ta, tb = [], []
for _ in range(15):
    t = time.process_time(); before._segment_masks(x, sizes, seeds); ta.append(time.process_time() - t)
    t = time.process_time(); after._segment_masks(x, sizes, seeds); tb.append(time.process_time() - t)
print(f"before {statistics.median(ta) * 1e3:.1f} ms, after {statistics.median(tb) * 1e3:.1f} ms (medians)")
