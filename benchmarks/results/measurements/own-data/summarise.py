"""Summarise the own-data runs: settings, epochs, own-dev F1, CoNLL-2003 dev and test F1."""
import json
import sys
from pathlib import Path

RUNS = Path(__file__).resolve().parent
KEYS = ("optimizer", "lr", "loss_reduction", "batch_tokens", "epochs", "patience", "min_steps",
        "processes")
rows = []
for name in sys.argv[1:]:
    run = RUNS / name
    metrics = json.loads((run / "metrics.json").read_text())
    train = metrics["config"]["train"]
    row = {"run": name, "command": metrics["command"],
           "settings": {k: train.get(k) for k in KEYS},
           "epochs_run": metrics["epochs"], "best_epoch": metrics["best_epoch"],
           "stop_reason": metrics["stop_reason"], "train_seconds": metrics["train_seconds"],
           "own_dev_f1": round(metrics["dev"]["f1"], 2)}
    for split in ("dev", "test"):
        scored = run / "conll03" / f"{split}_metrics.json"
        row[f"conll03_{split}_f1"] = (round(json.loads(scored.read_text())[split]["f1"], 2)
                                      if scored.is_file() else None)
    rows.append(row)
print(json.dumps(rows, indent=1))
