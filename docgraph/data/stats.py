"""Corpus statistics: documents, sentences, tokens and entities per type."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from docgraph.data.document import Document
from docgraph.data.tags import spans

_PART_SUFFIX = re.compile(r"/part-\d+$")


def source_document_id(doc_id: str) -> str:
    """Strip an OntoNotes ``/part-NNN`` suffix from a document id.

    Args:
        doc_id: A document id such as ``"bc/cctv/00/cctv_0001/part-002"``.

    Returns:
        The id of the source document (``"bc/cctv/00/cctv_0001"``); other ids are unchanged.
    """
    return _PART_SUFFIX.sub("", doc_id)


def corpus_statistics(documents: Iterable[Document]) -> dict[str, Any]:
    """Count documents, sentences, tokens and entities of a corpus.

    Args:
        documents: Documents with IOB2 tags.

    Returns:
        A dict with ``documents``, ``sentences``, ``tokens``, ``entities`` (type -> count,
        sorted by type), ``parts`` (number of documents, i.e. OntoNotes parts) and
        ``source_documents`` (number of distinct ids without the ``/part-NNN`` suffix).
    """
    docs = list(documents)
    entities: Counter[str] = Counter()
    sentences = tokens = 0
    for doc in docs:
        for sent in doc.sentences:
            sentences += 1
            tokens += len(sent)
            entities.update(typ for typ, _, _ in spans(sent.tags))
    return {
        "documents": len(docs),
        "sentences": sentences,
        "tokens": tokens,
        "entities": dict(sorted(entities.items())),
        "parts": len(docs),
        "source_documents": len({source_document_id(d.doc_id) for d in docs}),
    }


#: The document-graph sizes ``docgraph stats`` adds to :func:`corpus_statistics`
#: (:func:`docgraph.graph.graph_statistics`).
GRAPH_KEYS = ("recurrent_tokens", "edges_all", "edges_sampled")


def format_statistics(split: str, stats: dict[str, Any]) -> str:
    """Human-readable lines for one split: :func:`corpus_statistics` and the
    :data:`GRAPH_KEYS`, one quantity per line."""
    lines = [f"[{split}]"]
    labels = {
        "documents": "documents/parts",  # the graph unit: an OntoNotes part, a CoNLL document
        "source_documents": "source documents",
        "sentences": "sentences",
        "tokens": "tokens",
    }
    for key, label in labels.items():
        lines.append(f"  {label:<18}{stats[key]:>10,}")
    total = sum(stats["entities"].values())
    lines.append(f"  {'entities':<18}{total:>10,}")
    for typ, count in stats["entities"].items():
        lines.append(f"    {typ:<16}{count:>10,}")
    for key in GRAPH_KEYS:
        lines.append(f"  {key:<18}{stats[key]:>10,}")
    return "\n".join(lines)
