"""Calibration of the entity scores of trained models on their corpus's dev and test splits.

For each model: every dev and test document is tagged once (in chunks, as
``evaluate.py`` tags them) and its entities scored at each candidate temperature
(:func:`docgraph.tagging.calibration.temperature_grid`, one network pass per batch); the
temperature with the lowest dev log loss is fitted
(:func:`~docgraph.tagging.calibration.fit_temperature`); the expected calibration error and
reliability bins on dev and test at the model's temperature and at the fitted one, and the
precision and recall of test entities over the score threshold (``--min-score``), go to the
JSON; ``--png`` draws the test reliability diagrams. ``--write`` stores the fitted
temperature in the model directory (``[model] score_temperature``) when it lowers the dev
ECE. Nothing is chosen on test.

    python benchmarks/calibration.py --models conll03 ontonotes \\
        --out benchmarks/results/measurements/calibration/shipped.json --png DIR --write
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from docgraph.runtime.atomic import atomic_write_json
from docgraph.tagging.calibration import (
    calibration,
    entity_outcomes,
    fit_temperature,
    precision_recall,
    temperature_grid,
)

THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def model_calibration(name: str, data_dir: str | None, limit: int | None = None,
                      bins: int = 10) -> tuple[dict, dict]:
    """The calibration record of one model, and its test outcomes at the model's and the
    fitted temperature (for the diagrams)."""
    from docgraph.data.registry import load_dataset
    from docgraph.tagging.pipeline import bounded_threads, score_in_process
    from docgraph.tagging.tagger import Tagger

    tagger = Tagger.load(name, threads=0, speed="faithful")
    current = tagger.model.config.score_temperature
    grid = sorted(set(temperature_grid()) | {current})
    splits = load_dataset(tagger.config.dataset, data_dir, splits=("dev", "test"))
    outcomes: dict[str, dict[float, list]] = {}
    gold: dict[str, int] = {}
    seconds: dict[str, float] = {}
    for split in ("dev", "test"):
        chunks = [c for c in tagger.chunks(splits[split][:limit]) if c.sentences]
        start = time.perf_counter()
        with bounded_threads(tagger.threads):
            by_temperature = score_in_process(chunks, tagger, grid)
        seconds[split] = time.perf_counter() - start
        outcomes[split] = {}
        for t, taggings in zip(grid, by_temperature):
            outcomes[split][t], gold[split] = entity_outcomes(chunks, taggings)
    fitted = fit_temperature(outcomes["dev"])
    record = {
        "model": name, "dataset": tagger.config.dataset, "bins": bins,
        "model_temperature": current, "fitted_temperature": fitted, "grid": grid,
        "seconds": seconds, "gold_entities": gold,
        "dev_log_loss_by_temperature": {str(t): calibration(o, bins).log_loss
                                        for t, o in outcomes["dev"].items()},
    }
    for split in ("dev", "test"):
        for label, t in (("model", current), ("fitted", fitted)):
            record[f"{split}_{label}"] = calibration(outcomes[split][t], bins).to_dict()
    record["test_precision_recall"] = precision_recall(outcomes["test"][fitted], gold["test"],
                                                       THRESHOLDS)
    return record, {"model": outcomes["test"][current], "fitted": outcomes["test"][fitted]}


def draw_reliability(record: dict, path: Path) -> None:
    """The test reliability diagrams (model's and fitted temperature) of one model, as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), sharey=True)
    for ax, label in zip(axes, ("model", "fitted")):
        cal = record[f"test_{label}"]
        t = record["model_temperature"] if label == "model" else record["fitted_temperature"]
        bins = [b for b in cal["bins"] if b["count"]]
        width = 1.0 / record["bins"]
        ax.bar([b["low"] for b in bins], [b["accuracy"] for b in bins], width=width,
               align="edge", edgecolor="black", color="#7aa6d8", label="share right")
        ax.plot([0, 1], [0, 1], "k--", linewidth=1, label="calibrated")
        ax.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], "o",
                color="#c0392b", markersize=4, label="mean score")
        ax.set_title(f"{record['model']} test, T = {t:g}: ECE {cal['ece']:.3f}")
        ax.set_xlabel("entity score")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
    axes[0].set_ylabel("share of entities right")
    axes[0].legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line of ``benchmarks/calibration.py``."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", required=True,
                        help="shipped model names or model directories")
    parser.add_argument("--data-dir", default=None,
                        help="directory of the corpora (default: $DOCGRAPH_DATA_DIR)")
    parser.add_argument("--out", type=Path, required=True, help="the JSON to write")
    parser.add_argument("--png", type=Path, default=None,
                        help="folder for the reliability diagrams (<model>-reliability.png)")
    parser.add_argument("--limit", type=int, default=None,
                        help="the first N documents of each split only")
    parser.add_argument("--write", action="store_true",
                        help="store the fitted temperature in each model directory when it "
                             "lowers the dev ECE")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit: must be >= 1, got {args.limit}")
    results = []
    for name in args.models:
        record, _ = model_calibration(name, args.data_dir, args.limit)
        written = False
        if args.write and record["dev_fitted"]["ece"] < record["dev_model"]["ece"]:
            from docgraph.persistence.locate import locate_model_dir
            from docgraph.persistence.manifest import save_score_temperature

            save_score_temperature(locate_model_dir(name), record["fitted_temperature"])
            written = True
        record["written"] = written
        results.append(record)
        print(f"{name}: T {record['model_temperature']:g} -> {record['fitted_temperature']:g} "
              f"(dev ECE {record['dev_model']['ece']:.4f} -> {record['dev_fitted']['ece']:.4f}; "
              f"test ECE {record['test_model']['ece']:.4f} -> "
              f"{record['test_fitted']['ece']:.4f}){' written' if written else ''}",
              flush=True)
        if args.png is not None:
            args.png.mkdir(parents=True, exist_ok=True)
            draw_reliability(record, args.png / f"{Path(name).name}-reliability.png")
        atomic_write_json(args.out, {"argv": sys.argv[1:], "results": results})
    return 0
