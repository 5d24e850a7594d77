"""Corpus reading: documents, sentences, tag schemes, vocabularies and embeddings."""

from docgraph.data.document import Document, Sentence, make_document

__all__ = ["Document", "Sentence", "make_document"]
