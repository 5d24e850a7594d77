"""Train the tiny sample-corpus model (seed 1, 3 epochs) with whichever docgraph is on the path; save weights + metrics."""
import json, os, sys
sys.path.insert(0, "/work/main/tests")
import torch
torch.set_num_threads(1)
from conftest import tiny_config
from docgraph.training.experiment import run_experiment
out = sys.argv[1]
metrics = run_experiment(tiny_config(out))
print(json.dumps({k: v for k, v in metrics.items() if isinstance(v, (int, float, str))} if isinstance(metrics, dict) else str(metrics))[:2000])
