"""The one tagging pipeline of a trained model, used by :class:`~docgraph.tagging.tagger.Tagger`
(and through it by ``predict.py``, ``evaluate.py``, ``visualize.py`` and the spaCy component).

Its rules, each written once:

* **chunk length** (:func:`chunk_tokens`): a document longer than ``max_doc_tokens`` is tagged
  in chunks (:func:`docgraph.data.chunking.split_long_documents` with ``cut_sentences``), each
  a document of its own for the model;
* **batch tokens** (:func:`batch_tokens`): the token budget of a tagging batch;
* **processes** (:func:`~docgraph.runtime.processes.tagging_processes`): counted on the tokens
  read so far, the input read ahead only until it is long enough to be worth a second process;
* **one loop** (:func:`~docgraph.tagging.inference.predict_graphs`,
  :func:`~docgraph.tagging.inference.inspect_graphs`) and **one pool** (:func:`stream_tags`).

Chunks are gathered into groups of about :data:`GROUP_TOKENS` tokens; each group's graphs are
built, tagged and dropped before the next group is read, so memory does not grow with the
input. With several CPU processes the groups go to a pool of processes that each load the
model once and stay for the whole input, at most two groups per process in flight. A chunk's
tags depend on the chunk alone (its Monte-Carlo masks and sampled neighbours are keyed by its
content and the tagging seed), not on its group, its batch or the processes.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import torch

from docgraph.config import ExperimentConfig
from docgraph.config.graph import GraphConfig
from docgraph.config.tagging import DEFAULT_MAX_DOC_TOKENS, LabelConsistency
from docgraph.data.contextual import ContextualEncoder
from docgraph.data.document import Document
from docgraph.data.vocab import Vocabularies
from docgraph.graph.build import DocumentGraph, attach_token_features, documents_to_graphs
from docgraph.model import GCDoc, unwrap
from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
from docgraph.runtime.machine import available_memory
from docgraph.runtime.processes import (
    WorkerError,
    contiguous_shards,
    dead_pool_process,
    min_tagging_tokens,
    pool_result,
    process_pool,
    tagging_processes,
)
from docgraph.tagging.chunks import ChunkInspection
from docgraph.tagging.consistency import consistent_tagging
from docgraph.tagging.inference import GraphInspection, inspect_graphs, score_graphs, tag_graphs
from docgraph.tagging.result import Tagging

T = TypeVar("T")

GROUP_TOKENS = 20_000
"""Tokens gathered before a group is tagged: enough to fill the tagging batches and to make a
process's round trip cheap, small enough that a group's graphs take a few tens of MB."""

BATCH_TOKENS = 3000
"""The most tokens of a tagging batch of a model with the document graph or the cross-sentence
module (less when its ``eval_batch_tokens`` is smaller; a longer chunk is a batch of its own):
a cap on a batch's memory (its Monte-Carlo passes) that costs no tagging speed (see
docs/experiments.md, 'Tagging pipeline'). A BiLSTM-CRF keeps its ``eval_batch_tokens``."""

ONEDNN_CACHE = "64"
"""The capacity of oneDNN's primitive cache when tagging (``ONEDNN_PRIMITIVE_CACHE_CAPACITY``,
unless set): with its default, the cache keeps the primitives of every new batch shape of the
LSTMs and a tagging process grows with the tokens it tags (docs/predict.md)."""

IDEEP_CACHE = "64"
"""The capacity of PyTorch's own cache of oneDNN computations when tagging (ideep's,
``LRU_CACHE_CAPACITY``, unless set; its default is 1,024): in bfloat16 the matrix products keep
one per new shape there, and a tagging process grew with the tokens it tags (docs/predict.md)."""


def bound_onednn_caches() -> None:
    """Cap oneDNN's caches (:data:`ONEDNN_CACHE`, :data:`IDEEP_CACHE`) unless the environment
    sets them: read when oneDNN first runs, in this process or a tagging process it starts."""
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", ONEDNN_CACHE)
    os.environ.setdefault("LRU_CACHE_CAPACITY", IDEEP_CACHE)


@contextmanager
def bounded_threads(threads: int) -> Iterator[None]:
    """Run the block with ``threads`` torch intra-op threads (``0``: as they are;
    :func:`~docgraph.runtime.threads.tagging_threads`), then put back the caller's count."""
    previous = torch.get_num_threads()
    if threads <= 0 or threads == previous:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


Tags = list[list[str]]
"""IOB2 tags of a chunk: one list per sentence (piece)."""


class TaggingModel(Protocol):
    """What tagging needs of a loaded model (a :class:`~docgraph.tagging.tagger.Tagger`):
    with its configuration, the graph configuration it builds documents' graphs by
    (``config.graph_config()``, resolved once)."""

    model: GCDoc
    vocabs: Vocabularies
    config: ExperimentConfig
    graph_config: GraphConfig
    device: torch.device
    lm_encoder: ContextualEncoder | None
    batch_tokens: int


