"""Tagging with a trained model: the Tagger, evaluation, streams of raw text and their outputs.

The core is :meth:`Tagger.pipe <docgraph.tagging.tagger.Tagger.pipe>` (documents in,
:class:`~docgraph.tagging.result.TaggedDocument` out); :func:`entity_records` turns a tagged
document's entities into the records ``predict.py`` writes.
"""

import importlib
from typing import TYPE_CHECKING, Any

from docgraph.tagging.result import Entity, TaggedDocument, TaggedSentence, entity_records

if TYPE_CHECKING:
    from docgraph.tagging.tagger import Tagger

__all__ = ["Entity", "TaggedDocument", "TaggedSentence", "Tagger", "entity_records"]


def __getattr__(name: str) -> Any:
    # the Tagger loads torch: imported on first use (PEP 562)
    if name == "Tagger":
        return importlib.import_module("docgraph.tagging.tagger").Tagger
    raise AttributeError(f"module 'docgraph.tagging' has no attribute {name!r}")
