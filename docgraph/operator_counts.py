"""Operator counts of one training step and one tagging step (``scripts/benchmark.py --ops``).

A training step on a GPU is *launch-bound* when the host spends longer issuing kernels than
the device spends running them: then the step time follows the number of operators, not the
number of tokens. This module counts, with :mod:`torch.profiler` on the CPU, what a step
issues:

* **operators**: aten operator events whose parent event is not itself an aten operator
  (what the Python code and the autograd engine call directly; the kernels an operator runs
  inside itself are not counted again), over forward, backward and optimizer step;
* **synchronising operators**: those that make the host wait for the device on a GPU (a
  value read back to the host: ``_local_scalar_dense`` behind ``.item()`` / ``int()`` /
  ``bool()``, and the operators whose output size depends on the data: ``nonzero``,
  ``unique``, ...), counted once where one nests inside another. Not counted: the reads of
  the optimizer's step counters inside a fused optimizer kernel on the CPU (``_fused_adam_``
  reads its CPU step tensors on the host; on a GPU the counters live on the device and the
  kernel reads them there).

The counts are properties of the code and the batch, not of the machine: the same batch
gives the same counts on any CPU.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

__all__ = ["SYNCHRONISING", "OperatorCount", "count_operators"]

#: Operators that wait for the device: a scalar read back, or an output whose size depends on
#: the data.
SYNCHRONISING = frozenset({
    "aten::_local_scalar_dense",
    "aten::nonzero",
    "aten::nonzero_static",
    "aten::unique_dim",
    "aten::_unique",
    "aten::_unique2",
    "aten::unique_consecutive",
    "aten::unique_dim_consecutive",
    "aten::masked_select",
    "aten::_cpu_to_host",
})


_FUSED_OPTIMIZER = "aten::_fused_"


@dataclass
class OperatorCount:
    """Operators issued by one call of a step function.

    Attributes:
        operators: Top-level aten operators (parent not an aten operator).
        synchronising: Synchronising operators (outermost only).
        by_name: Top-level operators by name, most frequent first.
        sync_by_name: Synchronising operators by name.
    """

    operators: int
    synchronising: int
    by_name: dict[str, int] = field(default_factory=dict)
    sync_by_name: dict[str, int] = field(default_factory=dict)

    def to_dict(self, top: int = 15) -> dict[str, Any]:
        """JSON form with the ``top`` most frequent operators."""
        return {
            "operators": self.operators,
            "synchronising": self.synchronising,
            "most_frequent": dict(list(self.by_name.items())[:top]),
            "synchronising_by_name": self.sync_by_name,
        }


def _is_aten(event: Any) -> bool:
    return event.name.startswith("aten::")


def count_operators(step: Callable[[], object]) -> OperatorCount:
    """Profile one call of ``step`` (on the CPU) and count its operators.

    Args:
        step: The work to count, e.g. a closure running forward, backward and optimizer step.
    """
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    top: Counter[str] = Counter()
    sync: Counter[str] = Counter()
    for event in prof.events():
        if not _is_aten(event):
            continue
        parent = event.cpu_parent
        if parent is None or not _is_aten(parent):
            top[event.name] += 1
        if event.name in SYNCHRONISING:
            ancestor, nested = parent, False
            while ancestor is not None:
                if ancestor.name in SYNCHRONISING or ancestor.name.startswith(_FUSED_OPTIMIZER):
                    nested = True
                    break
                ancestor = ancestor.cpu_parent
            if not nested:
                sync[event.name] += 1
    return OperatorCount(
        operators=sum(top.values()),
        synchronising=sum(sync.values()),
        by_name=dict(top.most_common()),
        sync_by_name=dict(sync.most_common()),
    )


def training_step_counts(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                         batch: Any, step: Callable[..., object]) -> OperatorCount:
    """Operators of ``step(model, optimizer, batch)`` after one warm-up call (lazy state such
    as Adam's moments is created on the first step and would count once only)."""
    step(model, optimizer, batch)
    return count_operators(lambda: step(model, optimizer, batch))
