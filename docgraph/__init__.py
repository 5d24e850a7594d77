"""docgraph: document-level named entity recognition with document graphs (GCDoc).

The public API::

    from docgraph import (
        GCDoc, GCDocConfig, DocGraphConv,            # model and the reusable graph layer
        ExperimentConfig, TrainConfig, GraphConfig,  # configuration dataclasses
        run_experiment, Tagger,                      # train from Python, tag new text
        read_conll, read_ontonotes, load_dataset,    # corpus readers
    )
"""

from docgraph.config import ExperimentConfig, TrainConfig
from docgraph.data.conll import read_conll
from docgraph.data.document import Document, Sentence
from docgraph.data.ontonotes import read_ontonotes
from docgraph.data.registry import load_dataset
from docgraph.graph import GraphConfig
from docgraph.model import GCDoc, GCDocConfig
from docgraph.nn import DocGraphConv
from docgraph.tagger import Entity, Tagger
from docgraph.training import run_experiment, run_seeds

__version__ = "0.1.0"

__all__ = [
    "DocGraphConv",
    "Document",
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
