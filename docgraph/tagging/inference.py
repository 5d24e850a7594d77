"""Tagging and scoring with a trained model: predictions per graph, in one process or
sharded over a training run's process group.

:func:`predict_graphs` (the tags) and :func:`inspect_graphs` (the tags with the uncertainty,
pruning and edge weights of the same pass) share the one tagging loop: the token-budget
batches, the tagging seed and the progress. The tagging pipeline of a trained model, with its
one pool of processes, is built on them (:mod:`docgraph.tagging.pipeline`).
:class:`Evaluation` holds the scores of labelled documents.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor
from torch_geometric.data import Batch

from docgraph.batching.loader import iterate_batches, pack_greedily
from docgraph.config.tagging import DEFAULT_BATCH_TOKENS
from docgraph.data.document import Document
from docgraph.data.tags import bioes_to_iob2, spans
from docgraph.data.vocab import Vocabularies
from docgraph.graph import DocumentGraph
from docgraph.graph.splits import PreparedSplit
from docgraph.metrics import DocumentConsistency, Scores, document_consistency, score
from docgraph.model import GCDoc, GCDocOutput, unwrap
from docgraph.runtime.processes import world_and_rank
from docgraph.runtime.progress import Progress
from docgraph.tagging.result import Tagging


@dataclass(frozen=True)
class GraphInspection:
    """What one tagging pass computed for one graph (:func:`inspect_graphs`).

    Attributes:
        label_ids: ``[N]`` Viterbi BIOES label ids, one per token.
        tags: The same as IOB2 tags, per sentence (what :func:`predict_graphs` returns).
        uncertainty: ``[N]`` Monte-Carlo uncertainty :math:`u_i`; ``None`` when the model does
            not prune.
        drop: ``[N]`` whether each token is in *Drop* (sends no message); ``None`` when the
            model does not prune.
        edge_weight: ``[E]`` relation scores :math:`r_{ij}`, aligned with the graph's
            ``edge_index``; ``None`` for a model without edge weights.
        scores: The score of each entity of ``tags``, per sentence (:class:`Tagging`).
    """

    label_ids: list[int]
    tags: list[list[str]]
    uncertainty: list[float] | None
    drop: list[bool] | None
    edge_weight: list[float] | None
    scores: list[list[float]] | None = None


def _tagging_batches(model: GCDoc, graphs: Sequence[DocumentGraph], batch_tokens: int,
                     device: torch.device, seed: int | None, progress: str | None
                     ) -> Iterator[tuple[list[int], Batch]]:
    """The one tagging loop: ``(indices, batch)`` for batches of at most ``batch_tokens``
    tokens, in order, each carrying ``model``'s host-side plan.

    The batches are consumed with torch's random streams seeded by ``seed`` and restored
    afterwards: the Monte-Carlo masks come from per-document generators; the fork also keeps
    anything else random in a model from moving the caller's (training) random stream.
    ``seed=None`` leaves the streams as the caller left them. ``progress`` names the progress
    of the tagged tokens (``None``: none shown).
    """
    if batch_tokens < 1:
        raise ValueError(f"batch_tokens must be >= 1, got {batch_tokens}")
    lengths = [int(g.num_nodes) for g in graphs]
    in_order = pack_greedily(lengths, range(len(lengths)), batch_tokens)
    cuda = device.type == "cuda"
    index = (device.index if device.index is not None else torch.cuda.current_device()
             ) if cuda else None
    fork = (contextlib.nullcontext() if seed is None
            else torch.random.fork_rng(devices=[index] if cuda else []))
    with fork:
        if seed is not None:
            torch.default_generator.manual_seed(seed)
            if cuda:
                with torch.cuda.device(index):
                    torch.cuda.manual_seed(seed)
        batches = iterate_batches(graphs, in_order, device, model.plan_settings())
        if progress is None:
            yield from batches
            return
        with Progress(progress, total=sum(int(g.num_nodes) for g in graphs),
                      unit="token") as bar:
            for indices, batch in batches:
                yield indices, batch
                bar.update(int(batch.num_nodes))


def _label_names(vocabs: Vocabularies) -> list[str]:
    """The BIOES label of every label id."""
    return vocabs.labels.lookup(list(range(len(vocabs.labels))))


@torch.no_grad()
def predict_graphs(model: GCDoc, graphs: Sequence[DocumentGraph], vocabs: Vocabularies,
                   batch_tokens: int = DEFAULT_BATCH_TOKENS, device: torch.device | str = "cpu",
                   seed: int | None = 0, progress: str | None = None
                   ) -> list[list[list[str]]]:
    """IOB2 predictions per graph, per sentence, per token.

    A graph's tags depend on the graph and ``seed`` only (its Monte-Carlo masks are keyed by
    both, :meth:`GCDoc.predict <docgraph.model.GCDoc.predict>`), not on ``batch_tokens`` or on
    the other graphs of the list. ``seed=None`` draws the masks from torch's global random
    stream as the caller left it instead (how docgraph tagged before per-document masks; the
    tags then depend on the batches).

    ``progress`` (e.g. ``"tagging dev"``) shows the tagged tokens under that name
    (:class:`~docgraph.runtime.progress.Progress`); ``None`` shows nothing.
    """
    return [t.tags for t in tag_graphs(model, graphs, vocabs, batch_tokens, device, seed,
                                       progress)]


@torch.no_grad()
def tag_graphs(model: GCDoc, graphs: Sequence[DocumentGraph], vocabs: Vocabularies,
               batch_tokens: int = DEFAULT_BATCH_TOKENS, device: torch.device | str = "cpu",
               seed: int | None = 0, progress: str | None = None, scores: bool = False
               ) -> list[Tagging]:
    """The :class:`Tagging` of every graph: the tags of :func:`predict_graphs` and, with
    ``scores``, the probability of each entity (:func:`entity_scores`) from the same pass (the
    one pass of :func:`_inspected_batches`, whatever is asked of it)."""
    model = unwrap(model)
    labels = _label_names(vocabs)
    out: list[Tagging | None] = [None] * len(graphs)
    for indices, batch, result, pred in _inspected_batches(model, graphs, batch_tokens, device,
                                                           seed, progress):
        found = _batch_taggings(model, batch, result.emissions if scores else None, pred,
                                [graphs[i].sent_len.tolist() for i in indices], labels)
        for i, tagging in zip(indices, found):
            out[i] = tagging
    return out  # type: ignore[return-value]


def _inspected_batches(model: GCDoc, graphs: Sequence[DocumentGraph], batch_tokens: int,
                       device: torch.device | str, seed: int | None, progress: str | None
                       ) -> Iterator[tuple[list[int], Batch, GCDocOutput, list[int]]]:
    """``(indices, batch, model.inspect's output, Viterbi label ids)`` of every batch of the
    tagging loop: the one eval-mode pass whose emissions give the tags and the scores."""
    for indices, batch in _tagging_batches(model, graphs, batch_tokens, torch.device(device),
                                           seed, progress):
        result = model.inspect(batch, mc_seed=seed)
        pred = model.crf.decode(result.emissions, batch.sent_len, batch.plan.sentences).tolist()
        yield indices, batch, result, pred


@torch.no_grad()
def score_graphs(model: GCDoc, graphs: Sequence[DocumentGraph], vocabs: Vocabularies,
                 temperatures: Sequence[float], batch_tokens: int = DEFAULT_BATCH_TOKENS,
                 device: torch.device | str = "cpu", seed: int | None = 0
                 ) -> list[list[Tagging]]:
    """The taggings of :func:`tag_graphs` with scores at each of ``temperatures`` (one list
    per temperature), from one pass of the network per batch: what a temperature is fitted
    on."""
    model = unwrap(model)
    labels = _label_names(vocabs)
    out: list[list[Tagging | None]] = [[None] * len(graphs) for _ in temperatures]
    for indices, batch, result, pred in _inspected_batches(model, graphs, batch_tokens, device,
                                                           seed, None):
        sent_lens = [graphs[i].sent_len.tolist() for i in indices]
        for k, temperature in enumerate(temperatures):
            found = _batch_taggings(model, batch, result.emissions, pred, sent_lens, labels,
                                    temperature)
            for i, tagging in zip(indices, found):
                out[k][i] = tagging
    return out  # type: ignore[return-value]


def _batch_taggings(model: GCDoc, batch: Batch, emissions: Tensor | None, pred: Sequence[int],
                    sent_lens: Sequence[Sequence[int]], labels: Sequence[str],
                    temperature: float | None = None) -> list[Tagging]:
    """The taggings of a batch's graphs (``sent_lens``: each graph's sentence lengths) from
    its flat label ids; with ``emissions``, each entity scored by :func:`entity_scores` (at
    ``temperature``, default the model's)."""
    tags: list[list[list[str]]] = []
    counts: list[list[int]] = []  # entities per sentence, per graph
    wanted: list[tuple[int, int, Sequence[int]]] = []
    sentence = offset = 0
    for lengths in sent_lens:
        graph_tags, graph_counts = [], []
        for length in lengths:
            ids = pred[offset:offset + length]
            sent_tags = bioes_to_iob2([labels[t] for t in ids])
            graph_tags.append(sent_tags)
            if emissions is not None:
                found = spans(sent_tags)
                wanted.extend((sentence, start, ids[start:end]) for _, start, end in found)
                graph_counts.append(len(found))
            offset += length
            sentence += 1
        tags.append(graph_tags)
        counts.append(graph_counts)
    if emissions is None:
        return [Tagging(t) for t in tags]
    probs = iter(entity_scores(model, emissions, batch, wanted, temperature))
    return [Tagging(t, [[next(probs) for _ in range(n)] for n in c])
            for t, c in zip(tags, counts)]


def entity_scores(model: GCDoc, emissions: Tensor, batch: Batch,
                  wanted: Sequence[tuple[int, int, Sequence[int]]],
                  temperature: float | None = None) -> list[float]:
    """The probability of each labelled span ``(sentence, first token, label ids)`` of a
    batch under the model's CRF, at ``temperature`` (default: the model's
    ``score_temperature``; :meth:`CRFDecoder.path_log_probs
    <docgraph.nn.CRFDecoder.path_log_probs>`)."""
    if not wanted:
        return []
    width = max(len(ids) for _, _, ids in wanted)
    device = emissions.device
    sentence = torch.tensor([s for s, _, _ in wanted], device=device)
    first = torch.tensor([f for _, f, _ in wanted], device=device)
    ids = torch.tensor([list(i) + [-1] * (width - len(i)) for _, _, i in wanted],
                       device=device)
    log_probs = model.crf.path_log_probs(emissions, batch.sent_len, sentence, first, ids,
                                         batch.plan.sentences,
                                         temperature=temperature or
                                         model.config.score_temperature)
    return log_probs.exp().clamp(max=1.0).tolist()


@torch.no_grad()
def inspect_graphs(model: GCDoc, graphs: Sequence[DocumentGraph], vocabs: Vocabularies,
                   batch_tokens: int = DEFAULT_BATCH_TOKENS, device: torch.device | str = "cpu",
                   seed: int | None = 0, progress: str | None = None, scores: bool = False
                   ) -> list[GraphInspection]:
    """:func:`predict_graphs` with what the model computed on the way, per graph.

    One eval-mode forward pass a batch (:meth:`GCDoc.inspect
    <docgraph.model.GCDoc.inspect>`) gives the uncertainty, *Drop* and edge weights, and its
    Viterbi decoding the tags: those of :func:`predict_graphs` at the same ``seed``, in any
    batch.

    Args:
        model: A trained model.
        graphs: The document graphs.
        vocabs: The model's vocabularies (to name the labels).
        batch_tokens: Token budget per batch.
        device: Where the model runs.
        seed: The tagging seed of the Monte-Carlo masks (``None``: torch's global stream).
        progress: The name the progress is shown under (``None``: none shown).
        scores: Score each entity too (:func:`entity_scores`).

    Returns:
        One :class:`GraphInspection` per graph, in order.
    """
    model = unwrap(model)
    labels = _label_names(vocabs)
    out: list[GraphInspection | None] = [None] * len(graphs)
    for indices, batch, result, pred in _inspected_batches(model, graphs, batch_tokens, device,
                                                           seed, progress):
        uncertainty, drop = _host(result.uncertainty), _host(result.drop)
        edge_weight = _host(result.edge_weight)
        taggings = _batch_taggings(model, batch, result.emissions if scores else None, pred,
                                   [graphs[i].sent_len.tolist() for i in indices], labels)
        node = edge = 0
        for i, tagging in zip(indices, taggings):
            graph = graphs[i]
            nodes = slice(node, node + int(graph.num_nodes))
            edges = slice(edge, edge + int(graph.edge_index.size(1)))
            out[i] = GraphInspection(
                label_ids=pred[nodes],
                tags=tagging.tags,
                uncertainty=None if uncertainty is None else uncertainty[nodes],
                drop=None if drop is None else [bool(x) for x in drop[nodes]],
                edge_weight=None if edge_weight is None else edge_weight[edges],
                scores=tagging.scores,
            )
            node, edge = nodes.stop, edges.stop
    return out  # type: ignore[return-value]


def _host(values: Tensor | None) -> list | None:
    """A tensor as a Python list on the host (``None`` stays ``None``)."""
    return None if values is None else values.tolist()


def evaluate(model: GCDoc, split: PreparedSplit, vocabs: Vocabularies,
             batch_tokens: int = DEFAULT_BATCH_TOKENS, device: torch.device | str = "cpu",
             seed: int | None = 0, progress: str | None = None
             ) -> tuple[Scores, list[list[list[str]]]]:
    """Entity-level micro P/R/F1 (conlleval) of the model on a split, and its predictions
    (:func:`predict_graphs` with the Monte-Carlo seed ``seed``, its progress shown under the
    name ``progress``)."""
    predictions = predict_graphs(model, split.graphs, vocabs, batch_tokens, device, seed,
                                 progress)
    return score_predictions(split, predictions), predictions


def score_predictions(split: PreparedSplit, predictions: Sequence[list[list[str]]]) -> Scores:
    """Scores of per-graph, per-sentence IOB2 ``predictions`` against the split's gold tags."""
    gold = [list(s.tags) for doc in split.documents for s in doc.sentences]
    pred = [tags for doc_pred in predictions for tags in doc_pred]
    return score(gold, pred)


def split_consistency(split: PreparedSplit, predictions: Sequence[list[list[str]]]
                      ) -> DocumentConsistency:
    """Document-consistency metrics (:func:`~docgraph.metrics.document_consistency`) of
    per-graph predictions; a document split by ``max_doc_tokens`` counts as its chunks."""
    docs = split.documents
    return document_consistency([[list(s.tokens) for s in d.sentences] for d in docs],
                                [[list(s.tags) for s in d.sentences] for d in docs],
                                predictions)


@dataclass(frozen=True)
class Evaluation:
    """The scores of a model on labelled documents
    (:meth:`~docgraph.tagging.tagger.Tagger.evaluate`, ``evaluate.py``).

    Attributes:
        scores: Entity-level P/R/F1 (conlleval), overall and per type
            (:func:`score_predictions`).
        consistency: The document-consistency figures (:func:`split_consistency`).
        documents: The documents as they were tagged: a document longer than
            ``max_doc_tokens`` in chunks (:func:`~docgraph.graph.split_long_documents`).
        predictions: IOB2 tags per document (chunk), per sentence.
    """

    scores: Scores
    consistency: DocumentConsistency
    documents: list[Document]
    predictions: list[list[list[str]]]

    @classmethod
    def of(cls, split: PreparedSplit, predictions: Sequence[list[list[str]]]) -> Evaluation:
        """The evaluation of per-graph ``predictions`` against the split's gold tags."""
        return cls(score_predictions(split, predictions), split_consistency(split, predictions),
                   list(split.documents), list(predictions))


def evaluate_sharded(model: GCDoc, split: PreparedSplit, vocabs: Vocabularies,
                     batch_tokens: int = DEFAULT_BATCH_TOKENS, device: torch.device | str = "cpu",
                     progress: str | None = None) -> Scores | None:
    """:func:`evaluate` with the documents shared out over the processes of a DDP group.

    Every process tags every ``world``-th graph; rank 0 gathers the predictions and returns
    the scores (the other ranks return ``None``): the scores of :func:`evaluate` in one
    process, since every document's Monte-Carlo masks are its own. Without a process group it
    is :func:`evaluate`. ``progress`` names the progress of the first process's share.
    """
    world, rank = world_and_rank()
    if world == 1:
        return evaluate(model, split, vocabs, batch_tokens, device, progress=progress)[0]
    shard = interleaved_shard(len(split.graphs), world, rank)
    predictions = predict_graphs(model, [split.graphs[i] for i in shard], vocabs,
                                 batch_tokens, device, progress=progress)
    gathered: list[Any] | None = [None] * world if rank == 0 else None
    dist.gather_object((shard, predictions), gathered, dst=0)
    if gathered is None:
        return None
    return score_predictions(split, merge_shards(gathered, len(split.graphs)))


def interleaved_shard(count: int, world: int, rank: int) -> list[int]:
    """The items of ``rank`` when ``count`` items are dealt out over ``world`` shards in turn
    (every ``world``-th item, from ``rank``): the share of :func:`evaluate_sharded`."""
    return list(range(rank, count, world))


def merge_shards(shards: Sequence[tuple[Sequence[int], Sequence[Any]]], count: int
                 ) -> list[Any]:
    """The per-item results of ``count`` items from ``(indices, results)`` pairs, one per
    shard, back in item order."""
    merged: list[Any] = [[] for _ in range(count)]
    for indices, results in shards:
        for i, result in zip(indices, results):
            merged[i] = result
    return merged
