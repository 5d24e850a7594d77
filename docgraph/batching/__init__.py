"""Batches of document graphs: token-budget sampling, host-side plans, collation and prefetching."""

from __future__ import annotations

from docgraph.runtime.lazy import lazy_exports

#: Where each public name lives; each is imported from its module on first use (PEP 562), so
#: that importing one module of this package loads no other.
_MODULES: dict[str, str] = {
    "PlanSettings": "docgraph.batching.loader",
    "collate": "docgraph.batching.loader",
    "iterate_batches": "docgraph.batching.loader",
    "BatchPlan": "docgraph.batching.plan",
    "plan_batch": "docgraph.batching.plan",
    "TokenBudgetBatchSampler": "docgraph.batching.sampler",
}

__all__ = sorted(_MODULES)


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)
