"""Training: the loop, runs of one or several seeds, data-parallel processes, a run that starts
from a trained model."""

from __future__ import annotations

from docgraph.runtime.lazy import lazy_exports

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


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)
