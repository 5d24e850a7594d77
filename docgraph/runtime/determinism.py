"""``--deterministic``: bitwise-reproducible training on CUDA.

Every operator of a training step is one that PyTorch runs deterministically on CUDA: the
gathers go through :func:`~docgraph.nn.gather.gather_rows` (embedding's sorted backward),
the graph aggregation and the means are ordered segment sums, the CRF and the uncertainty
loss use no ``gather``/``nll_loss`` backward (checked on the CPU by the operator names of a
profiled step, ``tests/test_operator_counts.py``). Two settings remain to the libraries
below: cuBLAS may split a matrix product differently from call to call (its workspace), and
cuDNN and newer PyTorch releases may pick faster kernels that add with atomics (an embedding
backward with few distinct rows, some cuDNN RNN algorithms). :func:`set_deterministic` pins
them; what it costs in speed is measured by the GPU kit (``benchmarks/gpu/``).

On the CPU every kernel used is deterministic already: two runs with one seed and one
number of threads give equal weights with or without the switch (tested). A run holds the
switch for its length (:func:`deterministic_kernels`) and logs what its training steps ran
with in every epoch's record (:func:`kernel_settings`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import torch

__all__ = ["CUBLAS_WORKSPACE", "deterministic_kernels", "kernel_settings", "set_deterministic"]

#: ``CUBLAS_WORKSPACE_CONFIG`` for reproducible cuBLAS results (NVIDIA's documented value).
CUBLAS_WORKSPACE = ":4096:8"


def set_deterministic(enabled: bool = True) -> None:
    """Ask PyTorch, cuBLAS and cuDNN for deterministic kernels (or stop asking).

    Sets ``CUBLAS_WORKSPACE_CONFIG`` (unless the environment sets it; it takes effect only
    before the process's first cuBLAS call, so call this before any CUDA work),
    :func:`torch.use_deterministic_algorithms`, ``cudnn.deterministic`` and turns
    ``cudnn.benchmark`` off.

    Args:
        enabled: ``False`` restores PyTorch's defaults (the environment variable stays).
    """
    if enabled:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
    torch.use_deterministic_algorithms(enabled)
    torch.backends.cudnn.deterministic = enabled
    if enabled:
        torch.backends.cudnn.benchmark = False


def kernel_settings() -> dict[str, bool]:
    """What the kernels of this process run with now: PyTorch's deterministic algorithms
    (:func:`torch.are_deterministic_algorithms_enabled`) and cuDNN's deterministic flag."""
    return {"deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
            "cudnn_deterministic": bool(torch.backends.cudnn.deterministic)}


@contextmanager
def deterministic_kernels(enabled: bool) -> Iterator[None]:
    """Within the block, deterministic kernels (:func:`set_deterministic`) when ``enabled``;
    PyTorch's and cuDNN's settings are restored on leaving it. ``False`` changes nothing."""
    if not enabled:
        yield
        return
    saved = (torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    set_deterministic()
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved[2:]
