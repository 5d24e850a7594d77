"""Inspecting document graphs and what GCDoc learns on them: networkx graphs, matplotlib
figures, edge statistics (:mod:`docgraph.viz.inspect`) and the interactive HTML page
(:mod:`docgraph.viz.html`).

Names are imported on first use (PEP 562), so that ``docgraph.viz.html`` (used when tagging)
does not load matplotlib.
"""

import importlib
from typing import Any

_INSPECT = "docgraph.viz.inspect"


def __getattr__(name: str) -> Any:
    module = importlib.import_module(_INSPECT)
    if name in module.__all__ or hasattr(module, name):
        return getattr(module, name)
    raise AttributeError(f"module 'docgraph.viz' has no attribute {name!r}")
