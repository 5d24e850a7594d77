r"""Row gathers and segment sums whose backward passes are deterministic and fast on a GPU.

A training step moves rows around a lot: sequences into padded length buckets and back, the
distinct words of the character encoder back to their tokens, sentence vectors to their
tokens, node features to graph edges, emission scores into the CRF's padded layout. Written
as advanced indexing, ``x[index]``, each gather's backward is an accumulating ``index_put_``.
On CUDA that runs ``indexing_backward_kernel``, which sorts the indices and adds the repeats
of one row one after another: with the repeats of a real batch (padding positions that all
read one row, frequent words, the 73 x 73 transition table gathered by tag) it dominates a GPU
training step (``docs/experiments.md``, "Deterministic gathers"; ``docs/design.md``, "Gathers
without accumulating writes").
``index_select``/``gather``/``index_add``/``scatter_add`` would be fast there but add with
atomics, so two runs with one seed would not give the same weights.

:func:`gather_rows` is a gather through :func:`torch.nn.functional.embedding`: the same rows,
but its backward (``embedding_dense_backward``) sorts the indices and sums the repeats of a
row in fixed-size partial segments in parallel, then adds the partial sums in a fixed order:
deterministic, and parallel over the repeats of one row. (PyTorch releases that added an
atomic fast path to that kernel take it only when deterministic algorithms are off;
``--deterministic`` turns them on, see :func:`docgraph.runtime.determinism.set_deterministic`.)

:func:`segment_sum` sums contiguous segments (CSR) with :func:`torch.segment_reduce`, which
reduces each segment in order on both devices.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["csr_segments", "gather_rows", "segment_sum"]


def gather_rows(x: Tensor, index: Tensor) -> Tensor:
    r"""``x[index]`` along the first dimension, with a deterministic, repeat-parallel backward.

    Args:
        x: Source rows ``[R, *]`` (any floating dtype; a 1-D ``x`` is a column of scalars).
        index: Row of every output, any shape ``[*I]`` (long, values in ``[0, R)``).

    Returns:
        ``[*I, *]``: ``out[i] = x[index[i]]``.
    """
    if x.dim() == 1:
        return F.embedding(index, x.unsqueeze(1)).squeeze(-1)
    if x.dim() == 2:
        return F.embedding(index, x)
    rows = F.embedding(index, x.reshape(x.size(0), -1))
    return rows.reshape(list(index.shape) + list(x.shape[1:]))


def segment_sum(values: Tensor, ptr: Tensor) -> Tensor:
    r"""Sums of the contiguous segments ``values[ptr[k] : ptr[k + 1]]`` (CSR offsets).

    Each segment is reduced in order, on the CPU and on CUDA (no atomics), and its backward
    is a gather; an empty segment sums to zero.

    Args:
        values: ``[M, *]`` rows, segment after segment.
        ptr: ``[K + 1]`` offsets (``ptr[0] = 0``, ``ptr[K] = M``, non-decreasing).

    Returns:
        ``[K, *]``.
    """
    return torch.segment_reduce(values, "sum", offsets=ptr, axis=0)


def csr_segments(keys: np.ndarray) -> tuple[Tensor, Tensor] | None:
    """The distinct values of sorted ``keys`` and the CSR offsets of their runs, planned on
    the host: ``(values [K], ptr [K + 1])``, or ``None`` when ``keys`` is not sorted (e.g. the
    targets of a graph's edges: the nodes that receive edges and where each one's are)."""
    if not np.all(keys[1:] >= keys[:-1]):
        return None
    values, counts = np.unique(keys, return_counts=True)
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return torch.from_numpy(values), torch.from_numpy(ptr)
