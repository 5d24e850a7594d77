"""Inspecting document graphs and what GCDoc learns on them.

* :mod:`docgraph.viz.networkx` -- a document graph as an annotated :class:`networkx.DiGraph`,
  with the tags, uncertainty, pruning and edge weights of a tagging pass (:func:`to_networkx`;
  :meth:`docgraph.tagging.tagger.Tagger.inspect` runs the pass and builds them);
* :mod:`docgraph.viz.edges` -- statistics of those graphs' edges: noisy edges, how well the
  learnt :math:`r_{ij}` separate them, the words worth inspecting (no torch, no matplotlib);
* :mod:`docgraph.viz.draw` -- matplotlib figures: a document's graph, the :math:`r_{ij}`
  histogram;
* :mod:`docgraph.viz.html` -- the interactive HTML page of tagged documents.

Every name below is importable from here (``from docgraph.viz import to_networkx``) and is
imported from its module on first use (PEP 562), so that importing ``docgraph.viz.html`` (what
tagging uses) or the statistics does not load matplotlib.
"""

from __future__ import annotations

from docgraph.runtime.lazy import lazy_exports

#: Where each public name lives.
_MODULES: dict[str, str] = {
    **dict.fromkeys(("to_networkx",), "docgraph.viz.networkx"),
    **dict.fromkeys(("edge_weight_stats", "format_edge_table", "inspection_words",
                     "noisiest_words", "noisy_edges", "relation_scores", "repeated_words",
                     "roc_auc", "short_label"), "docgraph.viz.edges"),
    **dict.fromkeys(("draw_document_graph", "edge_weight_report", "save_figure"),
                    "docgraph.viz.draw"),
    **dict.fromkeys(("ENTITY_COLOURS", "document_errors", "entity_colour",
                     "inconsistent_strings", "page_title", "to_html"), "docgraph.viz.html"),
}

__all__ = sorted(_MODULES)


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)
