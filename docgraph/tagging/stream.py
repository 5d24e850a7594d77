"""Tagging a stream of chunks (:mod:`docgraph.tagging.prediction_io`) in bounded memory, for
``scripts/predict.py``.

Chunks are gathered into groups of about :data:`GROUP_TOKENS` tokens; each group's graphs are
built, tagged and dropped before the next group is read (:func:`tag_chunks`). With several CPU
processes the groups go to a pool of processes that each load the model once and stay for the
whole input, at most two groups per process in flight. The number of processes is chosen as
:meth:`~docgraph.tagging.tagger.Tagger.tag` chooses it
(:func:`~docgraph.runtime.processes.tagging_processes`), on the tokens read so far: the input is
read ahead only until it is long enough to be worth a second process. A chunk's tags are those
:meth:`~docgraph.tagging.tagger.Tagger.tag` gives the same tokens as one document: they depend on
the
chunk alone (its Monte-Carlo masks and sampled neighbours are keyed by its content), not on
its group or on the processes.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import TYPE_CHECKING

import torch

from docgraph.config import ExperimentConfig
from docgraph.data.contextual import ContextualEncoder
from docgraph.data.document import Document, make_document
from docgraph.data.vocab import Vocabularies
from docgraph.graph.splits import prepare_split
from docgraph.model import GCDoc
from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
from docgraph.runtime.processes import (
    WorkerError,
    contiguous_shards,
    min_tagging_tokens,
    process_pool,
    tagging_processes,
)
from docgraph.runtime.threads import bounded_threads
from docgraph.tagging.inference import predict_graphs
from docgraph.tagging.prediction_io import Chunk

if TYPE_CHECKING:  # not imported at run time: the tagging processes do not need it
    from docgraph.tagging.tagger import Tagger

GROUP_TOKENS = 20_000
"""Tokens gathered before a group is tagged: enough to fill the evaluation batches
(``eval_batch_tokens``, 8,000 by default) and to make a process's round trip cheap, small
enough that a group's graphs take a few tens of MB."""

BATCH_TOKENS = 3000
"""The most tokens of a tagging batch of a model with the document graph or the cross-sentence
module (less when its ``eval_batch_tokens`` is smaller; a longer chunk is a batch of its own).
Such a batch takes about 80 KB per token while it is tagged (its Monte-Carlo passes): a
tagging process of the sample GCDoc peaks at 643 MB with 3,000-token batches and 1,050 MB
with 8,000, tagging 3 % fewer tokens per CPU second (docs/predict.md). A BiLSTM-CRF, flat
from 2,000 to 8,000, keeps its ``eval_batch_tokens``."""

ONEDNN_CACHE = "64"
"""The capacity of oneDNN's primitive cache when tagging (``ONEDNN_PRIMITIVE_CACHE_CAPACITY``,
unless set): with its default, 1,024 primitives, the cache keeps those of every new batch
shape of the LSTMs, and a GCDoc tagging process grew by 1.4 KB per token tagged
(docs/predict.md)."""

Tags = list[list[str]]
"""IOB2 tags of a chunk: one list per piece."""


def _unsplit(config: ExperimentConfig) -> ExperimentConfig:
    """``config`` without ``max_doc_tokens``: chunks come already cut to size."""
    return replace(config, graph=replace(config.graph, max_doc_tokens=None))


def _documents(chunks: Sequence[Chunk]) -> list[Document]:
    """The non-empty chunks as unlabelled documents under positional ids."""
    return [make_document(str(i), [(p.tokens, ["O"] * len(p)) for p in chunk.pieces])
            for i, chunk in enumerate(chunks) if chunk.pieces]


def tag_documents(documents: Sequence[Document], model: GCDoc, vocabs: Vocabularies,
                  config: ExperimentConfig, device: torch.device | str = "cpu",
                  lm_encoder: ContextualEncoder | None = None, mc_seed: int = 0) -> list[Tags]:
    """IOB2 tags of each document, per sentence, each document tagged whole.

    Args:
        documents: Documents already no longer than the caller wants (``max_doc_tokens`` of
            ``config`` is not applied).
        model: The model.
        vocabs: Its vocabularies.
        config: Its configuration.
        device: Where it runs.
        lm_encoder: The contextual encoder of a model trained with ``config.lm``.
        mc_seed: The tagging seed of the Monte-Carlo masks.
    """
    config = _unsplit(config)
    prepared = prepare_split(documents, vocabs, config, lm_encoder=lm_encoder)
    return predict_graphs(model, prepared.graphs, vocabs, batch_tokens(config), device,
                          seed=mc_seed)


def batch_tokens(config: ExperimentConfig) -> int:
    """The token budget of a tagging batch of :func:`tag_documents` (:data:`BATCH_TOKENS`)."""
    budget = config.train.eval_batch_tokens
    if config.model.graph or config.model.cross_sentence:
        return min(budget, BATCH_TOKENS)
    return budget


def _with_empty(chunks: Sequence[Chunk], tags: Sequence[Tags]) -> list[Tags]:
    """The tags of :func:`_documents`'s documents spread back over all ``chunks``."""
    it = iter(tags)
    return [next(it) if chunk.pieces else [] for chunk in chunks]


# The model of a tagging process of the pool, loaded once by _load_worker.
_WORKER: tuple[GCDoc, Vocabularies, ExperimentConfig, ContextualEncoder | None] | None = None


