"""Scratch: build graphs of the first N OntoNotes test docs as raw text, pickle per model."""
import sys, pickle, tempfile
from pathlib import Path
import torch
from docgraph.data.registry import load_dataset
from docgraph.tools.peer_speed import split_text
from docgraph.tagging import pipeline
from docgraph.tagging.prediction_io import ReadOptions, chunk_document, read_chunks
from docgraph.tagging.tagger import Tagger

def graphs_for(model, limit=100):
    documents = load_dataset("ontonotes", "../shared/data/ontonotes", splits=("test",))["test"][:limit]
    text, _ = split_text(documents)
    tagger = Tagger.load(model)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.txt"
        path.write_text(text, encoding="utf-8")
        options = ReadOptions("text", False, "paragraphs", tagger.max_doc_tokens or 10**9)
        docs = [chunk_document(c) for c in read_chunks(path, options)]
    graphs = pipeline._graphs([d for d in docs if d.sentences], tagger)
    return tagger, graphs
