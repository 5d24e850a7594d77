"""Inspecting document graphs and what GCDoc learns on them (networkx + matplotlib).

A :class:`~docgraph.graph.DocumentGraph` becomes a :class:`networkx.DiGraph` with one node per
token (node id = token index in the document) and one edge ``j -> i`` per recurrence edge
(``edge_index[0]`` = source ``j``, ``edge_index[1]`` = target ``i``), annotated with:

* **nodes** -- ``word``, ``sentence``, ``position``; ``gold_tag`` (IOB2) and ``gold_type`` when
  gold labels are known; ``pred_tag``/``pred_type``, ``uncertainty`` (:math:`u_i`) and
  ``pruned`` (token in *Drop*) when a model was run.
* **edges** -- ``same_type`` and ``noisy`` (endpoints of different gold types, ``O`` being a
  type as in the auxiliary classifier) when gold labels are known; ``r_ij`` (relation score)
  when the model has edge weights; ``pruned`` (source in *Drop*) when the model prunes.

An attribute that cannot be known is absent. Graph attributes: ``doc_id``, ``num_sentences``.

The paper's Figure 3 (the neighbours of "Lombardi", some of another type) is
``draw_document_graph(G, word="Lombardi")``; :func:`inspection_words` picks the words worth
such a drawing (entities and predicted mentions, the most inconsistently tagged first);
:func:`noisy_edges` and :func:`edge_weight_report` measure how well the learnt :math:`r_{ij}`
separate such noisy edges from the useful ones.

Figures are built on :class:`matplotlib.figure.Figure` (Agg canvas), never through
``pyplot``, so nothing global is touched and no window is opened.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import torch
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from torch import Tensor
from torch_geometric.data import Batch

from docgraph.data.document import Document
from docgraph.data.tags import bioes_to_iob2, entity_type
from docgraph.data.vocab import Vocabularies
from docgraph.graph import DocumentGraph, TokenBudgetBatchSampler
from docgraph.persistence.atomic import atomic_write
from docgraph.viz.html import entity_colour

__all__ = [
    "draw_document_graph",
    "edge_weight_report",
    "format_edge_table",
    "inspect_documents",
    "inspection_words",
    "noisy_edges",
    "roc_auc",
    "save_figure",
    "short_label",
    "to_networkx",
]

_FORMATS = {".png": "png", ".svg": "svg"}
_NOISY_COLOUR = "#d62728"
_O_COLOUR = "#b0b0b0"


# ---------------------------------------------------------------------------- graphs
def _sentence_tags(bioes: Sequence[str], sent_len: Sequence[int]) -> list[str]:
    """IOB2 tags of a flat BIOES sequence, converted sentence by sentence."""
    out: list[str] = []
    offset = 0
    for length in sent_len:
        out += bioes_to_iob2(list(bioes[offset:offset + length]))
        offset += length
    return out


def _model_outputs(model: Any, batch: Batch, mc_seed: int | None = 0
                   ) -> dict[str, Tensor | None]:
    """One eval-mode forward pass: uncertainty, Drop, edge weights and Viterbi label ids."""
    out = model.inspect(batch, mc_seed=mc_seed)
    return {
        "uncertainty": out.uncertainty,
        "drop": out.drop,
        "edge_weight": out.edge_weight,
        "predicted": model.crf.decode(out.emissions, batch.sent_len),
    }


def _model_device(model: Any) -> torch.device:
    try:
        return next(model.parameters()).device
    except StopIteration:
        return torch.device("cpu")


def _as_list(values: Tensor | Sequence | None) -> list | None:
    if values is None:
        return None
    if isinstance(values, Tensor):
        return values.detach().cpu().tolist()
    return list(values)


def to_networkx(
    graph: DocumentGraph,
    document: Document | None = None,
    vocabs: Vocabularies | None = None,
    model: Any = None,
    *,
    uncertainty: Tensor | Sequence[float] | None = None,
    drop: Tensor | Sequence[bool] | None = None,
    edge_weight: Tensor | Sequence[float] | None = None,
    predicted: Tensor | Sequence[int] | None = None,
) -> nx.DiGraph:
    """Convert a document graph to an annotated :class:`networkx.DiGraph`.

    Words and gold tags come from ``document`` when given (its IOB2 tags), otherwise from the
    graph's ids through ``vocabs`` (words missing from the vocabulary show as ``<unk>``; gold
    tags only when ``graph.has_labels``). With ``model`` (a :class:`~docgraph.model.GCDoc`) one
    eval-mode forward pass adds the predictions, :math:`u_i`, *Drop* and :math:`r_{ij}`; the
    keyword arguments give such values directly instead (e.g. from a batched run, see
    :func:`inspect_documents`, or hand-made scores) and take precedence over the model's.

    Args:
        graph: The graph of one document (or chunk).
        document: The matching document (same tokens, in order).
        vocabs: The vocabularies (needed without ``document``, and to name predicted labels).
        model: Optional trained model.
        uncertainty: ``[N]`` uncertainty :math:`u_i`.
        drop: ``[N]`` booleans, token in *Drop*.
        edge_weight: ``[E]`` relation scores :math:`r_{ij}`, aligned with ``graph.edge_index``.
        predicted: ``[N]`` predicted BIOES label ids (needs ``vocabs``).

    Returns:
        The annotated graph (see the module docstring for the attributes).

    Raises:
        ValueError: Without ``document`` and ``vocabs``, when the document does not match the
            graph, or when the given scores have the wrong length.
    """
    n = int(graph.num_nodes)
    edge_index = graph.edge_index.detach().cpu()
    num_edges = int(edge_index.size(1))
    sent_len = graph.sent_len.tolist()
    if document is not None:
        if document.num_tokens != n:
            raise ValueError(
                f"document {document.doc_id!r} has {document.num_tokens} tokens, "
                f"the graph {n} nodes"
            )
        words = document.tokens
        tags = list(document.tags)
        if tags and all(t in ("", "_") for t in tags):
            gold: list[str] | None = None
        else:
            gold = tags
    elif vocabs is not None:
        words = vocabs.words.lookup(graph.word.tolist())
        gold = None
        if bool(getattr(graph, "has_labels", True)):
            gold = _sentence_tags(vocabs.labels.lookup(graph.y.tolist()), sent_len)
    else:
        raise ValueError("to_networkx needs the document or the vocabularies for the words")

    if model is not None and any(v is None for v in (uncertainty, drop, edge_weight, predicted)):
        batch = Batch.from_data_list([graph]).to(_model_device(model))
        outputs = _model_outputs(model, batch)
        uncertainty = outputs["uncertainty"] if uncertainty is None else uncertainty
        drop = outputs["drop"] if drop is None else drop
        edge_weight = outputs["edge_weight"] if edge_weight is None else edge_weight
        predicted = outputs["predicted"] if predicted is None else predicted

    u_list, drop_list = _as_list(uncertainty), _as_list(drop)
    r_list, pred_ids = _as_list(edge_weight), _as_list(predicted)
    for name, values, size in (("uncertainty", u_list, n), ("drop", drop_list, n),
                               ("predicted", pred_ids, n), ("edge_weight", r_list, num_edges)):
        if values is not None and len(values) != size:
            raise ValueError(f"{name} has {len(values)} values, expected {size}")
    pred: list[str] | None = None
    if pred_ids is not None:
        if vocabs is None:
            raise ValueError("predicted label ids need the vocabularies to be named")
        pred = _sentence_tags(vocabs.labels.lookup([int(i) for i in pred_ids]), sent_len)

    G = nx.DiGraph(doc_id=getattr(graph, "doc_id", None), num_sentences=len(sent_len))
    sentence = graph.token_sentence.tolist()
    position = graph.token_position.tolist()
    first_sentence = sentence[0] if sentence else 0  # a graph taken out of a batch is offset
    for i in range(n):
        attrs: dict[str, Any] = {
            "word": words[i],
            "sentence": sentence[i] - first_sentence,
            "position": position[i],
        }
        if gold is not None:
            attrs["gold_tag"] = gold[i]
            attrs["gold_type"] = entity_type(gold[i])
        if pred is not None:
            attrs["pred_tag"] = pred[i]
            attrs["pred_type"] = entity_type(pred[i])
        if u_list is not None:
            attrs["uncertainty"] = float(u_list[i])
        if drop_list is not None:
            attrs["pruned"] = bool(drop_list[i])
        G.add_node(i, **attrs)
    for e, (j, i) in enumerate(edge_index.t().tolist()):
        attrs = {}
        if gold is not None:
            same = G.nodes[j]["gold_type"] == G.nodes[i]["gold_type"]
            attrs["same_type"] = same
            attrs["noisy"] = not same
        if r_list is not None:
            attrs["r_ij"] = float(r_list[e])
        if drop_list is not None:
            attrs["pruned"] = bool(drop_list[j])
        G.add_edge(j, i, **attrs)
    return G


@torch.no_grad()
def inspect_documents(
    model: Any,
    graphs: Sequence[DocumentGraph],
    documents: Sequence[Document | None] | None,
    vocabs: Vocabularies,
    batch_tokens: int = 8000,
    mc_seed: int | None = 0,
) -> list[nx.DiGraph]:
    """Run the model once per batch and build the annotated graph of every document.

    Args:
        model: A trained :class:`~docgraph.model.GCDoc`.
        graphs: The document graphs (e.g. ``prepare_split(...).graphs``).
        documents: The index-aligned documents (for the original words and IOB2 gold tags), or
            ``None`` to read them from the graphs through ``vocabs``.
        vocabs: The model's vocabularies.
        batch_tokens: Token budget per batch.
        mc_seed: The tagging seed of the Monte-Carlo dropout masks
            (:meth:`~docgraph.model.GCDoc.inspect`): a document's uncertainty, pruning and
            tags are those of :meth:`~docgraph.model.GCDoc.predict` at the same seed, in any
            batch.

    Returns:
        One :class:`networkx.DiGraph` per graph, in order (see :func:`to_networkx`).

    Raises:
        ValueError: When ``documents`` and ``graphs`` differ in length.
    """
    if documents is not None and len(documents) != len(graphs):
        raise ValueError(f"{len(documents)} documents for {len(graphs)} graphs")
    device = _model_device(model)
    sampler = TokenBudgetBatchSampler([int(g.num_nodes) for g in graphs], batch_tokens,
                                      shuffle=False)
    result: list[nx.DiGraph | None] = [None] * len(graphs)
    for indices in sampler:
        batch = Batch.from_data_list([graphs[i] for i in indices]).to(device)
        outputs = _model_outputs(model, batch, mc_seed)
        node_start = edge_start = 0
        for i in indices:
            n, m = int(graphs[i].num_nodes), int(graphs[i].edge_index.size(1))
            node_slice, edge_slice = slice(node_start, node_start + n), slice(edge_start,
                                                                              edge_start + m)
            sliced = {
                key: (None if value is None
                      else value[edge_slice] if key == "edge_weight" else value[node_slice])
                for key, value in outputs.items()
            }
            result[i] = to_networkx(graphs[i], documents[i] if documents is not None else None,
                                    vocabs, **sliced)
            node_start += n
            edge_start += m
    return result  # type: ignore[return-value]


# ---------------------------------------------------------------------------- drawing
def _type_colours(types: Iterable[str]) -> dict[str, str]:
    """Fill colour of each type: the HTML view's (:func:`~docgraph.viz.html.entity_colour`,
    the same in every figure and page), grey for ``O``."""
    colours = {t: entity_colour(t) for t in set(types) - {"O"}}
    colours["O"] = _O_COLOUR
    return colours


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
        G: A graph from :func:`to_networkx`.
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


# ---------------------------------------------------------------------------- analysis
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
        G: An annotated graph (:func:`to_networkx`, with predictions and/or gold tags).
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
        G_or_list: One graph from :func:`to_networkx` or several.
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


def edge_weight_report(
    graphs: nx.DiGraph | Iterable[nx.DiGraph],
    path: str | Path | None = None,
    bins: int = 20,
) -> dict[str, Any]:
    """How well the learnt :math:`r_{ij}` separate same-type from different-type edges.

    Args:
        graphs: Graphs from :func:`to_networkx` / :func:`inspect_documents` (with gold labels).
        path: Optional ``.png``/``.svg`` histogram of :math:`r_{ij}` per group, written atomically.
        bins: Histogram bins over ``[0, 1]``.

    Returns:
        ``edges`` (with gold types), ``same_type_edges``, ``noisy_edges``, ``noisy_share``,
        ``scored_edges``, ``mean_r_same``, ``mean_r_noisy``, ``auc`` (ROC AUC of :math:`r_{ij}`
        for "same type"; ``None`` when not computable), ``pruned_edges`` (edges whose source is
        in *Drop*), ``pruned_noisy_edges`` (of those, the noisy ones), ``pruned_noisy_share``
        and ``path`` (the figure, or ``None``). Means are ``None`` for an empty group.
    """
    same_r: list[float] = []
    noisy_r: list[float] = []
    counts = dict.fromkeys(("edges", "same_type_edges", "noisy_edges", "scored_edges",
                            "pruned_edges", "pruned_noisy_edges"), 0)
    for G in _graphs(graphs):
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
                (same_r if same else noisy_r).append(float(attrs["r_ij"]))

    def mean(values: list[float]) -> float | None:
        return float(np.mean(values)) if values else None

    report: dict[str, Any] = {
        **counts,
        "noisy_share": counts["noisy_edges"] / counts["edges"] if counts["edges"] else None,
        "mean_r_same": mean(same_r),
        "mean_r_noisy": mean(noisy_r),
        "auc": roc_auc(same_r + noisy_r, [True] * len(same_r) + [False] * len(noisy_r)),
        "pruned_noisy_share": (counts["pruned_noisy_edges"] / counts["pruned_edges"]
                               if counts["pruned_edges"] else None),
        "path": None,
    }
    if path is not None:
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