def _load_worker(model_dir: str, overrides: ModelOverrides | None, threads: int) -> None:
    """Initialise a pool process: ``threads`` intra-op threads, the model loaded once."""
    global _WORKER
    torch.set_num_threads(threads)
    model, vocabs, config = load_model_dir(model_dir, "cpu", overrides)
    encoder = ContextualEncoder.from_config(config) if config.lm is not None else None
    _WORKER = (model, vocabs, config, encoder)


def _tag_in_worker(documents: list[Document], mc_seed: int) -> list[Tags]:
    """:func:`tag_documents` with the model of this pool process."""
    assert _WORKER is not None, "the pool's initializer loads the model"
    model, vocabs, config, encoder = _WORKER
    return tag_documents(documents, model, vocabs, config, "cpu", encoder, mc_seed)


def group_chunks(chunks: Iterable[Chunk], group_tokens: int = GROUP_TOKENS
                 ) -> Iterator[list[Chunk]]:
    """Consecutive chunks in groups of at least ``group_tokens`` tokens (the last group may
    have fewer)."""
    group: list[Chunk] = []
    tokens = 0
    for chunk in chunks:
        group.append(chunk)
        tokens += chunk.num_tokens
        if tokens >= group_tokens:
            yield group
            group, tokens = [], 0
    if group:
        yield group


def tag_chunks(chunks: Iterable[Chunk], tagger: Tagger, processes: int = 0,
               mc_seed: int = 0, group_tokens: int = GROUP_TOKENS
               ) -> Iterator[tuple[Chunk, Tags]]:
    """Tag chunks as they come, in input order, holding a few groups of them at a time.

    Args:
        chunks: The chunks (e.g. :func:`~docgraph.tagging.prediction_io.read_chunks`), read lazily.
        tagger: The model; its :attr:`~docgraph.tagging.tagger.Tagger.path` for the processes.
        processes: CPU processes, as :meth:`Tagger.tag <docgraph.tagging.tagger.Tagger.tag>`
            (``0``: automatic, on the tokens read so far).
        mc_seed: The tagging seed of the Monte-Carlo masks.
        group_tokens: Tokens per group.

    Yields:
        Each chunk with its tags, one list per piece (``[]`` for an empty chunk).

    Raises:
        WorkerError: A tagging process died without an exception (e.g. killed for memory).
    """
    if processes < 0:
        raise ValueError(f"processes must be >= 0 (0: automatic), got {processes}")
    # read by oneDNN when it first runs (in this process, or a tagging process it starts)
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", ONEDNN_CACHE)
    model = tagger.config.model
    min_tokens = min_tagging_tokens(model.graph, model.cross_sentence)

    def count(tokens: int) -> int:
        return tagging_processes(tokens, tagger.device, processes, min_tokens=min_tokens)

    # Read ahead until the input is long enough for every process there can be, each with a
    # group of its own, or until it ends; then the processes are counted as Tagger.tag counts
    # them on the whole input.
    rest = iter(chunks)
    ahead: deque[Chunk] = deque()
    tokens, ended = 0, False
    most = 1 if tagger.path is None else count(sys.maxsize)
    while most > 1 and (count(tokens) < most or tokens < most * group_tokens):
        chunk = next(rest, None)
        if chunk is None:
            ended = True
            break
        ahead.append(chunk)
        tokens += chunk.num_tokens
    workers = count(tokens) if most > 1 else 1
    if ended and workers > 1:  # a short input: one share per process
        lengths = [c.num_tokens for c in ahead]
        groups: Iterator[list[Chunk]] = iter(
            [[ahead[i] for i in shard] for shard in contiguous_shards(lengths, workers)])
        ahead.clear()
    else:
        groups = group_chunks(_drain(ahead, rest), group_tokens)
    if workers == 1:
        for group in groups:
            with bounded_threads(tagger.threads):
                tags = tag_documents(_documents(group), tagger.model, tagger.vocabs,
                                     tagger.config, tagger.device, tagger.lm_encoder, mc_seed)
            yield from zip(group, _with_empty(group, tags))
    else:
        yield from _tag_in_pool(groups, str(tagger.path), tagger.overrides, workers, mc_seed)


def _drain(ahead: deque[Chunk], rest: Iterator[Chunk]) -> Iterator[Chunk]:
    """The chunks read ahead, each let go as it is handed on, then the others."""
    while ahead:
        yield ahead.popleft()
    yield from rest


def _tag_in_pool(groups: Iterator[list[Chunk]], model_dir: str,
                 overrides: ModelOverrides | None, workers: int, mc_seed: int
                 ) -> Iterator[tuple[Chunk, Tags]]:
    """Tag groups in ``workers`` processes that load the model once, at most two groups per
    process in flight, results in input order."""
    pending: deque[tuple[list[Chunk], Future]] = deque()
    try:
        with process_pool(workers, _load_worker, (model_dir, overrides, 1)) as pool:
            for group in groups:
                pending.append((group, pool.submit(_tag_in_worker, _documents(group), mc_seed)))
                while len(pending) >= 2 * workers:
                    yield from _finish(*pending.popleft())
            while pending:
                yield from _finish(*pending.popleft())
    except BrokenProcessPool as err:
        raise WorkerError(f"a tagging process died unexpectedly ({err})") from None


def _finish(group: list[Chunk], future: Future) -> Iterator[tuple[Chunk, Tags]]:
    """The chunks of a group with the tags its process returned."""
    yield from zip(group, _with_empty(group, future.result()))

