"""What a batch's shapes ask of the model, planned on the host when the batch is collated.

Every data-dependent shape of a GCDoc step (sentence lengths and their length buckets, the
Monte-Carlo copies of the sentences, the distinct words of the character encoder, the
cross-sentence windows, the nodes that receive graph edges) follows from the batch alone.
:func:`plan_batch` computes it once with numpy, off the device's critical path (the trainer
does it in a background thread while the previous step runs), so the step itself never reads
a value back from the device to decide a shape. It also keys the Monte-Carlo dropout masks of
every document by a hash of the document's input tensors (:func:`monte_carlo_keys`), so that a
document is tagged the same in any batch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from itertools import pairwise

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Batch

from docgraph.config.fields import PLAN, fields_marked
from docgraph.config.model import GCDocConfig
from docgraph.nn.cross_sentence import (
    SentenceWindows,
    sentence_window_plan,
    window_plan,
    window_segments,
)
from docgraph.nn.gather import csr_segments
from docgraph.nn.layout import (
    DEFAULT_BUCKETS,
    CharPlan,
    SequenceLayout,
    ShapeGrid,
    WindowPlan,
    char_plan,
)
from docgraph.nn.uncertainty import MonteCarloKeys

__all__ = ["TAGGING_GRID", "BatchPlan", "buckets_for", "grid_for", "monte_carlo_keys",
           "plan_batch"]

#: Most length buckets of the recurrent layers on the CPU (a padded step costs real time
#: there) and on a GPU (a padded step is nearly free, a kernel launch is not).
CPU_BUCKETS = DEFAULT_BUCKETS
GPU_BUCKETS = 1
#: The padded shapes of the recurrent layers when tagging on the CPU: shapes that recur from
#: batch to batch, whose oneDNN primitives are built once (docs/design.md, "Running on the
#: CPU").
TAGGING_GRID = ShapeGrid()
_PLAN_FIELDS = fields_marked(GCDocConfig, PLAN)


def buckets_for(device: torch.device) -> int:
    """:data:`GPU_BUCKETS` on CUDA, :data:`CPU_BUCKETS` elsewhere."""
    return GPU_BUCKETS if device.type == "cuda" else CPU_BUCKETS


def grid_for(device: torch.device, tagging: bool) -> ShapeGrid | None:
    """The padded shapes of a batch's layouts: :data:`TAGGING_GRID` for tagging on the CPU,
    else none (training keeps its layouts, a GPU its one padded call)."""
    return TAGGING_GRID if tagging and device.type == "cpu" else None


@dataclass
class BatchPlan:
    """Host-planned layouts of one batch (see :func:`plan_batch`); move with :meth:`to`.

    Its floating-point tensors (the mean weights of the layouts) are of :attr:`dtype`, the
    model's; the rest are integers and booleans.
    """

    sentences: SequenceLayout
    monte_carlo: SequenceLayout | None = None
    mc_keys: MonteCarloKeys | None = None
    chars: CharPlan | None = None
    previous: WindowPlan | None = None
    next: WindowPlan | None = None
    sentence_windows: SentenceWindows | None = None
    gated_nodes: Tensor | None = None
    edge_ptr: Tensor | None = None
    sentence_doc: Tensor | None = None
    key: tuple = ()
    dtype: torch.dtype = field(default_factory=torch.get_default_dtype)
    grid: ShapeGrid | None = None

    def fits(self, config: GCDocConfig) -> bool:
        """Whether the plan was made for a model with ``config``'s shape-deciding settings."""
        return self.key == plan_key(config)

    def _map(self, move: Callable[[object], object]) -> BatchPlan:
        values = {}
        for f in fields(self):
            value = getattr(self, f.name)
            values[f.name] = (value if value is None or f.name in ("key", "dtype", "grid")
                              else move(value))
        return BatchPlan(**values)

    def to(self, device: torch.device | str | None = None, non_blocking: bool = False,
           dtype: torch.dtype | None = None) -> BatchPlan:
        """A copy on ``device``, its floating tensors of ``dtype`` (``None``: unchanged)."""
        def move(t: Tensor) -> Tensor:
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None,
                        non_blocking=non_blocking)

        plan = self._map(lambda v: _move(v, move))
        plan.dtype = self.dtype if dtype is None else dtype
        return plan

    def pin_memory(self) -> BatchPlan:
        """A copy in pinned host memory."""
        return self._map(lambda v: _move(v, lambda t: t.pin_memory()))


def _move(value: object, fn: Callable[[Tensor], Tensor]) -> object:
    return fn(value) if isinstance(value, Tensor) else value._map(fn)  # a layout or plan


