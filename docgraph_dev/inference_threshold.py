"""How do a trained GCDoc's F1 and document consistency move with the pruning threshold?

The uncertainty threshold :math:`\\mathcal{T}` decides which tokens form *Drop* (paper value
0.5). At 0.5 the converged default model prunes 30% of the gold entity tokens of CoNLL-2003 dev
but 6% of all tokens (``benchmarks/edge_weights.py``). This script loads a trained run
directory and, for each threshold given, tags a split with the threshold replaced *at inference
only* and reports entity F1 and the document-consistency metrics
(:func:`~docgraph.tagging.inference.split_consistency`). A threshold above :math:`\\ln C` (the
largest
possible entropy over ``C`` labels) prunes nothing.

The model was trained with its own threshold, so other thresholds show what the trained weights
do with more (or fewer) messages, not what a model trained at that threshold would reach; that
needs converged training runs (``--threshold``, job set ``threshold-sweep`` of
``benchmarks/gpu/run.sh``).

    python benchmarks/inference_threshold.py RUN_DIR [--split dev] [--thresholds 0.5 1.0 ...]
        [--data-dir DIR] [--seed 0] [--out OUT.json]

``--summarize`` reads the dev and test JSON files of several runs (seeds of one configuration)
and prints, per threshold, the mean dev and test F1 over the runs, then each run's threshold
chosen on dev (test is never used to choose) and the test F1 there against ``--baseline`` (the
trained threshold), optionally against the test F1 of other runs (``--against``, Welch's
t-test):

    python benchmarks/inference_threshold.py --summarize S1-dev.json S1-test.json ...
        [--baseline 0.5] [--against RUN_DIR ...]
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from docgraph.graph.splits import prepare_run_split
from docgraph.persistence.checkpoint import CheckpointError
from docgraph.persistence.locate import read_model_files
from docgraph.persistence.model_dir import ModelOverrides, load_model_weights, read_model_dir
from docgraph.runtime.atomic import atomic_write_json
from docgraph.tagging.inference import evaluate, split_consistency
from docgraph_dev.report.stats import mean_std, welch_t_test


@dataclass
class ThresholdResult:
    """Scores of one threshold (percentages).

    Args:
        threshold: The uncertainty threshold used at inference.
        f1: Entity-level micro F1.
        f1_recurrent: F1 on gold mentions containing a word that recurs in the document.
        inconsistent_groups: Share of repeated mention strings given more than one type
            (``None`` when no string repeats).
        against_majority: Share of predicted entities against their string's majority type.
    """

    threshold: float
    f1: float
    f1_recurrent: float
    inconsistent_groups: float | None
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
    files = read_model_files(run_dir)
    config, vocabs = read_model_dir(files)
    if not thresholds:
        return []
    ModelOverrides(threshold=thresholds[0]).check(config, files)  # before building graphs
    prepared = prepare_run_split(config, vocabs, split, data_dir)
    results = []
    for threshold in thresholds:
        model = load_model_weights(files.directory, config, vocabs,
                                   overrides=ModelOverrides(threshold=threshold))
        scores, predictions = evaluate(model, prepared, vocabs, config.train.eval_batch_tokens,
                                       seed=seed)
        consistency = split_consistency(prepared, predictions)
        results.append(ThresholdResult(
            threshold=float(threshold), f1=scores.f1, f1_recurrent=consistency.recurrent.f1,
            inconsistent_groups=consistency.pred.mixed,
            against_majority=consistency.pred.disagreement))
    return results


def format_results(results: Sequence[ThresholdResult]) -> str:
    """The results as an aligned text table."""
    lines = ["threshold   F1      F1 recurring   inconsistent groups   against majority"]
    lines += [f"{r.threshold:9.2f}   {r.f1:5.2f}   {r.f1_recurrent:12.2f}   "
              + (f"{'n/a':>19}" if r.inconsistent_groups is None
                 else f"{r.inconsistent_groups:18.2f}%")
              + f"   {r.against_majority:15.2f}%" for r in results]
    return "\n".join(lines)


def _runs_by_split(payloads: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[float, Any]]]:
    """``{run_dir: {split: {threshold: result}}}`` of :func:`main`'s JSON payloads; every run
    needs a dev and a test payload with the same thresholds."""
    runs: dict[str, dict[str, dict[float, Any]]] = {}
    for payload in payloads:
        by_threshold = {float(r["threshold"]): r for r in payload["results"]}
        runs.setdefault(payload["run_dir"], {})[payload["split"]] = by_threshold
    for run_dir, splits in runs.items():
        if set(splits) != {"dev", "test"} or set(splits["dev"]) != set(splits["test"]):
            raise ValueError(f"{run_dir}: needs a dev and a test file with the same thresholds "
                             f"(got {', '.join(sorted(splits))})")
    return runs


def summarize(payloads: Sequence[dict[str, Any]], baseline: float = 0.5,
              against: Sequence[float] = ()) -> str:
    """A text summary of several runs' threshold sweeps (see the module docstring).

    Args:
        payloads: The JSON payloads written by :func:`main` (a dev and a test one per run).
        baseline: The threshold the dev-chosen one is compared with (the trained one).
        against: Test F1 of other runs (e.g. the BiLSTM-CRF's seeds) to compare the mean test
            F1 at the dev-chosen thresholds with.

    Raises:
        ValueError: If a run lacks a split or a split lacks the baseline threshold.
    """
    runs = _runs_by_split(payloads)
    thresholds = sorted(set.intersection(*(set(s["dev"]) for s in runs.values())))
    if baseline not in thresholds:
        raise ValueError(f"the baseline threshold {baseline} is not in every sweep")
    lines = [f"{len(runs)} runs: {', '.join(runs)}",
             "threshold   dev F1          test F1         test inconsistent groups"]
    for t in thresholds:
        dev = mean_std([s["dev"][t]["f1"] for s in runs.values()])
        test = mean_std([s["test"][t]["f1"] for s in runs.values()])
        counted = [s["test"][t]["inconsistent_groups"] for s in runs.values()
                   if s["test"][t]["inconsistent_groups"] is not None]
        groups = mean_std(counted) if counted else None
        lines.append(f"{t:9.2f}   {dev[0]:5.2f} ± {dev[1]:4.2f}   {test[0]:5.2f} ± {test[1]:4.2f}"
                     + ("   n/a" if groups is None else f"   {groups[0]:5.2f} ± {groups[1]:4.2f}%"))
    chosen_f1, baseline_f1 = [], []
    for run_dir, splits in runs.items():
        # ties go to the lower threshold (the one nearer the trained model)
        best = max(thresholds, key=lambda t: (splits["dev"][t]["f1"], -t))
        chosen_f1.append(splits["test"][best]["f1"])
        baseline_f1.append(splits["test"][baseline]["f1"])
        lines.append(f"{run_dir}: dev-chosen threshold {best:g}, test F1 "
                     f"{baseline_f1[-1]:.2f} at {baseline:g} -> {chosen_f1[-1]:.2f} "
                     f"({chosen_f1[-1] - baseline_f1[-1]:+.2f})")
    chosen, base = mean_std(chosen_f1), mean_std(baseline_f1)
    lines.append(f"mean test F1: {base[0]:.2f} ± {base[1]:.2f} at {baseline:g}, "
                 f"{chosen[0]:.2f} ± {chosen[1]:.2f} at the dev-chosen thresholds")
    if against:
        other = mean_std(list(against))
        for name, values, mean in ((f"at {baseline:g}", baseline_f1, base[0]),
                                   ("dev-chosen", chosen_f1, chosen[0])):
            _, _, p_value = welch_t_test(values, list(against))
            lines.append(f"against {other[0]:.2f} ± {other[1]:.2f} (n = {len(against)}): "
                         f"{name} {mean - other[0]:+.2f}, Welch p = {p_value:.3f}")
    return "\n".join(lines)


def _summarize_main(args: argparse.Namespace) -> None:
    payloads = []
    for name in args.summarize:
        try:
            payloads.append(json.loads(Path(name).read_text()))
        except (OSError, json.JSONDecodeError) as err:
            raise SystemExit(f"{name}: expected a JSON file of inference_threshold.py: {err}"
                             ) from None
    against = []
    for run_dir in args.against:
        try:
            against.append(json.loads((Path(run_dir) / "metrics.json").read_text())["test"]["f1"])
        except (OSError, json.JSONDecodeError, KeyError) as err:
            raise SystemExit(f"{run_dir}: expected a run directory with a test F1 in "
                             f"metrics.json: {err}") from None
    try:
        print(summarize(payloads, args.baseline, against))
    except (ValueError, KeyError) as err:
        raise SystemExit(f"--summarize: {err}") from None


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", nargs="?", help="a trained GCDoc model directory with pruning")
    p.add_argument("--summarize", nargs="+", default=None, metavar="JSON",
                   help="summarise the dev and test JSON files of several runs instead")
    p.add_argument("--baseline", type=float, default=0.5,
                   help="with --summarize: the trained threshold to compare with (default: 0.5)")
    p.add_argument("--against", nargs="+", default=[], metavar="RUN_DIR",
                   help="with --summarize: run directories whose test F1 to compare with")
    p.add_argument("--split", default="dev", help="split of the run's data set (default: dev)")
    p.add_argument("--thresholds", type=float, nargs="+", default=[0.5, 1.0, 1.5, 100.0],
                   help="thresholds to tag with (default: 0.5 1.0 1.5 100; 100 prunes nothing)")
    p.add_argument("--data-dir", default=None,
                   help="corpus directory (default: the run's, else DOCGRAPH_DATA_DIR)")
    p.add_argument("--seed", type=int, default=0, help="seed of the Monte-Carlo dropout")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=None, help="JSON file to write")
    args = p.parse_args(argv)
    if args.summarize is not None:
        return _summarize_main(args)
    if args.run_dir is None:
        p.error("give a run directory, or --summarize JSON files")
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
