"""The batches a measurement times: the first batches of the training sampler's shuffled epoch,
and the share of each data-parallel process in one of them.

Every tool that times or counts steps (:mod:`docgraph_dev.speed`,
:mod:`docgraph_dev.step_speed`, :mod:`docgraph_dev.core_scaling`,
:mod:`docgraph_dev.operator_counts`, the studies under ``benchmarks/``) draws its batches
here, so they all measure the same documents.
"""

from __future__ import annotations

from collections.abc import Sequence

from torch_geometric.data import Batch

from docgraph.batching.sampler import TokenBudgetBatchSampler


def select_batch_indices(lengths: Sequence[int], batch_tokens: int, count: int, seed: int
                         ) -> list[list[int]]:
    """Graph indices of the first ``count`` batches of the training sampler's shuffled epoch."""
    sampler = TokenBudgetBatchSampler(list(lengths), batch_tokens, shuffle=True, seed=seed)
    return sampler.all_batches()[:count]


def select_batches(graphs: Sequence, batch_tokens: int, count: int, seed: int) -> list[Batch]:
    """``count`` collated batches of the training sampler's first shuffled epoch."""
    chosen = select_batch_indices([int(g.num_nodes) for g in graphs], batch_tokens, count, seed)
    return [Batch.from_data_list([graphs[i] for i in idx]) for idx in chosen]


def split_batch(indices: Sequence[int], lengths: Sequence[int], parts: int) -> list[list[int]]:
    """Share the graphs of one batch out over ``parts`` processes, balancing their tokens.

    Greedy: longest graph first, each to the part with the fewest tokens so far; every part
    keeps the graphs' original order. A part may be empty when the batch has fewer graphs.
    """
    load = [0] * parts
    owner: dict[int, int] = {}
    for i in sorted(indices, key=lambda j: -lengths[j]):
        part = min(range(parts), key=lambda p: load[p])
        owner[i] = part
        load[part] += lengths[i]
    return [[i for i in indices if owner[i] == p] for p in range(parts)]
