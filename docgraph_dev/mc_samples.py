"""How many Monte-Carlo dropout passes T does the graph pruning need?

The paper does not give T (we use 8). For a trained GCDoc model this script draws the
uncertainty of every dev token with T passes, for several T, and compares the pruning decision
(``u > threshold``, the set *Drop*) with a high-T reference (the mean over ``--reference``
passes). Each T is drawn ``--draws`` times with different seeds; the script reports the share
of tokens whose decision differs from the reference, the share dropped, the mean absolute error
of the entropy, and the wall time of the passes on this machine.

    python benchmarks/mc_samples.py RUN_DIR --data-dir DIR --out OUT.json
"""
from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

import torch
from torch_geometric.data import Batch

from docgraph.batching.loader import iterate_batches
from docgraph.batching.sampler import TokenBudgetBatchSampler
from docgraph.data.registry import load_dataset
from docgraph.graph.splits import prepare_split
from docgraph.model import GCDoc
from docgraph.persistence.model_dir import load_model_dir
from docgraph.runtime.atomic import atomic_write_json


def mc_passes(model: GCDoc, batches: Sequence[Batch], samples: int, seed: int
              ) -> tuple[torch.Tensor, torch.Tensor, float]:
    """Entropies ``[N]`` and mean distributions ``[N, C]`` of every token of ``batches`` with
    ``samples`` Monte-Carlo passes, and the seconds the passes took."""
    unc = model.document_graph.uncertainty
    saved = unc.num_samples
    unc.num_samples = samples
    torch.manual_seed(seed)
    entropies, probs, seconds = [], [], 0.0
    try:
        with torch.no_grad():
            for batch in batches:
                plan = model.plan(batch)
                x = model._token_features(batch, plan)
                start = time.perf_counter()
                u, p = unc.uncertainty(x, batch.sent_len, plan.sentences)
                seconds += time.perf_counter() - start
                entropies.append(u)
                probs.append(p)
    finally:
        unc.num_samples = saved
    return torch.cat(entropies), torch.cat(probs), seconds


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", help="a trained GCDoc run directory (model.pt, config.json)")
    p.add_argument("--data-dir", default=None,
                   help="corpus directory of the run's data set (default: DOCGRAPH_DATA_DIR)")
    p.add_argument("--samples", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    p.add_argument("--reference", type=int, default=256,
                   help="passes of the reference (a multiple of 32)")
    p.add_argument("--draws", type=int, default=3, help="independent draws per T")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=None, help="JSON file to write")
    args = p.parse_args(argv)
    if args.reference < 32 or args.reference % 32:
        p.error(f"--reference must be a positive multiple of 32 (got {args.reference})")
    torch.set_num_threads(args.threads)

    model, vocabs, config = load_model_dir(args.run_dir)
    if model.document_graph is None or model.document_graph.uncertainty is None:
        raise SystemExit(f"{args.run_dir}: this model has no uncertainty sub-module")
    dev = prepare_split(load_dataset(config.dataset, args.data_dir, ["dev"])["dev"], vocabs,
                        config)
    sampler = TokenBudgetBatchSampler([int(g.num_nodes) for g in dev.graphs],
                                      config.train.eval_batch_tokens, shuffle=False)
    batches = [b for _, b in iterate_batches(dev.graphs, sampler, torch.device("cpu"))]
    threshold = model.document_graph.uncertainty.threshold

    # The reference averages the predictive distributions of many passes (entropies do not
    # average), drawn 32 passes at a time to keep memory bounded.
    probs = [mc_passes(model, batches, 32, seed=10_000 + k)[1]
             for k in range(args.reference // 32)]
    p_ref = torch.stack(probs).mean(0)
    u_ref = model.document_graph.uncertainty.entropy(p_ref)
    drop_ref = u_ref > threshold

    rows = []
    for samples in args.samples:
        flips, dropped, mae, secs = [], [], [], []
        for draw in range(args.draws):
            u, _, seconds = mc_passes(model, batches, samples, seed=draw)
            drop = u > threshold
            flips.append(100.0 * (drop != drop_ref).float().mean().item())
            dropped.append(100.0 * drop.float().mean().item())
            mae.append((u - u_ref).abs().mean().item())
            secs.append(seconds)
        row = {"T": samples, "decision_differs_pct": statistics.mean(flips),
               "dropped_pct": statistics.mean(dropped), "entropy_mae": statistics.mean(mae),
               "seconds": statistics.median(secs)}
        rows.append(row)
        print(f"T={samples:4d}  decision differs from the reference on "
              f"{row['decision_differs_pct']:5.2f}%"
              f"  dropped {row['dropped_pct']:5.2f}%  entropy MAE {row['entropy_mae']:.4f}"
              f"  {row['seconds']:.2f} s")
    result = {
        "run_dir": str(args.run_dir), "dataset": config.dataset, "split": "dev",
        "tokens": int(u_ref.numel()), "threshold": threshold, "reference_T": args.reference,
        "reference_dropped_pct": 100.0 * drop_ref.float().mean().item(), "draws": args.draws,
        "threads": args.threads, "torch": torch.__version__, "cpu": platform.processor(),
        "rows": rows,
    }
    print(f"reference (T={args.reference}) drops {result['reference_dropped_pct']:.2f}% "
          f"of {result['tokens']} dev tokens")
    if args.out:
        atomic_write_json(Path(args.out), result)


if __name__ == "__main__":
    main()
