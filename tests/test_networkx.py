"""docgraph.viz: every name from the package, documents as annotated networkx graphs with
what a model's tagging pass computed on them (docgraph/viz/networkx.py), and
scripts/visualize.py."""

from __future__ import annotations

import itertools
import subprocess
import sys

import networkx as nx
import pytest
import torch
from conftest import annotated_graphs, lombardi_example

import docgraph.viz
from docgraph.viz import (
    inspection_words,
    noisiest_words,
    noisy_edges,
    repeated_words,
    short_label,
    to_networkx,
)


@pytest.fixture()
def example():
    return lombardi_example()


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
    G = annotated_graphs(model, [graph], [doc], vocabs)[0]
    assert all({"pred_tag", "uncertainty", "pruned"} <= set(a) for _, a in G.nodes(data=True))
    assert all(0.0 <= a["r_ij"] <= 1.0 for _, _, a in G.edges(data=True))


def test_annotated_graphs_are_the_tagging_pass(model_dir, sample_splits):
    from docgraph.graph.splits import prepare_split
    from docgraph.persistence.model_dir import load_model_dir
    from docgraph.tagging.inference import inspect_graphs, predict_graphs

    model, vocabs, config = load_model_dir(model_dir)
    prepared = prepare_split(sample_splits["dev"], vocabs, config)
    state = torch.get_rng_state()
    graphs = annotated_graphs(model, prepared.graphs, prepared.documents, vocabs, 500, 3)
    assert torch.equal(torch.get_rng_state(), state)
    tags = predict_graphs(model, prepared.graphs, vocabs, seed=3)
    for G, doc_tags in zip(graphs, tags, strict=True):
        assert [G.nodes[v]["pred_tag"] for v in G] == [t for s in doc_tags for t in s]
    # one graph alone, tagged by itself at tagging seed 0
    out = inspect_graphs(model, prepared.graphs[1:2], vocabs)[0]
    alone = to_networkx(prepared.graphs[1], prepared.documents[1], vocabs,
                        uncertainty=out.uncertainty, drop=out.drop, edge_weight=out.edge_weight,
                        predicted=out.label_ids)
    seed0 = annotated_graphs(model, prepared.graphs, prepared.documents, vocabs)[1]
    assert [(v, a["pred_tag"], a.get("pruned")) for v, a in alone.nodes(data=True)] == [
        (v, a["pred_tag"], a.get("pruned")) for v, a in seed0.nodes(data=True)]
    assert [a.get("r_ij") for *_, a in alone.edges(data=True)] == pytest.approx(
        [a.get("r_ij") for *_, a in seed0.edges(data=True)], abs=1e-5)


#: The public names of the module the package held before it was split.
_OLD_NAMES = ("draw_document_graph", "edge_weight_report", "format_edge_table",
              "inspection_words", "noisiest_words", "noisy_edges",
              "repeated_words", "roc_auc", "save_figure", "short_label", "to_networkx")


def test_every_name_imports_from_the_package():
    import importlib

    assert set(_OLD_NAMES) <= set(docgraph.viz.__all__) <= set(dir(docgraph.viz))
    for name in docgraph.viz.__all__:
        value = getattr(docgraph.viz, name)
        module = importlib.import_module(value.__module__) if callable(value) else None
        assert module is None or name in module.__all__, name
    for name in ("_graphs", "torch", "matplotlib", "inspect"):
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
            getattr(docgraph.viz, name)


def test_statistics_and_the_page_load_neither_torch_nor_matplotlib():
    code = ("import sys; from docgraph.viz import noisy_edges, roc_auc, to_html; "
            "import docgraph.viz.edges, docgraph.viz.html; "
            "print('matplotlib' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "False"]


# ---------------------------------------------------------------------------- visualize.py
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
    # the documented --data FILE shows a file's documents as the split's
    res = run_script("visualize", "--model", model_dir, "--data", data / "dev.txt", "--doc",
                     "1", "--html", tmp_path / "file.html", "--noisy", "3")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [f"wrote {tmp_path / 'file.html'} (1 documents)", *table]
    assert "dev.txt" in (tmp_path / "file.html").read_text(encoding="utf-8")


def test_noisiest_words_and_a_readable_default_drawing(model_dir, tmp_path):
    from conftest import run_script

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


def test_visualize_draws_and_lists_what_a_reader_inspects(model_dir, tmp_path):
    from conftest import run_script

    from docgraph.data.registry import load_dataset
    from docgraph.graph.splits import prepare_split
    from docgraph.persistence.model_dir import load_model_dir

    model, vocabs, config = load_model_dir(model_dir)
    prepared = prepare_split(load_dataset("sample", splits=("dev",))["dev"], vocabs, config)
    G = annotated_graphs(model, prepared.graphs[:1], prepared.documents[:1], vocabs)[0]
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
