"""Figures of annotated document graphs (matplotlib): the graph of a document or of some of
its words, as the paper's Figure 3, and the histogram of the learnt :math:`r_{ij}`.

The graphs are those of :func:`docgraph.viz.to_networkx` (:mod:`docgraph.viz.networkx`). The
paper's Figure 3 (the neighbours of "Lombardi", some of another type) is
``draw_document_graph(G, word="Lombardi")``; :func:`docgraph.viz.inspection_words` picks the
words worth such a drawing. :func:`edge_weight_report` is :func:`docgraph.viz.edge_weight_stats`
with the histogram of the scores it measures.

Figures are built on :class:`matplotlib.figure.Figure` (Agg canvas), never through
``pyplot``, so nothing global is touched and no window is opened; they are saved atomically.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from docgraph.runtime.atomic import atomic_write
from docgraph.viz.edges import edge_weight_stats, relation_scores, short_label
from docgraph.viz.html import entity_colour

__all__ = ["draw_document_graph", "edge_weight_report", "save_figure"]

_FORMATS = {".png": "png", ".svg": "svg"}
_NOISY_COLOUR = "#d62728"
_O_COLOUR = "#b0b0b0"


def _type_colours(types: Iterable[str]) -> dict[str, str]:
    """Fill colour of each type: the HTML view's (:func:`~docgraph.viz.html.entity_colour`,
    the same in every figure and page), grey for ``O``."""
    colours = {t: entity_colour(t) for t in set(types) - {"O"}}
    colours["O"] = _O_COLOUR
    return colours


def _node_type(attrs: dict[str, Any]) -> str:
    return attrs.get("gold_type", attrs.get("pred_type", "O"))


def _layout(graph: nx.DiGraph, nodes: list[int], layout: str) -> dict[int, tuple[float, float]]:
    G = graph
    if layout == "sentence":
        return {v: (float(G.nodes[v]["position"]), -float(G.nodes[v]["sentence"])) for v in nodes}
    if layout == "word":
        groups: dict[str, list[int]] = {}
        for v in nodes:
            groups.setdefault(str(G.nodes[v]["word"]).lower(), []).append(v)
        ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return {v: (float(col), -float(row))
                for col, (_, members) in enumerate(ordered) for row, v in enumerate(members)}
    raise ValueError(f"layout must be 'sentence' or 'word', got {layout!r}")


def save_figure(fig: Figure, path: str | Path, dpi: float | None = None) -> Path:
    """Save a figure atomically (temporary file + :func:`os.replace`), format by suffix.

    Args:
        fig: The figure.
        path: Target ``.png`` or ``.svg`` file; missing parent directories are created.
        dpi: Resolution (the figure's own when ``None``).

    Returns:
        The path written.

    Raises:
        ValueError: For another suffix.
    """
    path = Path(path)
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"{path}: unsupported figure format (use .png or .svg)")
    atomic_write(
        path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=dpi if dpi is not None else fig.dpi)
    )
    return path


def draw_document_graph(
    G: nx.DiGraph,  # noqa: N803
    path: str | Path | None = None,
    word: str | Sequence[str] | None = None,
    ax: Axes | None = None,
    *,
    layout: str = "sentence",
    figsize: tuple[float, float] | None = None,
    dpi: float = 100,
    labels: bool | None = None,
    isolated: bool | None = None,
    title: str | None = None,
) -> Figure:
    """Draw one document graph (or only the edges of one word, as the paper's Figure 3).

    Nodes are tokens at ``x = position``, ``y = -sentence`` (``layout="sentence"``) or in one
    column per lowercased word (``layout="word"``), filled with the colour of their gold type
    (predicted type without gold labels, grey for ``O``); tokens in *Drop* are hollow. Edges are
    arcs whose width and colour follow :math:`r_{ij}` (with a colour bar; plain grey without
    scores); noisy edges (different gold types) are dashed red. A legend names the types.

    Args:
        G: A graph from :func:`~docgraph.viz.to_networkx`.
        path: Optional ``.png`` or ``.svg`` file, written atomically.
        word: Only the tokens of this word, or of these words (case-insensitive), and the
            edges between them.
        ax: Axes to draw on (its figure is returned); a new figure when ``None``.
        layout: ``"sentence"`` or ``"word"``.
        figsize: Size in inches of a new figure (chosen from the graph when ``None``).
        dpi: Resolution of a new figure and of the saved file.
        labels: Write the words next to the nodes (default: all of them when at most 150 nodes
            are shown, else only the entity tokens).
        isolated: Show tokens without edges (default: only for a whole document of at most
            400 tokens).
        title: Axes title (document id and counts when ``None``).

    Returns:
        The figure.

    Raises:
        ValueError: When ``word`` does not occur in the document, or for a bad layout or suffix.
    """
    if word is not None:
        keys = {word.lower()} if isinstance(word, str) else {w.lower() for w in word}
        nodes = [v for v, w in G.nodes(data="word") if str(w).lower() in keys]
        if not nodes:
            raise ValueError(f"word {word!r} does not occur in document {G.graph.get('doc_id')!r}")
        keep = set(nodes)
        edges = [(j, i) for j, i in G.edges if j in keep and i in keep]
    else:
        edges = list(G.edges)
        show_isolated = isolated if isolated is not None else G.number_of_nodes() <= 400
        linked = {v for e in edges for v in e}
        nodes = [v for v in G.nodes if show_isolated or v in linked]
    pos = _layout(G, nodes, layout)

    if ax is None:
        if figsize is None:
            xs = [p[0] for p in pos.values()] or [0.0]
            ys = [p[1] for p in pos.values()] or [0.0]
            width = min(max(6.0, 0.35 * (max(xs) - min(xs) + 1) + 3.0), 24.0)
            height = min(max(4.0, 0.4 * (max(ys) - min(ys) + 1) + 2.0), 24.0)
            figsize = (width, height)
        fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
    else:
        fig = ax.figure  # type: ignore[assignment]

    colours = _type_colours(_node_type(a) for _, a in G.nodes(data=True))
    has_scores = any("r_ij" in G.edges[e] for e in edges)
    cmap = colormaps["viridis"]
    norm = Normalize(0.0, 1.0)

    # edges: arcs so that edges along one sentence do not overlap
    for j, i in edges:
        attrs = G.edges[j, i]
        r = attrs.get("r_ij")
        noisy = bool(attrs.get("noisy", False))
        width = 0.4 + 1.8 * r if r is not None else 1.0
        colour = _NOISY_COLOUR if noisy else (cmap(norm(r)) if r is not None else "#777777")
        (x0, y0), (x1, y1) = pos[j], pos[i]
        ax.annotate(
            "", xy=(x1, y1), xytext=(x0, y0),
            arrowprops={
                "arrowstyle": "-|>", "color": colour, "lw": width, "alpha": 0.9 if noisy else 0.6,
                "linestyle": "--" if noisy else "-", "shrinkA": 6, "shrinkB": 6,
                "mutation_scale": 8, "connectionstyle": "arc3,rad=0.25",
            },
            zorder=1,
        )

    # nodes
    for kind_pruned in (False, True):
        members = [v for v in nodes if bool(G.nodes[v].get("pruned", False)) == kind_pruned]
        if not members:
            continue
        xy = np.array([pos[v] for v in members], dtype=float)
        node_colours = [colours[_node_type(G.nodes[v])] for v in members]
        sizes = [60.0 if G.degree(v) else 25.0 for v in members]
        ax.scatter(xy[:, 0], xy[:, 1], s=sizes,
                   c="white" if kind_pruned else node_colours,
                   edgecolors=node_colours if kind_pruned else "black",
                   linewidths=1.8 if kind_pruned else 0.5, zorder=2)

    if labels is None:
        labelled = nodes if len(nodes) <= 150 else [
            v for v in nodes if _node_type(G.nodes[v]) != "O"]
    else:
        labelled = nodes if labels else []
    if labelled:
        for v in labelled:
            x, y = pos[v]
            ax.text(x, y + 0.18, short_label(G.nodes[v]["word"]), fontsize=7, ha="center",
                    va="bottom", rotation=30 if layout == "sentence" and word is None else 0,
                    zorder=3)

    # axes
    if pos:
        xs = [p[0] for p in pos.values()]
        ys = [p[1] for p in pos.values()]
        ax.set_xlim(min(xs) - 1.0, max(xs) + 1.0)
        ax.set_ylim(min(ys) - 0.8, max(ys) + 1.0)
    if layout == "sentence":
        ax.set_xlabel("position in sentence")
        ax.set_ylabel("sentence")
        sentences = sorted({int(-p[1]) for p in pos.values()})
        step = max(1, len(sentences) // 25)
        ax.set_yticks([-s for s in sentences[::step]], [str(s) for s in sentences[::step]])
    else:
        ax.set_xticks([])
        ax.set_yticks([])
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if title is None:
        doc = G.graph.get("doc_id")
        what = f"word {word!r}" if word is not None else "document"
        noisy_count = sum(bool(G.edges[e].get("noisy", False)) for e in edges)
        title = f"{doc} -- {what}: {len(nodes)} tokens, {len(edges)} edges ({noisy_count} noisy)"
    ax.set_title(title, fontsize=9)

    # legend
    shown_types = sorted({_node_type(G.nodes[v]) for v in nodes}, key=lambda t: (t == "O", t))
    handles: list[Line2D] = [
        Line2D([], [], marker="o", linestyle="", markerfacecolor=colours[t],
               markeredgecolor="black", markersize=7, label=t)
        for t in shown_types
    ]
    if any(G.nodes[v].get("pruned", False) for v in nodes):
        handles.append(Line2D([], [], marker="o", linestyle="", markerfacecolor="white",
                              markeredgecolor="black", markersize=7, label="pruned (Drop)"))
    if any(G.edges[e].get("noisy", False) for e in edges):
        handles.append(Line2D([], [], color=_NOISY_COLOUR, linestyle="--",
                              label="noisy edge (different types)"))
    if any(G.edges[e].get("same_type", False) for e in edges) or not has_scores:
        handles.append(Line2D([], [], color=cmap(0.8) if has_scores else "#777777",
                              label="same-type edge (colour: $r_{ij}$)" if has_scores
                              else "edge"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.1), fontsize=7,
              frameon=False,
              ncol=max(1, min(len(handles), int(fig.get_figwidth() / 1.9))))
    if has_scores:
        mappable = ScalarMappable(norm=norm, cmap=cmap)
        fig.colorbar(mappable, ax=ax, label="$r_{ij}$ (edge width too)", shrink=0.7, pad=0.02)

    if path is not None:
        save_figure(fig, path, dpi=dpi)
    return fig


def edge_weight_report(
    graphs: nx.DiGraph | Iterable[nx.DiGraph],
    path: str | Path | None = None,
    bins: int = 20,
) -> dict[str, Any]:
    """How well the learnt :math:`r_{ij}` separate same-type from different-type edges, with
    their histogram.

    Args:
        graphs: Graphs from :func:`~docgraph.viz.to_networkx` /
            :meth:`Tagger.inspect <docgraph.tagging.tagger.Tagger.inspect>` (with gold labels).
        path: Optional ``.png``/``.svg`` histogram of :math:`r_{ij}` per group, written atomically.
        bins: Histogram bins over ``[0, 1]``.

    Returns:
        The figures of :func:`~docgraph.viz.edge_weight_stats` (counts, means, ``auc``, pruned
        edges) and ``path`` (the figure, or ``None``).
    """
    graphs = [graphs] if isinstance(graphs, nx.Graph) else list(graphs)
    report: dict[str, Any] = {**edge_weight_stats(graphs), "path": None}
    if path is not None:
        same_r, noisy_r = relation_scores(graphs)
        fig = Figure(figsize=(6.0, 3.6), dpi=100, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        edges_ = np.linspace(0.0, 1.0, bins + 1)
        if same_r:
            ax.hist(same_r, bins=edges_, alpha=0.6, color="#1f77b4",
                    label=f"same type (n={len(same_r)})")
        if noisy_r:
            ax.hist(noisy_r, bins=edges_, alpha=0.6, color=_NOISY_COLOUR,
                    label=f"different type (n={len(noisy_r)})")
        auc = report["auc"]
        ax.set_title("relation scores $r_{ij}$" + (f" -- AUC {auc:.3f}" if auc is not None
                                                   else ""), fontsize=10)
        ax.set_xlabel("$r_{ij}$")
        ax.set_ylabel("edges")
        ax.set_xlim(0.0, 1.0)
        if same_r or noisy_r:
            ax.legend(fontsize=8)
        report["path"] = str(save_figure(fig, path))
    return report
