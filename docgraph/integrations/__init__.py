"""docgraph inside other libraries: a spaCy pipeline component (the ``spacy`` extra) and corpus
tagging on Ray Data (the ``ray`` extra); neither library is imported until a name is used."""

from __future__ import annotations

from docgraph.runtime.lazy import lazy_exports

#: Where each public name lives; each is imported from its module on first use (PEP 562), so
#: that importing one module of this package loads no other.
_MODULES: dict[str, str] = {
    "DocgraphNER": "docgraph.integrations.spacy_component",
    "DocgraphSpacyError": "docgraph.integrations.spacy_component",
    "make_docgraph_ner": "docgraph.integrations.spacy_component",
    "CorpusReport": "docgraph.integrations.ray",
    "corpus_inputs": "docgraph.integrations.ray",
    "tag_corpus": "docgraph.integrations.ray",
}

__all__ = sorted(_MODULES)


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)
