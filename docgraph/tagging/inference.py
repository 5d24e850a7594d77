"""Tagging and scoring with a trained model: predictions per graph, in one process, in
several CPU processes, or sharded over a training run's process group.

:func:`predict_graphs` is the one loop that turns a model's Viterbi label ids into IOB2 tags;
:func:`predict_in_processes` is the one multi-process tagging path (``evaluate.py`` and
:meth:`~docgraph.tagging.tagger.Tagger.tag` use it), carrying every
:class:`~docgraph.persistence.model_dir.ModelOverrides` into its processes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from docgraph.batching.loader import iterate_batches
from docgraph.data.document import Document
from docgraph.data.tags import bioes_to_iob2
from docgraph.data.vocab import Vocabularies
from docgraph.graph import DocumentGraph, TokenBudgetBatchSampler
from docgraph.graph.splits import PreparedSplit, prepare_split
from docgraph.metrics import DocumentConsistency, Scores, document_consistency, score
from docgraph.model import GCDoc
from docgraph.persistence.model_dir import ModelOverrides, load_model_dir, unwrap
from docgraph.runtime.progress import Progress
from docgraph.training.distributed import contiguous_shards, map_document_shards, world_and_rank


@torch.no_grad()
def predict_graphs(model: GCDoc, graphs: Sequence[DocumentGraph], vocabs: Vocabularies,
                   batch_tokens: int = 8000, device: torch.device | str = "cpu",
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
    model = unwrap(model)
    device = torch.device(device)
    sampler = TokenBudgetBatchSampler([int(g.num_nodes) for g in graphs], batch_tokens,
                                      shuffle=False)
    labels = vocabs.labels.lookup(list(range(len(vocabs.labels))))
    out: list[list[list[str]] | None] = [None] * len(graphs)
    cuda = device.type == "cuda"
    index = (device.index if device.index is not None else torch.cuda.current_device()
             ) if cuda else None
    # The Monte-Carlo masks come from per-document generators; the fork also keeps anything
    # else random in a model from moving the caller's (training) random stream.
    fork = (contextlib.nullcontext() if seed is None
            else torch.random.fork_rng(devices=[index] if cuda else []))
    with fork:
        if seed is not None:
            torch.default_generator.manual_seed(seed)
            if cuda:
                with torch.cuda.device(index):
                    torch.cuda.manual_seed(seed)
        with Progress(progress or "", total=sum(int(g.num_nodes) for g in graphs),
                      unit="token", enabled=progress is not None) as bar:
            for indices, batch in iterate_batches(graphs, sampler, device, model):
                _store_predictions(model.predict(batch, mc_seed=seed).tolist(), indices,
                                   graphs, labels, out)
                bar.update(int(batch.num_nodes))
    return out  # type: ignore[return-value]


def _store_predictions(pred: list[int], indices: list[int], graphs: Sequence[DocumentGraph],
                       labels: list[str], out: list) -> None:
    offset = 0
    for i in indices:
        sentences = []
        for length in graphs[i].sent_len.tolist():
            tags = [labels[t] for t in pred[offset:offset + length]]
            sentences.append(bioes_to_iob2(tags))
            offset += length
        out[i] = sentences


def predict_documents(documents: Sequence[Document], model_dir: str | Path,
                      overrides: ModelOverrides | None = None, seed: int = 0,
                      progress: str | None = None) -> list[list[list[str]]]:
    """Load a model directory and tag ``documents`` on the CPU, as :func:`evaluate` does.

    ``overrides`` (e.g. another pruning threshold) are applied to the loaded model
    (:class:`~docgraph.persistence.model_dir.ModelOverrides`); ``seed`` is the tagging seed of the
    Monte-Carlo masks and ``progress`` the name its progress is shown under
    (:func:`predict_graphs`).

    The predictions are per graph of ``prepare_split(documents, ...)`` (a document split by
    ``max_doc_tokens`` gives one entry per chunk), so the results of consecutive shards of a
    document list concatenate to the result of the whole list. This is what the tagging
    processes of :func:`predict_in_processes` run.
    """
    model, vocabs, config = load_model_dir(model_dir, "cpu", overrides)
    prepared = prepare_split(documents, vocabs, config)
    return predict_graphs(model, prepared.graphs, vocabs, config.train.eval_batch_tokens,
                          seed=seed, progress=progress)


def predict_in_processes(model_dir: str | Path, documents: Sequence[Document],
                         processes: int, overrides: ModelOverrides | None = None,
                         seed: int = 0, progress: str | None = None
                         ) -> list[list[list[str]]]:
    """:func:`predict_documents` with the documents shared out over ``processes`` CPU
    processes (:func:`~docgraph.training.distributed.map_document_shards`: consecutive runs of
    documents with about equal numbers of tokens).

    Every document draws its Monte-Carlo dropout masks and its sampled graph neighbours from
    generators of its own (keyed by the document and the seeds), so the tags are those of one
    process, whatever the number of processes. This is the one multi-process tagging path:
    ``evaluate.py`` and :meth:`~docgraph.tagging.tagger.Tagger.tag` both go through it.

    ``progress`` (e.g. ``"tagging test"``) shows the tokens tagged by all the processes
    together under that name; ``None`` shows nothing.
    """
    if progress is None:
        return map_document_shards(predict_documents, documents, processes, str(model_dir),
                                   overrides, seed)
    if len(contiguous_shards([d.num_tokens for d in documents], processes)) <= 1:
        return predict_documents(documents, model_dir, overrides, seed, progress)
    with Progress(progress, total=sum(d.num_tokens for d in documents), unit="token") as bar:
        return map_document_shards(predict_documents, documents, processes, str(model_dir),
                                   overrides, seed, progress, progress=bar)


def evaluate(model: GCDoc, split: PreparedSplit, vocabs: Vocabularies,
             batch_tokens: int = 8000, device: torch.device | str = "cpu",
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


def evaluate_sharded(model: GCDoc, split: PreparedSplit, vocabs: Vocabularies,
                     batch_tokens: int = 8000, device: torch.device | str = "cpu",
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
