"""Tests of docgraph.viz: networkx conversion, drawing, noisy-edge ranking and ROC AUC."""

from __future__ import annotations

import itertools
import warnings

import matplotlib.image as mpimg
import networkx as nx
import numpy as np
import pytest
import torch

from docgraph.data.document import make_document
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig, document_to_graph
from docgraph.viz import (
    draw_document_graph,
    edge_weight_report,
    format_edge_table,
    noisy_edges,
    roc_auc,
    short_label,
    to_networkx,
)

SENTENCES = [
    (["Lombardi", "joined", "Lombardi", "Bank", "."], ["B-PER", "O", "B-ORG", "I-ORG", "O"]),
    (["Lombardi", "said", "the", "bank", "grew", "."], ["B-PER", "O", "O", "O", "O", "O"]),
    (["The", "Bank", "thanked", "Mr", "Lombardi"], ["O", "B-ORG", "O", "O", "B-PER"]),
]


@pytest.fixture()
def example():
    doc = make_document("doc-1", SENTENCES)
    vocabs = Vocabularies.build([doc])
    graph = document_to_graph(doc, vocabs, GraphConfig(max_neighbours=None))
    return doc, vocabs, graph


def _expected_edges(doc) -> set[tuple[int, int]]:
    words = [w.lower() for w in doc.tokens]
    return {(j, i) for i, j in itertools.permutations(range(len(words)), 2) if words[i] == words[j]}


def test_nodes_edges_and_attributes(example):
    doc, vocabs, graph = example
    expected = _expected_edges(doc)
    # lombardi x4 -> 12, bank x3 -> 6, "." x2 -> 2, the x2 -> 2
    assert len(expected) == 22
    for G in (to_networkx(graph, doc), to_networkx(graph, vocabs=vocabs)):
        assert isinstance(G, nx.DiGraph)
        assert G.number_of_nodes() == doc.num_tokens == 16
        assert set(G.edges) == expected
        assert G.graph["doc_id"] == "doc-1" and G.graph["num_sentences"] == 3
        node = G.nodes[7]  # "the" in sentence 1
        assert node["word"] == "the" and node["sentence"] == 1 and node["position"] == 2
        assert G.nodes[2]["gold_tag"] == "B-ORG" and G.nodes[2]["gold_type"] == "ORG"
        assert G.nodes[3]["gold_tag"] == "I-ORG"
        assert G.nodes[15]["gold_type"] == "PER"
        assert "uncertainty" not in node and "pred_tag" not in node and "pruned" not in node
        assert all("r_ij" not in a for _, _, a in G.edges(data=True))
    with pytest.raises(ValueError, match="document or the vocabularies"):
        to_networkx(graph)


def test_noisy_flags_match_gold_types(example):
    doc, _, graph = example
    G = to_networkx(graph, doc)
    types = [t[2:] if t != "O" else "O" for t in doc.tags]
    for j, i, attrs in G.edges(data=True):
        assert attrs["same_type"] == (types[j] == types[i])
        assert attrs["noisy"] == (types[j] != types[i])
    # Lombardi (PER) <-> Lombardi (ORG) and "Bank" (ORG) <-> "bank" (O) are noisy
    assert G.edges[0, 2]["noisy"] and G.edges[2, 0]["noisy"]
    assert not G.edges[0, 5]["noisy"]
    assert G.edges[3, 8]["noisy"] and not G.edges[3, 12]["noisy"]


def test_scores_are_attached(example):
    doc, vocabs, graph = example
    n, m = graph.num_nodes, graph.edge_index.size(1)
    r = torch.linspace(0, 1, m)
    u = torch.linspace(0, 1, n)
    drop = u > 0.5
    pred = torch.zeros(n, dtype=torch.long)
    G = to_networkx(graph, doc, vocabs, uncertainty=u, drop=drop, edge_weight=r, predicted=pred)
    for e, (j, i) in enumerate(graph.edge_index.t().tolist()):
        assert G.edges[j, i]["r_ij"] == pytest.approx(float(r[e]))
        assert G.edges[j, i]["pruned"] == bool(drop[j])
    assert G.nodes[15]["pruned"] and not G.nodes[0]["pruned"]
    assert G.nodes[3]["uncertainty"] == pytest.approx(float(u[3]))
    assert G.nodes[0]["pred_tag"] == "O" and G.nodes[0]["pred_type"] == "O"
    with pytest.raises(ValueError, match="edge_weight"):
        to_networkx(graph, doc, vocabs, edge_weight=r[:-1])


