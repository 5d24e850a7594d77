"""docgraph: document-level named entity recognition with document graphs (GCDoc).

The public API::

    from docgraph import (
        GCDoc, GCDocConfig,                          # the model
        DocGraphConv, DocumentGraphModule,           # the reusable graph layer and module
        ExperimentConfig, TrainConfig, GraphConfig,  # configuration dataclasses
        run_experiment, Tagger,                      # train from Python, tag new text
        read_conll, read_ontonotes, load_dataset,    # corpus readers
    )
"""

import importlib
import os
from typing import TYPE_CHECKING, Any


def _keep_torch_cache_out_of_tmpdir() -> None:
    """Point torch's compile cache (which ``import torch._dynamo`` creates, by default
    ``$TMPDIR/torchinductor_<user>``) into docgraph's cache directory
    (``$DOCGRAPH_CACHE_DIR/torchinductor``, else ``~/.cache/docgraph/torchinductor``), unless
    ``TORCHINDUCTOR_CACHE_DIR`` is set or that directory cannot be made: no docgraph process
    leaves anything in ``$TMPDIR``."""
    if "TORCHINDUCTOR_CACHE_DIR" in os.environ:
        return
    base = os.environ.get("DOCGRAPH_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "docgraph")
    directory = os.path.join(base, "torchinductor")
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = directory


_keep_torch_cache_out_of_tmpdir()

if TYPE_CHECKING:
    from docgraph.config import ExperimentConfig, TrainConfig
    from docgraph.config.errors import DocgraphError
    from docgraph.data.conll import read_conll
    from docgraph.data.document import Document, Sentence
    from docgraph.data.ontonotes import read_ontonotes
    from docgraph.data.registry import load_dataset
    from docgraph.graph import GraphConfig
    from docgraph.model import GCDoc, GCDocConfig
    from docgraph.nn import DocGraphConv, DocumentGraphModule
    from docgraph.tagging.tagger import Entity, Tagger
    from docgraph.training.experiment import run_experiment, run_seeds

# Imported on first use (PEP 562), so that ``import docgraph.cli`` can check the arguments of a
# script before torch and PyG are loaded.
_LAZY = {
    "ExperimentConfig": "docgraph.config", "TrainConfig": "docgraph.config",
    "DocgraphError": "docgraph.config.errors",
    "read_conll": "docgraph.data.conll", "Document": "docgraph.data.document",
    "Sentence": "docgraph.data.document", "read_ontonotes": "docgraph.data.ontonotes",
    "load_dataset": "docgraph.data.registry", "GraphConfig": "docgraph.graph",
    "GCDoc": "docgraph.model", "GCDocConfig": "docgraph.model", "DocGraphConv": "docgraph.nn",
    "DocumentGraphModule": "docgraph.nn",
    "Entity": "docgraph.tagging.tagger", "Tagger": "docgraph.tagging.tagger",
    "run_experiment": "docgraph.training.experiment", "run_seeds": "docgraph.training.experiment",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'docgraph' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "DocGraphConv",
    "DocgraphError",
    "Document",
    "DocumentGraphModule",
    "Entity",
    "ExperimentConfig",
    "GCDoc",
    "GCDocConfig",
    "GraphConfig",
    "Sentence",
    "Tagger",
    "TrainConfig",
    "load_dataset",
    "read_conll",
    "read_ontonotes",
    "run_experiment",
    "run_seeds",
]
