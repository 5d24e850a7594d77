"""Do the relation scores r_ij of a trained GCDoc separate same-type from different-type edges?

The selective auxiliary classifier (paper, Eq. edge_weight) scores every edge of the document
graph with :math:`r_{ij} \\in (0, 1)`, trained towards "same entity category". For a trained
run directory and a data split this script runs the model (eval mode, Monte-Carlo dropout from
``--seed``) on the graphs the run builds (its :class:`~docgraph.graph.GraphConfig`, sampling
seed resolved with :meth:`~docgraph.config.ExperimentConfig.graph_config`) and reports, with
the *gold* types of both ends of every edge:

* the share of O--O edges (both ends outside any entity) and of entity--O edges;
* on the entity--entity edges, the AUC of :math:`r_{ij}` for same-type (positive) against
  different-type (negative) edges -- the probability that a random same-type edge scores
  higher than a random different-type one, ties counting one half, computed from ranks
  (Mann-Whitney U) -- and the mean :math:`r_{ij}` of each class (and of the O--O and
  entity--O edges);
* the pruned share: tokens in the uncertainty set *Drop*, and edges whose source is in *Drop*
  (messages removed by pruning); and the same two shares for gold entity tokens and for
  entity--entity edges, the messages that could make repeated mentions agree (is pruning too
  aggressive on exactly these tokens?).

    python benchmarks/edge_weights.py RUN_DIR [--split dev] [--data-dir DIR] [--out OUT.json]
        [--threshold T]

``--threshold`` replaces the trained model's uncertainty threshold for this measurement only
(which tokens count as *Drop*, and so which messages the forward pass removes): how the
pruned shares would move at another threshold, for a model trained at the original one.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import Tensor

from docgraph.batching.loader import iterate_batches
from docgraph.batching.sampler import TokenBudgetBatchSampler
from docgraph.config.tagging import DEFAULT_BATCH_TOKENS
from docgraph.graph.build import DocumentGraph
from docgraph.graph.splits import prepare_run_split
from docgraph.model import GCDoc
from docgraph.persistence.checkpoint import CheckpointError
from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
from docgraph.runtime.atomic import atomic_write_json
from docgraph.viz import roc_auc


# ---------------------------------------------------------------------------- AUC
def rank_auc(positive: Tensor, negative: Tensor) -> float:
    """Area under the ROC curve of the scores of the positives against the negatives
    (:func:`docgraph.viz.roc_auc`, Mann-Whitney U with tie-averaged ranks); NaN when a class
    is empty."""
    scores = torch.cat([positive.reshape(-1), negative.reshape(-1)]).double().numpy()
    labels = [True] * positive.numel() + [False] * negative.numel()
    auc = roc_auc(scores, labels)
    return math.nan if auc is None else auc


# ---------------------------------------------------------------------------- measurement
@dataclass
class EdgeSample:
    """Every edge of a split with its score and the gold types of its ends.

    Args:
        weight: Relation score :math:`r_{ij}` of every edge ``[E]``.
        source_type: Gold entity-type id of the source :math:`j` ``[E]``.
        target_type: Gold entity-type id of the target :math:`i` ``[E]``.
        source_dropped: Whether the source is in *Drop* ``[E]`` (all ``False`` without pruning).
        tokens: Number of tokens of the split.
        dropped_tokens: Tokens in *Drop*.
        outside: Type id of ``O``.
        entity_tokens: Tokens inside a gold entity.
        dropped_entity_tokens: Tokens inside a gold entity that are in *Drop*.
    """

    weight: Tensor
    source_type: Tensor
    target_type: Tensor
    source_dropped: Tensor
    tokens: int
    dropped_tokens: int
    outside: int = 0
    entity_tokens: int = 0
    dropped_entity_tokens: int = 0


@dataclass
class EdgeWeightReport:
    """What :func:`summarise` reports (shares in percent; ``None`` where undefined).

    Args:
        edges: Number of edges.
        oo_edges: Edges between two ``O`` tokens.
        entity_o_edges: Edges between an entity token and an ``O`` token.
        same_type_edges: Entity--entity edges whose ends have the same type.
        different_type_edges: Entity--entity edges whose ends have different types.
        oo_share: ``100 * oo_edges / edges``.
        entity_o_share: ``100 * entity_o_edges / edges``.
        auc: AUC of :math:`r_{ij}` for same-type vs different-type entity--entity edges.
        mean_r_same: Mean :math:`r_{ij}` of the same-type entity--entity edges.
        mean_r_different: Mean :math:`r_{ij}` of the different-type entity--entity edges.
        mean_r_oo: Mean :math:`r_{ij}` of the O--O edges.
        mean_r_entity_o: Mean :math:`r_{ij}` of the entity--O edges.
        tokens: Number of tokens.
        pruned_token_share: ``100 *`` tokens in *Drop* ``/ tokens``.
        pruned_edge_share: ``100 *`` edges whose source is in *Drop* ``/ edges``.
        pruned_entity_token_share: ``100 *`` gold entity tokens in *Drop* ``/`` entity tokens.
        pruned_entity_edge_share: ``100 *`` entity--entity edges whose source is in *Drop*
            ``/`` entity--entity edges.
    """

    edges: int
    oo_edges: int
    entity_o_edges: int
    same_type_edges: int
    different_type_edges: int
    oo_share: float | None
    entity_o_share: float | None
    auc: float | None
    mean_r_same: float | None
    mean_r_different: float | None
    mean_r_oo: float | None
    mean_r_entity_o: float | None
    tokens: int
    pruned_token_share: float | None
    pruned_edge_share: float | None
    pruned_entity_token_share: float | None = None
    pruned_entity_edge_share: float | None = None

    def to_dict(self) -> dict[str, float | int | None]:
        """A JSON-serialisable dictionary of the fields."""
        return asdict(self)


def _share(count: int, total: int) -> float | None:
    return 100.0 * count / total if total else None


def _mean(values: Tensor) -> float | None:
    return float(values.double().mean()) if values.numel() else None


def summarise(sample: EdgeSample) -> EdgeWeightReport:
    """Edge classes, AUC, mean scores and pruned shares of an :class:`EdgeSample`.

    Args:
        sample: The edges.

    Returns:
        The report.
    """
    r = sample.weight
    entity_j = sample.source_type != sample.outside
    entity_i = sample.target_type != sample.outside
    oo = ~entity_j & ~entity_i
    entity_o = entity_j ^ entity_i
    both = entity_j & entity_i
    same = both & (sample.source_type == sample.target_type)
    different = both & ~same
    edges = int(r.numel())
    auc = rank_auc(r[same], r[different])
    return EdgeWeightReport(
        edges=edges,
        oo_edges=int(oo.sum()),
        entity_o_edges=int(entity_o.sum()),
        same_type_edges=int(same.sum()),
        different_type_edges=int(different.sum()),
        oo_share=_share(int(oo.sum()), edges),
        entity_o_share=_share(int(entity_o.sum()), edges),
        auc=None if math.isnan(auc) else auc,
        mean_r_same=_mean(r[same]),
        mean_r_different=_mean(r[different]),
        mean_r_oo=_mean(r[oo]),
        mean_r_entity_o=_mean(r[entity_o]),
        tokens=sample.tokens,
        pruned_token_share=_share(sample.dropped_tokens, sample.tokens),
        pruned_edge_share=_share(int(sample.source_dropped.sum()), edges),
        pruned_entity_token_share=_share(sample.dropped_entity_tokens, sample.entity_tokens),
        pruned_entity_edge_share=_share(int((sample.source_dropped & both).sum()),
                                        int(both.sum())),
    )


@torch.no_grad()
def collect_edges(model: GCDoc, graphs: list[DocumentGraph],
                  batch_tokens: int = DEFAULT_BATCH_TOKENS,
                  seed: int = 0) -> EdgeSample:
    """Run ``model`` (eval mode) over labelled ``graphs`` and gather every edge.

    Args:
        model: A GCDoc with the selective auxiliary classifier (``edge_weights`` on).
        graphs: The graphs of the split (their ``y`` are the gold labels).
        batch_tokens: Token budget of a batch.
        seed: Seed of the Monte-Carlo dropout of the uncertainty module.

    Returns:
        The edges with their scores and gold end types.

    Raises:
        ValueError: If the model has no relation classifier or no graph is labelled.
    """
    if model.document_graph is None or model.document_graph.relation is None:
        raise ValueError("this model has no selective auxiliary classifier (edge_weights off)")
    graphs = [g for g in graphs if bool(g.has_labels)]
    if not graphs:
        raise ValueError("no labelled document in the split")
    sampler = TokenBudgetBatchSampler([int(g.num_nodes) for g in graphs], batch_tokens,
                                      shuffle=False)
    device = model.label_to_type.device
    weights, src_types, dst_types, src_dropped = [], [], [], []
    tokens = dropped = entity_tokens = dropped_entity_tokens = 0
    outside = int(model.label_to_type[0])
    for _, batch in iterate_batches(graphs, sampler, device):
        out = model.inspect(batch, mc_seed=seed)
        types = model.label_to_type[batch.y]
        src, dst = batch.edge_index
        weights.append(out.edge_weight.cpu())
        src_types.append(types[src].cpu())
        dst_types.append(types[dst].cpu())
        drop = out.drop if out.drop is not None else torch.zeros_like(types, dtype=torch.bool)
        src_dropped.append(drop[src].cpu())
        tokens += int(batch.num_nodes)
        dropped += int(drop.sum())
        entity = types != outside
        entity_tokens += int(entity.sum())
        dropped_entity_tokens += int((drop & entity).sum())
    return EdgeSample(torch.cat(weights), torch.cat(src_types), torch.cat(dst_types),
                      torch.cat(src_dropped), tokens, dropped, outside=outside,
                      entity_tokens=entity_tokens, dropped_entity_tokens=dropped_entity_tokens)


def measure(run_dir: str | Path, split: str = "dev", data_dir: str | None = None,
            seed: int = 0, batch_tokens: int | None = None,
            threshold: float | None = None) -> EdgeWeightReport:
    """Load a run directory, build its graphs of ``split`` and summarise the edge weights.

    Args:
        run_dir: A model directory (``model.pt``, ``config.json``, ``vocab.json``).
        split: The split of the run's data set.
        data_dir: Corpus directory (default: the run's, else ``DOCGRAPH_DATA_DIR``).
        seed: Seed of the Monte-Carlo dropout.
        batch_tokens: Token budget of a batch (default: the run's ``eval_batch_tokens``).
        threshold: Uncertainty threshold to prune with instead of the trained model's.

    Returns:
        The report.

    Raises:
        ValueError: If ``threshold`` is given for a model without pruning.
    """
    model, vocabs, config = load_model_dir(run_dir, overrides=ModelOverrides(threshold=threshold))
    prepared = prepare_run_split(config, vocabs, split, data_dir)
    sample = collect_edges(model, prepared.graphs,
                           batch_tokens or config.train.eval_batch_tokens, seed)
    return summarise(sample)


def format_report(report: EdgeWeightReport, title: str = "") -> str:
    """The report as a few aligned text lines."""

    def num(value: float | None, digits: int = 4) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"

    lines = [title] if title else []
    lines += [
        f"edges              {report.edges}",
        f"O-O edges          {report.oo_edges} ({num(report.oo_share, 2)} %), "
        f"mean r {num(report.mean_r_oo)}",
        f"entity-O edges     {report.entity_o_edges} ({num(report.entity_o_share, 2)} %), "
        f"mean r {num(report.mean_r_entity_o)}",
        f"same type          {report.same_type_edges}, mean r {num(report.mean_r_same)}",
        f"different type     {report.different_type_edges}, "
        f"mean r {num(report.mean_r_different)}",
        f"AUC same vs diff   {num(report.auc)}",
        f"pruned tokens      {num(report.pruned_token_share, 2)} % of {report.tokens}",
        f"pruned edges       {num(report.pruned_edge_share, 2)} %",
        f"pruned entity tok. {num(report.pruned_entity_token_share, 2)} %",
        f"pruned ent-ent e.  {num(report.pruned_entity_edge_share, 2)} %",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", help="a trained GCDoc model directory (model.pt, config.json)")
    p.add_argument("--split", default="dev", help="split of the run's data set (default: dev)")
    p.add_argument("--data-dir", default=None,
                   help="corpus directory (default: the run's, else DOCGRAPH_DATA_DIR)")
    p.add_argument("--seed", type=int, default=0, help="seed of the Monte-Carlo dropout")
    p.add_argument("--batch-tokens", type=int, default=None)
    p.add_argument("--threshold", type=float, default=None,
                   help="uncertainty threshold to prune with (default: the trained model's)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=None, help="JSON file to write")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        report = measure(args.run_dir, args.split, args.data_dir, args.seed, args.batch_tokens,
                         args.threshold)
    except (ValueError, FileNotFoundError, CheckpointError) as err:
        raise SystemExit(f"{args.run_dir}: {err}") from None
    print(format_report(report, title=f"{args.run_dir} ({args.split})"))
    if args.out:
        atomic_write_json(Path(args.out), {"run_dir": str(args.run_dir), "split": args.split,
                                           "seed": args.seed, "threshold": args.threshold,
                                           **report.to_dict()})


if __name__ == "__main__":
    main()