def test_with_model(example):
    from docgraph.model import GCDocConfig
    from docgraph.persistence.model_dir import build_model

    doc, vocabs, graph = example
    torch.manual_seed(0)
    model = build_model(GCDocConfig(hidden=8, char_hidden=4, char_dim=8, word_dim=8, sent_dim=8,
                                    uncertainty_hidden=4, num_samples=2), vocabs)
    G = to_networkx(graph, doc, vocabs, model=model)
    assert all({"pred_tag", "uncertainty", "pruned"} <= set(a) for _, a in G.nodes(data=True))
    assert all(0.0 <= a["r_ij"] <= 1.0 for _, _, a in G.edges(data=True))


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


def test_noisy_edges_ranking():
    G = nx.DiGraph(doc_id="d")
    for v, (word, gold) in enumerate([("A", "PER"), ("a", "ORG"), ("A", "PER"), ("x", "O")]):
        G.add_node(v, word=word, sentence=0, position=v, gold_type=gold)
    scores = {(0, 1): 0.9, (1, 0): 0.2, (0, 2): 0.05, (2, 0): 0.95, (1, 2): 0.6}
    for (j, i), r in scores.items():
        same = G.nodes[j]["gold_type"] == G.nodes[i]["gold_type"]
        G.add_edge(j, i, r_ij=r, same_type=same, noisy=not same)
    G.add_edge(3, 3)  # no gold information: skipped
    ranked = noisy_edges(G)
    assert [(r["source"], r["target"]) for r in ranked] == [(0, 2), (0, 1), (1, 2), (1, 0), (2, 0)]
    assert [r["error"] for r in ranked] == pytest.approx([0.95, 0.9, 0.6, 0.2, 0.05])
    top = noisy_edges([G, G], k=3)
    assert len(top) == 3
    first = top[0]
    assert first["source_word"] == "A" and first["target_type"] == "PER" and first["same_type"]
    assert first["r_ij"] == pytest.approx(0.05)
    assert "0.050" in format_edge_table(top)
    # without scores: noisy edges first
    for _, _, attrs in G.edges(data=True):
        attrs.pop("r_ij", None)
    ranked = noisy_edges(G)
    assert [r["noisy"] for r in ranked] == [True, True, True, False, False]
    assert ranked[0]["r_ij"] is None


def _brute_force_auc(scores, labels):
    pos = [s for s, y in zip(scores, labels) if y]
    neg = [s for s, y in zip(scores, labels) if not y]
    total = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return total / (len(pos) * len(neg))


def test_roc_auc_matches_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(20):
        scores = rng.integers(0, 6, size=40) / 5.0  # many ties
        labels = rng.random(40) < 0.4
        assert roc_auc(scores, labels) == pytest.approx(_brute_force_auc(scores, labels))
    assert roc_auc([0.1, 0.9], [False, True]) == 1.0
    assert roc_auc([0.1, 0.9], [True, False]) == 0.0
    assert roc_auc([0.5, 0.5], [True, False]) == 0.5
    assert roc_auc([0.1, 0.2], [True, True]) is None


def test_edge_weight_report(example, tmp_path):
    G = _scored(example)
    G.nodes[0]["pruned"] = True
    for j, _, attrs in G.edges(data=True):
        attrs["pruned"] = j == 0
    report = edge_weight_report([G], tmp_path / "hist.png")
    edges = list(G.edges(data=True))
    same = [a["r_ij"] for _, _, a in edges if a["same_type"]]
    diff = [a["r_ij"] for _, _, a in edges if not a["same_type"]]
    assert report["edges"] == len(edges) == 22
    assert report["same_type_edges"] == len(same) and report["noisy_edges"] == len(diff)
    assert report["mean_r_same"] == pytest.approx(np.mean(same))
    assert report["mean_r_noisy"] == pytest.approx(np.mean(diff))
    labels = [True] * len(same) + [False] * len(diff)
    assert report["auc"] == pytest.approx(_brute_force_auc(same + diff, labels))
    pruned = [a for j, _, a in edges if j == 0]
    assert report["pruned_edges"] == len(pruned) == 3
    assert report["pruned_noisy_edges"] == sum(a["noisy"] for a in pruned) == 1
    assert mpimg.imread(tmp_path / "hist.png").shape[:2] == (360, 600)
    empty = edge_weight_report([])
    assert empty["edges"] == 0 and empty["auc"] is None and empty["mean_r_same"] is None


