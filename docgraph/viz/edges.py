"""Statistics of the edges of annotated document graphs: which edges join tokens of different
types, how well the learnt :math:`r_{ij}` tell them apart, and which words a person should
look at first.

The graphs are those of :func:`docgraph.viz.to_networkx` (:mod:`docgraph.viz.networkx`):
:func:`noisy_edges` ranks the edges by how wrong their relation scores are and
:func:`format_edge_table` prints them; :func:`edge_weight_stats` (and its :func:`roc_auc`)
measures the scores of a whole split; :func:`inspection_words` and :func:`noisiest_words` pick
the words worth a drawing (:func:`docgraph.viz.draw_document_graph`). Nothing here imports
torch or matplotlib.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import networkx as nx
import numpy as np

__all__ = [
    "edge_weight_stats",
    "format_edge_table",
    "inspection_words",
    "noisiest_words",
    "noisy_edges",
    "relation_scores",
    "repeated_words",
    "roc_auc",
    "short_label",
]


def short_label(word: object, limit: int = 25) -> str:
    """A token as drawn or printed: at most ``limit`` characters, cut ones ending in ``…``.

    Args:
        word: The token (any object; ``str`` is applied).
        limit: Maximum length of the label (at least 2).

    Returns:
        The label; a 1,000-character token becomes ``limit`` characters, not a figure-wide
        text that collapses the axes.
    """
    text = str(word)
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


def _graphs(graphs: nx.DiGraph | Iterable[nx.DiGraph]) -> list[nx.DiGraph]:
    return [graphs] if isinstance(graphs, nx.Graph) else list(graphs)


def _is_mention(attrs: dict[str, Any]) -> bool:
    """Whether a token is part of a gold entity or of a predicted mention."""
    return attrs.get("gold_type", "O") != "O" or attrs.get("pred_type", "O") != "O"


def inspection_words(G: nx.DiGraph, k: int) -> list[str]:  # noqa: N803
    """The ``k`` repeated words (lowercased) of a document a person inspects first.

    Only words with an edge of which at least one occurrence is a gold entity or a predicted
    mention count (function words and punctuation repeat most, and tell nothing). They are
    ranked most inconsistent first: by the number of predicted types over their occurrences
    (``O`` included), then occurrences tagged against the gold type, then noisy edges (ends of
    different gold types), then occurrences; ties alphabetically.

    Args:
        G: An annotated graph (:func:`~docgraph.viz.to_networkx`, with predictions and/or
            gold tags).
        k: How many words at most.

    Returns:
        Up to ``k`` words; fewer (or none) when fewer repeated words are entities or mentions.
    """
    occurrences: dict[str, list[dict[str, Any]]] = {}
    for v in G:
        if G.degree(v):
            occurrences.setdefault(str(G.nodes[v]["word"]).lower(), []).append(G.nodes[v])
    noisy: dict[str, int] = {}
    for j, _, attrs in G.edges(data=True):
        if attrs.get("noisy"):
            word = str(G.nodes[j]["word"]).lower()
            noisy[word] = noisy.get(word, 0) + 1

    def rank(word: str) -> tuple:
        nodes = occurrences[word]
        predicted = {a["pred_type"] for a in nodes if "pred_type" in a}
        wrong = sum(a["pred_type"] != a["gold_type"] for a in nodes
                    if "pred_type" in a and "gold_type" in a)
        return -len(predicted), -wrong, -noisy.get(word, 0), -len(nodes), word

    chosen = [w for w, nodes in occurrences.items() if any(_is_mention(a) for a in nodes)]
    return sorted(chosen, key=rank)[: max(k, 0)]


def noisiest_words(G: nx.DiGraph, k: int) -> list[str]:  # noqa: N803
    """The ``k`` repeated words (lowercased) of a document whose edges are the noisiest
    (:func:`noisy_edges` order: the word of each edge's source, first seen first)."""
    words: list[str] = []
    for record in noisy_edges(G):
        word = str(record["source_word"]).lower()
        if word not in words:
            words.append(word)
        if len(words) == k:
            break
    return words


def repeated_words(G: nx.DiGraph) -> set[str]:  # noqa: N803
    """The words (lowercased) of a document graph that have at least one edge."""
    return {str(G.nodes[j]["word"]).lower() for j, _ in G.edges}


def noisy_edges(
    G_or_list: nx.DiGraph | Iterable[nx.DiGraph],  # noqa: N803
    k: int | None = None,
    o_edges: bool = False,
) -> list[dict[str, Any]]:
    """Edges ranked by how wrong the relation scores are.

    With scores the error of an edge is :math:`|r_{ij} - same\\_type|` (a high score on a pair
    of different gold types, or a low one on a same-type pair); without scores the noisy
    (different-type) edges come first with error 1, the others follow with error 0. Ties keep
    graph and edge order. Edges without gold types are skipped, and so, unless ``o_edges``,
    are edges between two tokens that are neither gold entities nor predicted mentions
    ("the" -> "the"): with the default ``relation_labels="entity"`` such an edge has no
    training target, so a low :math:`r_{ij}` on it is no error. Both directions of a pair are
    separate edges.

    Args:
        G_or_list: One graph from :func:`~docgraph.viz.to_networkx` or several.
        k: Keep the first ``k`` records (all when ``None``).
        o_edges: Rank the edges between two ``O`` tokens too.

    Returns:
        Records with ``doc_id``, ``source``/``target`` node ids, ``source_word``,
        ``source_sentence``, ``source_position``, ``source_type`` (and the same for ``target``),
        ``r_ij`` (``None`` without scores), ``same_type``, ``noisy``, ``pruned`` (source in
        *Drop*, ``None`` when unknown) and ``error``.
    """
    records: list[tuple[float, int, dict[str, Any]]] = []
    order = 0
    for G in _graphs(G_or_list):
        for j, i, attrs in G.edges(data=True):
            if "same_type" not in attrs:
                continue
            if not o_edges and not (_is_mention(G.nodes[j]) or _is_mention(G.nodes[i])):
                continue
            same = bool(attrs["same_type"])
            r = attrs.get("r_ij")
            error = abs(float(r) - float(same)) if r is not None else float(not same)
            record: dict[str, Any] = {"doc_id": G.graph.get("doc_id")}
            for role, v in (("source", j), ("target", i)):
                node = G.nodes[v]
                record[role] = v
                record[f"{role}_word"] = node["word"]
                record[f"{role}_sentence"] = node["sentence"]
                record[f"{role}_position"] = node["position"]
                record[f"{role}_type"] = node.get("gold_type")
            record.update(r_ij=None if r is None else float(r), same_type=same, noisy=not same,
                          pruned=attrs.get("pruned"), error=error)
            records.append((-error, order, record))
            order += 1
    records.sort(key=lambda item: (item[0], item[1]))
    ranked = [record for _, _, record in records]
    return ranked if k is None else ranked[: max(k, 0)]


def roc_auc(scores: Sequence[float] | np.ndarray, labels: Sequence[bool] | np.ndarray
            ) -> float | None:
    """Area under the ROC curve of ``scores`` for the positive ``labels`` (Mann-Whitney U).

    Ties get average ranks, so a tied positive/negative pair counts one half.

    Args:
        scores: Scores, higher = more likely positive.
        labels: Booleans (or 0/1), ``True`` = positive.

    Returns:
        The AUC in ``[0, 1]``, or ``None`` when one class is empty.
    """
    s = np.asarray(scores, dtype=float).reshape(-1)
    y = np.asarray(labels).astype(bool).reshape(-1)
    if s.shape != y.shape:
        raise ValueError(f"{s.size} scores for {y.size} labels")
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(s, kind="mergesort")
    sorted_s = s[order]
    ranks = np.empty(s.size, dtype=float)
    # average 1-based rank of every run of equal scores
    boundaries = np.flatnonzero(np.r_[True, sorted_s[1:] != sorted_s[:-1], True])
    for start, end in itertools.pairwise(boundaries):
        ranks[order[start:end]] = (start + 1 + end) / 2.0
    u = ranks[y].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def relation_scores(graphs: nx.DiGraph | Iterable[nx.DiGraph]
                    ) -> tuple[list[float], list[float]]:
    """The learnt :math:`r_{ij}` of the same-type edges and of the noisy (different-type)
    edges, in graph and edge order; edges without gold types or without a score are left out.

    Args:
        graphs: One graph from :func:`~docgraph.viz.to_networkx` or several.
    """
    same_r: list[float] = []
    noisy_r: list[float] = []
    for G in _graphs(graphs):
        for _, _, attrs in G.edges(data=True):
            if "same_type" in attrs and attrs.get("r_ij") is not None:
                (same_r if attrs["same_type"] else noisy_r).append(float(attrs["r_ij"]))
    return same_r, noisy_r


def edge_weight_stats(graphs: nx.DiGraph | Iterable[nx.DiGraph]) -> dict[str, Any]:
    """How well the learnt :math:`r_{ij}` separate same-type from different-type edges.

    Args:
        graphs: Graphs from :func:`~docgraph.viz.to_networkx` /
            :meth:`Tagger.inspect <docgraph.tagging.tagger.Tagger.inspect>` (with gold labels).

    Returns:
        ``edges`` (with gold types), ``same_type_edges``, ``noisy_edges``, ``noisy_share``,
        ``scored_edges``, ``mean_r_same``, ``mean_r_noisy``, ``auc`` (ROC AUC of :math:`r_{ij}`
        for "same type"; ``None`` when not computable), ``pruned_edges`` (edges whose source is
        in *Drop*), ``pruned_noisy_edges`` (of those, the noisy ones) and
        ``pruned_noisy_share``. Means are ``None`` for an empty group.
        :func:`docgraph.viz.edge_weight_report` adds their histogram.
    """
    graphs = _graphs(graphs)
    counts = dict.fromkeys(("edges", "same_type_edges", "noisy_edges", "scored_edges",
                            "pruned_edges", "pruned_noisy_edges"), 0)
    for G in graphs:
        for _, _, attrs in G.edges(data=True):
            if "same_type" not in attrs:
                continue
            same = bool(attrs["same_type"])
            counts["edges"] += 1
            counts["same_type_edges" if same else "noisy_edges"] += 1
            if attrs.get("pruned", False):
                counts["pruned_edges"] += 1
                counts["pruned_noisy_edges"] += int(not same)
            if attrs.get("r_ij") is not None:
                counts["scored_edges"] += 1
    same_r, noisy_r = relation_scores(graphs)

    def mean(values: list[float]) -> float | None:
        return float(np.mean(values)) if values else None

    return {
        **counts,
        "noisy_share": counts["noisy_edges"] / counts["edges"] if counts["edges"] else None,
        "mean_r_same": mean(same_r),
        "mean_r_noisy": mean(noisy_r),
        "auc": roc_auc(same_r + noisy_r, [True] * len(same_r) + [False] * len(noisy_r)),
        "pruned_noisy_share": (counts["pruned_noisy_edges"] / counts["pruned_edges"]
                               if counts["pruned_edges"] else None),
    }


def format_edge_table(records: Sequence[dict[str, Any]]) -> str:
    """A plain-text table of :func:`noisy_edges` records, one edge per line.

    Args:
        records: Records from :func:`noisy_edges`.

    Returns:
        The table (header line included), without a trailing newline.
    """
    header = ("rank", "doc", "source (sent:pos TYPE)", "target (sent:pos TYPE)", "r_ij", "same",
              "pruned", "error")
    rows = [header]
    for rank, rec in enumerate(records, start=1):
        def token(role: str, rec: dict[str, Any] = rec) -> str:
            return (f"{short_label(rec[f'{role}_word'], 40)} ({rec[f'{role}_sentence']}:"
                    f"{rec[f'{role}_position']} {rec[f'{role}_type']})")

        r = rec.get("r_ij")
        pruned = rec.get("pruned")
        rows.append((str(rank), str(rec.get("doc_id")), token("source"), token("target"),
                     "-" if r is None else f"{r:.3f}", "yes" if rec["same_type"] else "no",
                     "-" if pruned is None else ("yes" if pruned else "no"),
                     f"{rec['error']:.3f}"))
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
                     for row in rows)