def plan_batch(batch: Batch, config: GCDocConfig, buckets: int = CPU_BUCKETS,
               dtype: torch.dtype | None = None, grid: ShapeGrid | None = None) -> BatchPlan:
    """Plan the layouts a :class:`~docgraph.model.GCDoc` with ``config`` needs for ``batch``.

    Args:
        batch: A :class:`~torch_geometric.data.Batch` of document graphs (on the host).
        config: The model's :class:`~docgraph.model.GCDocConfig`.
        buckets: Most length buckets of the recurrent layers (:data:`CPU_BUCKETS`,
            :data:`GPU_BUCKETS`).
        dtype: The model's floating dtype (:attr:`GCDoc.dtype <docgraph.model.GCDoc.dtype>`;
            default: torch's default dtype), that of the plan's floating tensors.
        grid: The padded shapes of the recurrent layers' layouts (:func:`grid_for`;
            ``None``: each bucket padded to its longest sequence).
    """
    dtype = torch.get_default_dtype() if dtype is None else dtype
    sent_len = batch.sent_len.detach().cpu().numpy().astype(np.int64)
    sentences = SequenceLayout.from_lengths(sent_len, buckets=buckets, dtype=dtype, grid=grid)
    plan = BatchPlan(sentences=sentences, key=plan_key(config), dtype=dtype, grid=grid)
    plan.chars = char_plan(batch.chars, batch.char_len, buckets, dtype=dtype, grid=grid)
    starts = np.cumsum(sent_len) - sent_len
    if config.graph and config.pruning and config.mc_dropout == "full":
        plan.monte_carlo = SequenceLayout.tiled(sent_len, config.num_samples, buckets, dtype,
                                                grid)
    if config.graph and config.pruning:
        plan.mc_keys = monte_carlo_keys(batch)
    doc = getattr(batch, "batch", None)
    sentence_doc = (np.zeros(sent_len.size, dtype=np.int64) if doc is None
                    else doc.detach().cpu().numpy()[starts])
    plan.sentence_doc = torch.from_numpy(sentence_doc)
    if config.cross_sentence and config.window > 0 and config.window_encoding == "concat":
        prev_start, prev_len, next_start, next_len = window_segments(
            sent_len, sentence_doc, config.window)
        if config.use_previous:
            plan.previous = window_plan(prev_start, prev_len, buckets, dtype, grid)
        if config.use_next:
            plan.next = window_plan(next_start, next_len, buckets, dtype, grid)
    if config.cross_sentence and config.window > 0 and config.window_encoding == "per_sentence":
        plan.sentence_windows = sentence_window_plan(sent_len, sentence_doc, config.window,
                                                     buckets, dtype, grid)
    if config.graph:
        segments = csr_segments(batch.edge_index[1].detach().cpu().numpy())
        if segments is not None:  # edges sorted by target
            plan.gated_nodes, plan.edge_ptr = segments
    return plan


def monte_carlo_keys(batch: Batch) -> MonteCarloKeys:
    """One segment per graph of ``batch``, keyed by a hash of the graph's own input tensors
    (``word``, ``chars`` and ``sent_len``): the same document gets the same key, and so the
    same Monte-Carlo masks, in any batch (or alone)."""
    ptr = getattr(batch, "ptr", None)  # None: a single graph, not a Batch
    bounds = [0, int(batch.sent_len.sum())] if ptr is None else ptr.detach().cpu().tolist()
    word = batch.word.detach().cpu().numpy()
    chars = batch.chars.detach().cpu().numpy()
    sent_len = batch.sent_len.detach().cpu().numpy().astype(np.int64)
    sentence_end = np.cumsum(sent_len)
    keys = []
    for start, end in pairwise(bounds):
        first, last = np.searchsorted(sentence_end, [start, end], side="right")
        digest = hashlib.blake2b(digest_size=8)
        for part in (word[start:end], chars[start:end], sent_len[first:last]):
            digest.update(np.ascontiguousarray(part, dtype=np.int64).tobytes())
        keys.append(int.from_bytes(digest.digest(), "little", signed=True))
    sizes = tuple(int(b) - int(a) for a, b in pairwise(bounds))
    return MonteCarloKeys(sizes=sizes, keys=tuple(keys))


def plan_key(config: GCDocConfig) -> tuple:
    """The settings of a :class:`~docgraph.model.GCDocConfig` that decide a plan (the fields
    marked :data:`~docgraph.config.fields.PLAN`)."""
    return tuple(getattr(config, name) for name in _PLAN_FIELDS)
