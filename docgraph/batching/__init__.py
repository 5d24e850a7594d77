"""Batches of document graphs: token-budget sampling, host-side plans, collation and prefetching."""

from __future__ import annotations

import importlib
from typing import Any

#: Where each public name lives; each is imported from its module on first use (PEP 562), so
#: that importing one module of this package loads no other.
_MODULES: dict[str, str] = {
    "PlannedModel": "docgraph.batching.loader",
    "collate": "docgraph.batching.loader",
    "iterate_batches": "docgraph.batching.loader",
    "BatchPlan": "docgraph.batching.plan",
    "plan_batch": "docgraph.batching.plan",
    "TokenBudgetBatchSampler": "docgraph.batching.sampler",
}

__all__ = sorted(_MODULES)


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
