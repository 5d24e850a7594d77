"""Training: the loop, runs of one or several seeds, data-parallel processes, a run that starts
from a trained model."""

from __future__ import annotations

import importlib
from typing import Any

#: Where each public name lives; each is imported from its module on first use (PEP 562), so
#: that importing one module of this package loads no other.
_MODULES: dict[str, str] = {
    "run_experiment": "docgraph.training.experiment",
    "run_seeds": "docgraph.training.experiment",
    "Trainer": "docgraph.training.loop",
    "TrainingError": "docgraph.training.loop",
    "InitFromError": "docgraph.training.init_from",
    "load_init_model": "docgraph.training.init_from",
}

__all__ = sorted(_MODULES)


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
