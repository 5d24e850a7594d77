"""How do a trained GCDoc's F1 and document consistency move with the pruning threshold?

The uncertainty threshold :math:`\\mathcal{T}` decides which tokens form *Drop* (paper value
0.5). At 0.5 the converged default model prunes 30% of the gold entity tokens of CoNLL-2003 dev
but 6% of all tokens (``benchmarks/edge_weights.py``). This script loads a trained run
directory and, for each threshold given, tags a split with the threshold replaced *at inference
only* and reports entity F1 and the document-consistency metrics
(:func:`~docgraph.inference.split_consistency`). A threshold above :math:`\\ln C` (the largest
possible entropy over ``C`` labels) prunes nothing.

The model was trained with its own threshold, so other thresholds show what the trained weights
do with more (or fewer) messages, not what a model trained at that threshold would reach; that
needs converged training runs (``--threshold``, job set ``issue13d`` of
``benchmarks/gpu/run.sh``).

    python benchmarks/inference_threshold.py RUN_DIR [--split dev] [--thresholds 0.5 1.0 ...]
        [--data-dir DIR] [--seed 0] [--out OUT.json]
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from docgraph.atomic import atomic_write_json
from docgraph.checkpoint import CheckpointError
from docgraph.inference import evaluate, split_consistency
from docgraph.model_dir import load_model_dir
from docgraph.splits import prepare_run_split


@dataclass
class ThresholdResult:
    """Scores of one threshold (percentages).

    Args:
        threshold: The uncertainty threshold used at inference.
        f1: Entity-level micro F1.
        f1_recurrent: F1 on gold mentions containing a word that recurs in the document.
        inconsistent_groups: Share of repeated mention strings given more than one type.
        against_majority: Share of predicted entities against their string's majority type.
    """

    threshold: float
    f1: float
    f1_recurrent: float
    inconsistent_groups: float
    against_majority: float


def measure(run_dir: str | Path, thresholds: Sequence[float], split: str = "dev",
            data_dir: str | None = None, seed: int = 0) -> list[ThresholdResult]:
    """Tag ``split`` once per threshold with a trained model and score each.

    Args:
        run_dir: A model directory (``model.pt``, ``config.json``, ``vocab.json``).
        thresholds: Uncertainty thresholds to prune with at inference.
        split: The split of the run's data set.
        data_dir: Corpus directory (default: the run's, else ``DOCGRAPH_DATA_DIR``).
        seed: Seed of the Monte-Carlo dropout (the same masks at every threshold).

    Returns:
        One result per threshold, in the given order.

    Raises:
        ValueError: If the model does not prune (no uncertainty module).
    """
    model, vocabs, config = load_model_dir(run_dir)
    if not thresholds:
        return []
    model.set_threshold(thresholds[0])  # fails before the graphs are built if it cannot prune
    prepared = prepare_run_split(config, vocabs, split, data_dir)
    results = []
    for threshold in thresholds:
        model.set_threshold(threshold)
        scores, predictions = evaluate(model, prepared, vocabs, config.train.eval_batch_tokens,
                                       seed=seed)
        consistency = split_consistency(prepared, predictions)
        results.append(ThresholdResult(
            threshold=float(threshold), f1=scores.f1, f1_recurrent=consistency.recurrent.f1,
            inconsistent_groups=100.0 - consistency.pred.consistency,
            against_majority=consistency.pred.disagreement))
    return results


def format_results(results: Sequence[ThresholdResult]) -> str:
    """The results as an aligned text table."""
    lines = ["threshold   F1      F1 recurring   inconsistent groups   against majority"]
    lines += [f"{r.threshold:9.2f}   {r.f1:5.2f}   {r.f1_recurrent:12.2f}   "
              f"{r.inconsistent_groups:18.2f}%   {r.against_majority:15.2f}%" for r in results]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", help="a trained GCDoc model directory with pruning")
    p.add_argument("--split", default="dev", help="split of the run's data set (default: dev)")
    p.add_argument("--thresholds", type=float, nargs="+", default=[0.5, 1.0, 1.5, 100.0],
                   help="thresholds to tag with (default: 0.5 1.0 1.5 100; 100 prunes nothing)")
    p.add_argument("--data-dir", default=None,
                   help="corpus directory (default: the run's, else DOCGRAPH_DATA_DIR)")
    p.add_argument("--seed", type=int, default=0, help="seed of the Monte-Carlo dropout")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=None, help="JSON file to write")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        results = measure(args.run_dir, args.thresholds, args.split, args.data_dir, args.seed)
    except (ValueError, FileNotFoundError, CheckpointError) as err:
        raise SystemExit(f"{args.run_dir}: {err}") from None
    print(f"{args.run_dir} ({args.split})")
    print(format_results(results))
    if args.out:
        payload: dict[str, Any] = {"run_dir": str(args.run_dir), "split": args.split,
                                   "seed": args.seed,
                                   "results": [vars(r) for r in results]}
        atomic_write_json(Path(args.out), payload)


if __name__ == "__main__":
    main()
