"""Corpus reading: documents, sentences, tag schemes, vocabularies and embeddings."""

from docgraph.data.conll import read_conll, write_conll
from docgraph.data.document import Document, Sentence, make_document
from docgraph.data.errors import CorpusFormatError, DataNotFoundError
from docgraph.data.ontonotes import read_ontonotes
from docgraph.data.registry import (
    DATASETS,
    default_data_dir,
    load_dataset,
    sample_data_dir,
)
from docgraph.data.stats import corpus_statistics

__all__ = [
    "DATASETS",
    "CorpusFormatError",
    "DataNotFoundError",
    "Document",
    "Sentence",
    "corpus_statistics",
    "default_data_dir",
    "load_dataset",
    "make_document",
    "read_conll",
    "read_ontonotes",
    "sample_data_dir",
    "write_conll",
]
