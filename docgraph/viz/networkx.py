"""Document graphs as annotated :class:`networkx.DiGraph` objects, with what a model computed
on them.

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

The model's values come from a tagging pass (:meth:`docgraph.tagging.tagger.Tagger.inspect`
runs one and builds the graphs), so a document's tags, uncertainty and pruning are those of
tagging at the same seed. The graphs are what :mod:`docgraph.viz.draw` draws,
:mod:`docgraph.viz.edges` measures and :mod:`docgraph.viz.html` shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx
from torch import Tensor

from docgraph.data.document import Document
from docgraph.data.tags import bioes_to_iob2, entity_type
from docgraph.data.vocab import Vocabularies
from docgraph.graph import DocumentGraph

__all__ = ["to_networkx"]


def _sentence_tags(bioes: Sequence[str], sent_len: Sequence[int]) -> list[str]:
    """IOB2 tags of a flat BIOES sequence, converted sentence by sentence."""
    out: list[str] = []
    offset = 0
    for length in sent_len:
        out += bioes_to_iob2(list(bioes[offset:offset + length]))
        offset += length
    return out


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
    *,
    uncertainty: Tensor | Sequence[float] | None = None,
    drop: Tensor | Sequence[bool] | None = None,
    edge_weight: Tensor | Sequence[float] | None = None,
    predicted: Tensor | Sequence[int] | None = None,
) -> nx.DiGraph:
    """Convert a document graph to an annotated :class:`networkx.DiGraph`.

    Words and gold tags come from ``document`` when given (its IOB2 tags), otherwise from the
    graph's ids through ``vocabs`` (words missing from the vocabulary show as ``<unk>``; gold
    tags only when ``graph.has_labels``). The keyword arguments add what a model computed: the
    predictions, :math:`u_i`, *Drop* and :math:`r_{ij}` (from a tagging pass, as
    :meth:`docgraph.tagging.tagger.Tagger.inspect` gives them, or hand-made scores).

    Args:
        graph: The graph of one document (or chunk).
        document: The matching document (same tokens, in order).
        vocabs: The vocabularies (needed without ``document``, and to name predicted labels).
        uncertainty: ``[N]`` uncertainty :math:`u_i`.
        drop: ``[N]`` booleans, token in *Drop*.
        edge_weight: ``[E]`` relation scores :math:`r_{ij}`, aligned with ``graph.edge_index``.
        predicted: ``[N]`` predicted BIOES label ids (needs ``vocabs``).

    Returns:
        The annotated graph (see the module docstring for the attributes).

    Raises:
        ValueError: Without ``document`` and ``vocabs``, when the document does not match the
            graph, when the given scores have the wrong length, or for predictions (given or
            from ``model``) without ``vocabs``.
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
