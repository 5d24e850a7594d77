"""Compare the two tiny sample-corpus runs of train_check.py (trees before and after): weights and per-epoch losses and dev F1.

    python train_compare.py RUN_BEFORE RUN_AFTER
"""
import json
import sys

import torch

a, b = sys.argv[1], sys.argv[2]
wa = torch.load(f"{a}/model.pt", weights_only=True)
wb = torch.load(f"{b}/model.pt", weights_only=True)


def flat(d, prefix=""):
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flat(v, prefix + k + "."))
        elif torch.is_tensor(v):
            out[prefix + k] = v
    return out


fa, fb = flat(wa), flat(wb)
print("tensors", len(fa), len(fb), "same names", set(fa) == set(fb),
      "all equal bit for bit", all(torch.equal(fa[k], fb[k]) for k in fa))
for la, lb in zip(open(f"{a}/train_log.jsonl"), open(f"{b}/train_log.jsonl")):
    ea, eb = json.loads(la), json.loads(lb)
    keys = [k for k in ea if "f1" in k or "loss" in k]
    print({k: ea[k] for k in keys}, "equal" if all(ea[k] == eb[k] for k in keys) else "DIFFERENT")
