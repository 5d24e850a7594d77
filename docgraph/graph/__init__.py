"""Document graphs: one node per token, edges between recurrent words (paper, "Graph Construction").

* :mod:`docgraph.graph.build` -- recurrence edges, :class:`DocumentGraph` and the graphs of a
  corpus (:func:`documents_to_graphs`), contextual features on them
  (:func:`attach_token_features`);
* :mod:`docgraph.graph.splits` -- a corpus split made ready for the model (vocabularies, chunks,
  graphs).

Every name below is importable from here. The graph options (:mod:`docgraph.config.graph`)
and the chunking of long documents (:mod:`docgraph.data.chunking`) are defined in their own
modules and re-exported; the batch sampler is :mod:`docgraph.batching.sampler`'s.
"""

from docgraph.config.graph import GraphConfig
from docgraph.data.chunking import split_long_documents
from docgraph.graph.build import (
    PUNCTUATION,
    UNLABELLED_TAGS,
    CharIdTable,
    DocumentGraph,
    attach_token_features,
    document_generator,
    document_to_graph,
    documents_to_graphs,
    graph_statistics,
    recurrence_edges,
)

__all__ = [
    "PUNCTUATION",
    "UNLABELLED_TAGS",
    "CharIdTable",
    "DocumentGraph",
    "GraphConfig",
    "attach_token_features",
    "document_generator",
    "document_to_graph",
    "documents_to_graphs",
    "graph_statistics",
    "recurrence_edges",
    "split_long_documents",
]
