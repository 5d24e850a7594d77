"""Batches of document graphs for a model: packing, collation, host-side plans, prefetching.

A batch is a :class:`~torch_geometric.data.Batch` of
:class:`~docgraph.graph.DocumentGraph` objects carrying the model's host-side plan
(:func:`~docgraph.batching.plan.plan_batch`) as ``batch.plan``, so that no step reads a shape back
from the device. Training and tagging both iterate their batches here; tagging packs its graphs
in order (:func:`pack_greedily`), training draws them from a
:class:`~docgraph.batching.sampler.TokenBudgetBatchSampler`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import torch
from torch_geometric.data import Batch

from docgraph.batching.plan import buckets_for, grid_for, plan_batch
from docgraph.config.model import GCDocConfig
from docgraph.graph import DocumentGraph


@dataclass(frozen=True)
class PlanSettings:
    """What a batch's host-side plan needs of a model: its configuration and the floating
    dtype of its parameters (:meth:`docgraph.model.GCDoc.plan_settings`).

    Args:
        config: The model's configuration.
        dtype: The floating dtype of the plan's tensors.
    """

    config: GCDocConfig
    dtype: torch.dtype = torch.float32


def pack_greedily(lengths: Sequence[int], order: Iterable[int], max_tokens: int) -> list[list[int]]:
    """Indices of ``order`` packed greedily into batches of at most ``max_tokens`` tokens.

    Args:
        lengths: ``[n]`` number of tokens of each graph.
        order: The indices, in the order to pack them.
        max_tokens: Token budget per batch; a longer graph is a batch on its own.

    Returns:
        The batches, in order.
    """
    batches: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i in order:
        length = int(lengths[i])
        if current and used + length > max_tokens:
            batches.append(current)
            current, used = [], 0
        current.append(int(i))
        used += length
    if current:
        batches.append(current)
    return batches


def collate(graphs: Sequence[DocumentGraph], indices: Sequence[int], device: torch.device,
            plan: PlanSettings | None = None) -> Batch:
    """Collate ``graphs[indices]`` into a batch on ``device``, with the host-side plan of a
    model of the ``plan`` settings
    (:func:`~docgraph.batching.plan.plan_batch`) attached as ``batch.plan``; on CUDA through
    pinned memory with non-blocking copies.

    A batch collated with gradients off (tagging, evaluation) is planned on the tagging grid of
    ``device`` (:func:`~docgraph.batching.plan.grid_for`), one collated with gradients on
    (training) without one."""
    batch = Batch.from_data_list([graphs[i] for i in indices])
    planned = None
    if plan is not None:
        planned = plan_batch(batch, plan.config, buckets_for(device), plan.dtype,
                             grid_for(device, tagging=not torch.is_grad_enabled()))
    if device.type == "cuda":
        batch = batch.pin_memory().to(device, non_blocking=True)
        if planned is not None:
            planned = planned.pin_memory().to(device, non_blocking=True)
    else:
        batch = batch.to(device)
    if planned is not None:
        batch.plan = planned
    return batch


def iterate_batches(graphs: Sequence[DocumentGraph], sampler: Iterable[list[int]],
                    device: torch.device, plan: PlanSettings | None = None, prefetch: int = 0
                    ) -> Iterator[tuple[list[int], Batch]]:
    """Yield ``(indices, batch)`` for every list of graph indices the sampler gives.

    With ``plan``, each batch carries the host-side plan of a model of those settings
    (:func:`collate`). With ``prefetch > 0`` a background thread collates up to that many
    batches ahead, so the collation and the plan stay off the critical path of the step.
    """
    if prefetch <= 0:
        for indices in sampler:
            yield indices, collate(graphs, indices, device, plan)
        return
    yield from _prefetched(graphs, list(sampler), device, plan, prefetch)


def _prefetched(graphs: Sequence[DocumentGraph], batches: list[list[int]],
                device: torch.device, plan: PlanSettings | None, depth: int
                ) -> Iterator[tuple[list[int], Batch]]:
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for indices in batches:
                item = (indices, collate(graphs, indices, device, plan))
                while not stop.is_set():
                    try:
                        ready.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put(None)
        except BaseException as err:  # handed to the consumer
            ready.put(err)

    worker = threading.Thread(target=produce, name="collate", daemon=True)
    worker.start()
    try:
        while True:
            item = ready.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()