# ---------------------------------------------------------------- inputs that must not trip it
def test_short_label():
    assert short_label("Lombardi") == "Lombardi"
    assert short_label("x" * 25) == "x" * 25
    assert short_label("x" * 1000) == "x" * 24 + "…" and len(short_label("y" * 50, 10)) == 10
    assert short_label(42) == "42"


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


def test_visualize_script_on_bad_and_odd_data(model_dir, tmp_path):
    from conftest import run_script

    data = tmp_path / "data"
    data.mkdir()
    long_token = "Q" * 1500
    (data / "dev.txt").write_text(  # document 0: punctuation only, no edges
        "-DOCSTART- O\n\n. O\n! O\n\n"
        f"-DOCSTART- O\n\nKalvenia B-LOC\n{long_token} O\nKalvenia B-LOC\n.\tO\n\n")
    (data / "test.txt").write_bytes("-DOCSTART- O\n\ncaf\u00e9 O\n".encode("latin-1"))
    base = ["--model", model_dir, "--dataset", "column", "--data-dir", data]
    res = run_script("visualize", *base, "--split", "test", "--noisy", "3")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip() == (f"error: {data / 'test.txt'}:3: expected UTF-8 text, got byte "
                                  "0xe9 at column 4 (byte offset 17); convert the file to UTF-8")
    res = run_script("visualize", *base, "--split", "dev", "--doc", "1",
                     "--out", tmp_path / "long.png", "--noisy", "3")
    assert res.returncode == 0, res.stderr
    assert res.stderr == "" and (tmp_path / "long.png").stat().st_size > 0
    table = res.stdout.splitlines()[1:]
    assert len(table) == 3 and all("Kalvenia" in line for line in table[1:])


def test_noisiest_words_and_a_readable_default_drawing(model_dir, tmp_path):
    from conftest import run_script

    from docgraph.viz import noisiest_words, repeated_words

    G = nx.DiGraph(doc_id="d")
    for v, (word, gold) in enumerate([("A", "PER"), ("a", "ORG"), ("b", "O"), ("B", "O"),
                                      ("c", "LOC"), ("C", "LOC")]):
        G.add_node(v, word=word, sentence=0, position=v, gold_type=gold)
    for (j, i), r in {(0, 1): 0.9, (1, 0): 0.8, (2, 3): 0.7, (3, 2): 0.99, (4, 5): 0.2,
                      (5, 4): 0.9}.items():
        same = G.nodes[j]["gold_type"] == G.nodes[i]["gold_type"]
        G.add_edge(j, i, r_ij=r, same_type=same, noisy=not same)
    assert repeated_words(G) == {"a", "b", "c"}
    # errors: A->a 0.9, a->A 0.8, c->C 0.8, b->B 0.3 (O-O: left out), ...: the words of the
    # worst edges first
    assert noisiest_words(G, 2) == ["a", "c"]
    assert noisiest_words(G, 5) == ["a", "c"]
    base = ["--model", model_dir, "--split", "dev", "--doc", "0"]
    res = run_script("visualize", *base, "--out", tmp_path / "few.png", "--max-words", "2")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("drawing the 2 of ") and "--max-words 0 draws all" in res.stdout
    res = run_script("visualize", *base, "--out", tmp_path / "all.png", "--max-words", "0")
    assert res.returncode == 0 and "drawing the" not in res.stdout
    assert (tmp_path / "all.png").stat().st_size > (tmp_path / "few.png").stat().st_size
    help_text = " ".join(run_script("visualize", "--help").stdout.split())
    assert "--out needs it" in help_text and "(default: 6; 0 draws every word)" in help_text


