"""Figures of annotated document graphs (docgraph/viz/draw.py): the document graph, the
relation-score histogram of edge_weight_report, atomic saving; inputs that must not trip
them."""

from __future__ import annotations

import warnings

import matplotlib.image as mpimg
import numpy as np
import pytest
from conftest import lombardi_example

from docgraph.data.document import make_document
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig, document_to_graph
from docgraph.viz.draw import draw_document_graph, edge_weight_report, save_figure
from docgraph.viz.edges import edge_weight_stats, format_edge_table, noisy_edges, short_label
from docgraph.viz.networkx import to_networkx


@pytest.fixture()
def example():
    return lombardi_example()


def _scored(example):
    doc, _, graph = example
    G = to_networkx(graph, doc)
    rng = np.random.default_rng(0)
    for _, _, attrs in G.edges(data=True):
        attrs["r_ij"] = float(rng.random())
        attrs["pruned"] = False
    return G


def test_drawing_png_and_svg(example, tmp_path):
    G = _scored(example)
    G.nodes[0]["pruned"] = True
    png = tmp_path / "doc.png"
    fig = draw_document_graph(G, png, figsize=(8, 5), dpi=50)
    assert fig.get_size_inches() == pytest.approx((8, 5))
    image = mpimg.imread(png)
    assert image.shape[:2] == (250, 400)
    assert png.stat().st_size > 1000
    svg = tmp_path / "sub" / "word.svg"
    draw_document_graph(G, svg, word="LOMBARDI", layout="word")
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert not list(tmp_path.glob("**/*.tmp"))
    with pytest.raises(ValueError, match="does not occur"):
        draw_document_graph(G, word="nowhere")
    with pytest.raises(ValueError, match=r"png or \.svg"):
        draw_document_graph(G, tmp_path / "doc.jpg")
    # without scores and labels: still draws
    plain = to_networkx(example[2], vocabs=example[1])
    draw_document_graph(plain, tmp_path / "plain.png")
    assert mpimg.imread(tmp_path / "plain.png").size > 0


def test_edge_weight_report(example, tmp_path):
    G = _scored(example)
    G.nodes[0]["pruned"] = True
    for j, _, attrs in G.edges(data=True):
        attrs["pruned"] = j == 0
    report = edge_weight_report([G], tmp_path / "hist.png")
    assert report == {**edge_weight_stats([G]), "path": str(tmp_path / "hist.png")}
    assert report["edges"] == 22 and report["pruned_edges"] == 3
    assert report["pruned_noisy_edges"] == 1 and report["auc"] is not None
    assert mpimg.imread(tmp_path / "hist.png").shape[:2] == (360, 600)
    assert edge_weight_report(iter([G]))["edges"] == 22
    empty = edge_weight_report([])
    assert empty["edges"] == 0 and empty["auc"] is None and empty["mean_r_same"] is None
    assert empty["path"] is None


def test_save_figure_writes_png_and_svg_only(example, tmp_path):
    fig = draw_document_graph(_scored(example), figsize=(4, 3), dpi=40)
    assert save_figure(fig, tmp_path / "a" / "g.svg").read_text().lstrip().startswith("<?xml")
    with pytest.raises(ValueError, match="unsupported figure format"):
        save_figure(fig, tmp_path / "g.pdf")
    assert not (tmp_path / "g.pdf").exists()


# ---------------------------------------------------------------- inputs that must not trip it
def _graph_of(sentences):
    doc = make_document("edge", sentences)
    vocabs = Vocabularies.build([doc])
    return doc, document_to_graph(doc, vocabs, GraphConfig(max_neighbours=None))


def test_drawing_long_tokens_and_graphs_without_edges(tmp_path):
    long_token = "Z" * 1500
    doc, graph = _graph_of([([long_token, "met", long_token, "."], ["B-PER", "O", "B-PER", "O"])])
    G = to_networkx(graph, doc)
    assert G.number_of_nodes() == 4 and G.number_of_edges() == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "constrained_layout not applied"
        fig = draw_document_graph(G, tmp_path / "long.png")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert short_label(long_token) in texts and max(map(len, texts)) <= 25
    assert mpimg.imread(tmp_path / "long.png").size > 0
    table = format_edge_table(noisy_edges(G, 5))
    assert long_token not in table and max(map(len, table.splitlines())) < 200
    # a document of punctuation only, without any repeated word: no edges at all
    doc, graph = _graph_of([([".", "!", "?"], ["O", "O", "O"])])
    G = to_networkx(graph, doc)
    assert G.number_of_edges() == 0
    fig = draw_document_graph(G, tmp_path / "punct.png")
    assert "3 tokens, 0 edges" in fig.axes[0].get_title()
    assert noisy_edges(G, 5) == [] and format_edge_table([]).count("\n") == 0
    assert edge_weight_report(G)["edges"] == 0