class StreamingTagger(TaggingModel, Protocol):
    """What :func:`stream_tags` needs besides the model: where its processes load it from
    (``path``, ``None``: no processes) with which ``overrides``, the intra-op ``threads``
    of tagging in this process and the label ``consistency`` of decoding (a
    :class:`~docgraph.tagging.tagger.Tagger`)."""

    path: Path | None
    overrides: ModelOverrides
    threads: int
    consistency: LabelConsistency | None


GPU_BATCH_TOKENS = 32_000
"""The most tokens of a tagging batch on a GPU, where a batch's steps cost little more than a
smaller one's and fewer batches mean fewer launches (each LSTM step is a launch)."""

GPU_BYTES_PER_TOKEN = 256 * 1024
"""The free GPU memory a tagging batch's token is given (the Monte-Carlo copies, the
cross-sentence windows and the workspaces of the recurrent layers, with room to spare)."""


def batch_tokens(config: ExperimentConfig, device: torch.device | str | None = None) -> int:
    """The token budget of a tagging batch: on a GPU, :data:`GPU_BATCH_TOKENS` or what its
    free memory holds at :data:`GPU_BYTES_PER_TOKEN` (at least :data:`BATCH_TOKENS`);
    elsewhere :data:`BATCH_TOKENS` for a model with the graph or the cross-sentence module,
    else ``eval_batch_tokens``."""
    if device is not None and torch.device(device).type == "cuda":
        free = available_memory(device) or 0
        return max(BATCH_TOKENS, min(GPU_BATCH_TOKENS, free // GPU_BYTES_PER_TOKEN))
    budget = config.train.eval_batch_tokens
    if config.model.graph or config.model.cross_sentence:
        return min(budget, BATCH_TOKENS)
    return budget


def chunk_tokens(config: ExperimentConfig, requested: int | None = None) -> int | None:
    """The most tokens tagged as one document: ``requested`` when given (``0``: whole
    documents, ``None`` returned), else the model's ``max_doc_tokens``, else
    :data:`~docgraph.config.tagging.DEFAULT_MAX_DOC_TOKENS`.

    Raises:
        ValueError: ``requested`` is negative.
    """
    if requested is not None:
        if requested < 0:
            raise ValueError(f"max_doc_tokens must be >= 0 (0: whole documents), got {requested}")
        return requested or None
    return config.graph.max_doc_tokens or DEFAULT_MAX_DOC_TOKENS


def _graphs(documents: Sequence[Document], tagged: TaggingModel) -> list[DocumentGraph]:
    """The graphs of documents already cut to size, with the features of the language model
    the model reads, if any, computed on them."""
    config = tagged.config
    graphs = documents_to_graphs(documents, tagged.vocabs, tagged.graph_config)
    if config.lm is not None:
        encoder = tagged.lm_encoder or ContextualEncoder.from_config(config)
        attach_token_features(graphs, encoder.encode(list(documents)))
    return graphs


def tag_in_process(documents: Sequence[Document], tagged: TaggingModel, mc_seed: int = 0,
                   scores: bool = False) -> list[Tagging]:
    """The :class:`~docgraph.tagging.result.Tagging` of each non-empty document (its IOB2
    tags per sentence and, with ``scores``, its entities' scores), in this process, each
    document tagged whole (cut to size by the caller), in batches of ``tagged.batch_tokens``."""
    return tag_graphs(tagged.model, _graphs(documents, tagged), tagged.vocabs,
                      tagged.batch_tokens, tagged.device, seed=mc_seed, scores=scores)


def score_in_process(documents: Sequence[Document], tagged: TaggingModel,
                     temperatures: Sequence[float], mc_seed: int = 0) -> list[list[Tagging]]:
    """:func:`tag_in_process` with the entities scored at each of ``temperatures`` (one list
    of taggings per temperature; :func:`~docgraph.tagging.inference.score_graphs`)."""
    return score_graphs(tagged.model, _graphs(documents, tagged), tagged.vocabs, temperatures,
                        tagged.batch_tokens, tagged.device, seed=mc_seed)


def inspect_in_process(documents: Sequence[Document], tagged: TaggingModel, mc_seed: int = 0,
                       scores: bool = False) -> list[tuple[DocumentGraph, GraphInspection]]:
    """:func:`tag_in_process` with what the model computed on the way (uncertainty, pruning,
    edge weights: :func:`~docgraph.tagging.inference.inspect_graphs`), each with its graph."""
    graphs = _graphs(documents, tagged)
    found = inspect_graphs(tagged.model, graphs, tagged.vocabs, tagged.batch_tokens,
                           tagged.device, seed=mc_seed, scores=scores)
    return list(zip(graphs, found))


@dataclass(frozen=True)
class _LoadedModel:
    """The model of a tagging process of the pool."""

    model: GCDoc
    vocabs: Vocabularies
    config: ExperimentConfig
    device: torch.device
    lm_encoder: ContextualEncoder | None
    batch_tokens: int
    graph_config: GraphConfig


# The model of a tagging process of the pool, loaded once by _load_worker.
_WORKER: _LoadedModel | None = None


def _load_worker(model_dir: str, overrides: ModelOverrides | None, threads: int,
                 budget: int | None = None) -> None:
    """Initialise a pool process: ``threads`` intra-op threads, the model loaded once, tagging
    in batches of ``budget`` tokens (default: :func:`batch_tokens`)."""
    global _WORKER
    torch.set_num_threads(threads)
    model, vocabs, config = load_model_dir(model_dir, "cpu", overrides)
    precision = (overrides or ModelOverrides()).lm_precision
    encoder = (ContextualEncoder.from_config(config, precision=precision)
               if config.lm is not None else None)
    _WORKER = _LoadedModel(model, vocabs, config, torch.device("cpu"), encoder,
                           budget or batch_tokens(config), config.graph_config())


def _tag_in_worker(documents: list[Document], mc_seed: int, scores: bool, inspect: bool
                   ) -> list[tuple]:
    """:func:`_tag_group` with the model of this pool process."""
    assert _WORKER is not None, "the pool's initializer loads the model"
    return _tag_group(documents, _WORKER, mc_seed, scores, inspect)


def group_items(items: Iterable[T], size: Callable[[T], int],
                group_tokens: int = GROUP_TOKENS) -> Iterator[list[T]]:
    """Consecutive items in groups of at least ``group_tokens`` tokens (the last group may
    have fewer)."""
    group: list[T] = []
    tokens = 0
    for item in items:
        group.append(item)
        tokens += size(item)
        if tokens >= group_tokens:
            yield group
            group, tokens = [], 0
    if group:
        yield group


def stream_tags(items: Iterable[T], document: Callable[[T], Document],
                tagger: StreamingTagger,
                processes: int = 0, mc_seed: int = 0, group_tokens: int = GROUP_TOKENS,
                scores: bool = False, inspect: bool = False) -> Iterator[tuple]:
    """Tag items as they come, in input order, holding a few groups of them at a time: the
    one tagging stream of the core (:meth:`Tagger.pipe
    <docgraph.tagging.tagger.Tagger.pipe>`).

    Args:
        items: What to tag, read lazily; each is one document for the model (already no
            longer than the caller wants).
        document: The unlabelled :class:`Document` of an item (its sentences are what the
            model reads; an item without sentences is not tagged).
        tagger: The model; its :attr:`~docgraph.tagging.tagger.Tagger.path` for the processes.
        processes: CPU processes (``0``: automatic, on the tokens read so far; see
            :meth:`Tagger.processes_for <docgraph.tagging.tagger.Tagger.processes_for>`).
        mc_seed: The tagging seed of the Monte-Carlo masks.
        group_tokens: Tokens per group.
        scores: Score every entity (:class:`~docgraph.tagging.result.Tagging`).
        inspect: Add what the pass computed on the way (:class:`ChunkInspection`).

    Yields:
        Each item with its :class:`~docgraph.tagging.result.Tagging` (no sentences for an
        item without any; with the tagger's label consistency applied), and with ``inspect``
        its :class:`ChunkInspection`.

    Raises:
        ValueError: ``processes`` is negative, or above 1 for a tagger without a model
            directory to load in the processes.
        WorkerError: A tagging process died without an exception (e.g. killed for memory).
    """
    if processes < 0:
        raise ValueError(f"processes must be >= 0 (0: automatic), got {processes}")
    if processes > 1 and tagger.path is None:
        raise ValueError("processes > 1 needs a tagger loaded from a model directory "
                         "(Tagger.load)")
    bound_onednn_caches()
    model = tagger.config.model
    one = tagger.path is None or processes == 1
    min_tokens = 0 if one else min_tagging_tokens(model.graph, model.cross_sentence)
    pairs = ((item, document(item)) for item in items)

    def size(pair: tuple[T, Document]) -> int:
        return pair[1].num_tokens

    def count(tokens: int) -> int:
        return tagging_processes(tokens, tagger.device, processes, min_tokens=min_tokens)

    # Read ahead until the input is long enough for every process there can be, each with a
    # group of its own, or until it ends; then the processes are counted on the whole input.
    ahead: deque[tuple[T, Document]] = deque()
    tokens, ended = 0, False
    most = 1 if one else count(sys.maxsize)
    while most > 1 and (count(tokens) < most or tokens < most * group_tokens):
        pair = next(pairs, None)
        if pair is None:
            ended = True
            break
        ahead.append(pair)
        tokens += size(pair)
    workers = count(tokens) if most > 1 else 1
    consistency = tagger.consistency
    scored = scores or consistency is not None
    groups: Iterator[list[tuple[T, Document]]]
    if ended and workers > 1:  # a short input: one share per process
        shares = contiguous_shards([size(p) for p in ahead], workers)
        groups = iter([[ahead[i] for i in share] for share in shares])
        ahead.clear()
    else:
        groups = group_items(_drain(ahead, pairs), size, group_tokens)
    if workers == 1:
        tagged = (item for group in groups for item in _spread(
            group, _tag_in_this_process(group, tagger, mc_seed, scored, inspect), scored,
            inspect, _has_graph(tagger)))
    else:
        tagged = _tag_in_pool(groups, str(tagger.path), tagger.overrides, workers, mc_seed,
                              scored, inspect, tagger.batch_tokens, _has_graph(tagger))
    for item, doc, tagging, *rest in tagged:
        if consistency is not None:
            tagging = consistent_tagging([s.tokens for s in doc.sentences], tagging,
                                         consistency.min_votes, consistency.relabel_below)
            if not scores:
                tagging = Tagging(tagging.tags, None)
        yield (item, tagging, *rest)


def _tag_in_this_process(group: Sequence[tuple[T, Document]], tagger: StreamingTagger,
                         mc_seed: int, scores: bool, inspect: bool) -> list[tuple]:
    with bounded_threads(tagger.threads):
        return _tag_group(_tagged(group), tagger, mc_seed, scores, inspect)


def _tagged(group: Sequence[tuple[T, Document]]) -> list[Document]:
    """The documents of a group that the model tags (those with sentences)."""
    return [doc for _, doc in group if doc.sentences]


def _spread(group: Sequence[tuple[T, Document]], found: Sequence[tuple], scores: bool,
            inspect: bool, has_graph: bool) -> Iterator[tuple]:
    """The items of a group, each with its document and the results of :func:`_tagged`'s
    documents (an empty one for the others)."""
    it = iter(found)
    empty: tuple = (Tagging([], [] if scores else None),)
    if inspect:
        empty += (ChunkInspection(None, None, [] if has_graph else None),)
    for item, doc in group:
        yield (item, doc, *(next(it) if doc.sentences else empty))


def _has_graph(tagged: TaggingModel) -> bool:
    return unwrap(tagged.model).document_graph is not None


def _tag_group(documents: Sequence[Document], tagged: TaggingModel, mc_seed: int,
               scores: bool, inspect: bool) -> list[tuple]:
    """``(tagging,)`` of each document, or with ``inspect`` ``(tagging, inspection)``."""
    if not inspect:
        return [(t,) for t in tag_in_process(documents, tagged, mc_seed, scores)]
    has_graph = _has_graph(tagged)
    out = []
    for graph, found in inspect_in_process(documents, tagged, mc_seed, scores):
        edges = None
        if has_graph:
            weights = found.edge_weight or [None] * int(graph.edge_index.size(1))
            edges = [(j, i, w) for (j, i), w in zip(graph.edge_index.t().tolist(), weights)]
        out.append((Tagging(found.tags, found.scores),
                    ChunkInspection(found.uncertainty, found.drop, edges)))
    return out


def _drain(ahead: deque[T], rest: Iterator[T]) -> Iterator[T]:
    """The items read ahead, each let go as it is handed on, then the others."""
    while ahead:
        yield ahead.popleft()
    yield from rest


def _tag_in_pool(groups: Iterator[list[tuple[T, Document]]], model_dir: str,
                 overrides: ModelOverrides | None, workers: int, mc_seed: int, scores: bool,
                 inspect: bool, budget: int, has_graph: bool) -> Iterator[tuple]:
    """Tag groups in ``workers`` processes that load the model once, at most two groups per
    process in flight, results in input order."""
    pending: deque[tuple[list[tuple[T, Document]], Future]] = deque()
    with process_pool(workers, _load_worker, (model_dir, overrides, 1, budget)) as pool:
        try:
            for group in groups:
                pending.append((group, pool.submit(_tag_in_worker, _tagged(group), mc_seed,
                                                   scores, inspect)))
                while len(pending) >= 2 * workers:
                    group, future = pending.popleft()
                    yield from _spread(group, pool_result(pool, future), scores, inspect,
                                       has_graph)
            while pending:
                group, future = pending.popleft()
                yield from _spread(group, pool_result(pool, future), scores, inspect, has_graph)
        except BrokenProcessPool:
            raise WorkerError(f"{dead_pool_process(pool, 'tagging process')} before it had "
                              "tagged its share") from None
