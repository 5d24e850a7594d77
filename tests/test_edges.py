"""Statistics of annotated graphs' edges (docgraph/viz/edges.py): noisy-edge ranking and its
table, ROC AUC and the relation-score figures, the words worth inspecting. Importing the
module loads neither torch nor matplotlib (tests/test_networkx.py)."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from docgraph.viz.edges import (
    edge_weight_stats,
    format_edge_table,
    inspection_words,
    noisiest_words,
    noisy_edges,
    relation_scores,
    roc_auc,
    short_label,
)


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


def test_edge_weight_stats():
    G = _tagged_graph()
    G.nodes[4]["gold_type"] = "ORG"  # one "Jordan" of another type: noisy edges
    for j, i, attrs in G.edges(data=True):
        attrs["same_type"] = G.nodes[j]["gold_type"] == G.nodes[i]["gold_type"]
        attrs["noisy"] = not attrs["same_type"]
        attrs["pruned"] = j == 4
    edges = list(G.edges(data=True))
    same = [a["r_ij"] for _, _, a in edges if a["same_type"]]
    diff = [a["r_ij"] for _, _, a in edges if not a["same_type"]]
    assert relation_scores(G) == relation_scores([G]) == (same, diff)
    stats = edge_weight_stats(G)
    assert stats["edges"] == stats["scored_edges"] == len(edges)
    assert stats["same_type_edges"] == len(same) and stats["noisy_edges"] == len(diff) > 0
    assert stats["noisy_share"] == pytest.approx(len(diff) / len(edges))
    assert stats["mean_r_same"] == pytest.approx(np.mean(same))
    assert stats["mean_r_noisy"] == pytest.approx(np.mean(diff))
    labels = [True] * len(same) + [False] * len(diff)
    assert stats["auc"] == pytest.approx(_brute_force_auc(same + diff, labels))
    pruned = [a for j, _, a in edges if j == 4]
    assert stats["pruned_edges"] == len(pruned) == 2
    assert stats["pruned_noisy_edges"] == sum(a["noisy"] for a in pruned) == 2
    assert stats["pruned_noisy_share"] == pytest.approx(
        stats["pruned_noisy_edges"] / stats["pruned_edges"])
    assert edge_weight_stats(iter([G, G]))["edges"] == 2 * len(edges)  # any iterable
    empty = edge_weight_stats([])
    assert empty["edges"] == 0 and empty["auc"] is None and empty["mean_r_same"] is None
    assert empty["noisy_share"] is None and empty["pruned_noisy_share"] is None
    for _, _, attrs in G.edges(data=True):
        del attrs["r_ij"]
    unscored = edge_weight_stats(G)
    assert unscored["scored_edges"] == 0 and unscored["auc"] is None
    assert relation_scores(G) == ([], [])


def test_short_label():
    assert short_label("Lombardi") == "Lombardi"
    assert short_label("x" * 25) == "x" * 25
    assert short_label("x" * 1000) == "x" * 24 + "…" and len(short_label("y" * 50, 10)) == 10
    assert short_label(42) == "42"


def test_inspection_words_are_entities_and_mentions_most_inconsistent_first():
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