def _tagged_graph(predicted: bool = True) -> nx.DiGraph:
    """A document whose function words repeat most; Jordan and Bulls tagged inconsistently."""
    tokens = [("The", "O", "O"), ("Jordan", "PER", "PER"), (",", "O", "O"), ("the", "O", "O"),
              ("Jordan", "PER", "ORG"), (",", "O", "O"), ("Bulls", "ORG", "ORG"),
              ("Bulls", "ORG", "O"), ("Jordan", "PER", "PER"), ("Chicago", "LOC", "LOC"),
              ("Chicago", "LOC", "LOC"), ("Chicago", "LOC", "LOC"), ("said", "O", "MISC"),
              ("said", "O", "O"), ("the", "O", "O"), (",", "O", "O")]
    G = nx.DiGraph(doc_id="d")
    for v, (word, gold, pred) in enumerate(tokens):
        G.add_node(v, word=word, sentence=v // 4, position=v % 4, gold_type=gold,
                   **({"pred_type": pred} if predicted else {}))
    for j, i in itertools.permutations(range(len(tokens)), 2):
        if tokens[j][0].lower() == tokens[i][0].lower():
            same = tokens[j][1] == tokens[i][1]
            # function words get the worst scores (the old ranking drew them first)
            r = 0.001 if tokens[j][1] == "O" and same else 0.6
            G.add_edge(j, i, r_ij=r, same_type=same, noisy=not same)
    return G


def test_inspection_words_are_entities_and_mentions_most_inconsistent_first():
    from docgraph.viz import inspection_words, noisiest_words

    G = _tagged_graph()
    assert not {"the", ","} & set(noisiest_words(G, 3))  # their O-O edges are left out
    # jordan: 2 predicted types, 1 against gold, 3 times; bulls and said (a predicted MISC):
    # 2 types, 1 wrong, twice (alphabetical); chicago: consistent
    assert inspection_words(G, 10) == ["jordan", "bulls", "said", "chicago"]
    assert inspection_words(G, 2) == ["jordan", "bulls"] and inspection_words(G, 0) == []
    # gold tags only: the gold entities, those with noisy edges or most repeats first
    assert inspection_words(_tagged_graph(predicted=False), 10) == ["chicago", "jordan", "bulls"]
    # no entity and no mention among the repeats: nothing to inspect
    plain = _tagged_graph()
    for _, attrs in plain.nodes(data=True):
        attrs.update(gold_type="O", pred_type="O")
    assert inspection_words(plain, 5) == []


def test_noisy_edges_leave_out_edges_between_two_o_tokens():
    G = _tagged_graph()
    function_words = {"the", ","}
    ranked = noisy_edges(G)
    assert ranked and not any(r["source_word"].lower() in function_words for r in ranked)
    # a gold-O word that the model tags as a mention keeps its edges
    assert {r["source_word"] for r in ranked} == {"Jordan", "Bulls", "Chicago", "said"}
    everything = noisy_edges(G, o_edges=True)
    assert everything[0]["source_word"].lower() in function_words  # r_ij 0.001: error 0.999
    assert len(everything) == G.number_of_edges()


def test_visualize_draws_and_lists_what_a_reader_inspects(model_dir, tmp_path):
    from conftest import run_script

    from docgraph.data.registry import load_dataset
    from docgraph.graph.splits import prepare_split
    from docgraph.persistence.model_dir import load_model_dir
    from docgraph.viz import inspect_documents, inspection_words

    model, vocabs, config = load_model_dir(model_dir)
    prepared = prepare_split(load_dataset("sample", splits=("dev",))["dev"], vocabs, config)
    G = inspect_documents(model, prepared.graphs[:1], prepared.documents[:1], vocabs)[0]
    expected = inspection_words(G, 6)
    assert expected  # the sample's first dev document repeats entity words
    mention = {str(a["word"]).lower() for _, a in G.nodes(data=True)
               if a["gold_type"] != "O" or a["pred_type"] != "O"}
    assert set(expected) <= mention and not {"the", ",", "."} & set(expected)
    res = run_script("visualize", "--model", model_dir, "--doc", "0",
                     "--out", tmp_path / "doc0.png", "--noisy", "10")
    assert res.returncode == 0, res.stderr
    first = res.stdout.splitlines()[0]
    assert f"({', '.join(expected)})" in first, first
    assert "entities or predicted mentions" in first
    rows = [line for line in res.stdout.splitlines() if line.startswith(tuple("0123456789"))]
    records = noisy_edges(G, 10)
    assert len(rows) == len(records) == 10
    for row, record in zip(rows, records):
        assert row.split()[2] == short_label(record["source_word"], 40)
        ends = [G.nodes[record[k]] for k in ("source", "target")]
        assert any(a["gold_type"] != "O" or a["pred_type"] != "O" for a in ends)
