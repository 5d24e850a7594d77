"""Dynamic batching: the documents of concurrent requests packed into one tagging pass.

Every request's documents join one bounded queue. Whenever a worker is free, the batcher
takes documents from the head of the queue until the pass holds ``max_tokens`` tokens, the
queue is empty and the first document has waited ``max_wait`` seconds, or the next document
would not fit (a document longer than the budget goes alone). A pass smaller than the largest
pass under way on another worker waits longer for documents, up to ``balance_wait`` seconds
after its first: under steady load the workers then take passes of about equal size, where a
worker freed just after the others took the queue would otherwise tag one small pass after
another (each pass has a fixed cost, so small passes tag fewer tokens per second). A document
whose request is gone (the client disconnected, the request timed out) is taken out of the
queue and never tagged. This module does not import torch.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from docgraph.config.errors import DocgraphError

__all__ = ["Batcher", "Job", "PassDocument", "QueueFullError", "estimated_tokens"]


class QueueFullError(DocgraphError, RuntimeError):
    """The queue cannot take a request's documents now."""


def estimated_tokens(content: str | Sequence[Sequence[str]]) -> int:
    """About how many tokens a document has, to pack passes by (at least 1): its
    whitespace-separated words, or its tokens."""
    if isinstance(content, str):
        return max(1, len(content.split()))
    return max(1, sum(len(sentence) for sentence in content))


class PassDocument(NamedTuple):
    """A document of a tagging pass and what its request asked for (what a worker gets).

    Attributes:
        doc_id: Its id in the entity records.
        content: Raw text, or its sentences as token lists.
        scores: Give each entity its score.
        min_score: Keep only the entities scored at least this.
        types: Keep only the entities of these types (``None``: all).
    """

    doc_id: str
    content: str | list[list[str]]
    scores: bool = False
    min_score: float | None = None
    types: tuple[str, ...] | None = None

    @property
    def needs_scores(self) -> bool:
        """Whether its entities must be scored (for their scores or for ``min_score``)."""
        return self.scores or self.min_score is not None


@dataclass(eq=False)
class Job:
    """One document of a request, waiting for its entities in :attr:`future`."""

    document: PassDocument
    tokens: int
    future: asyncio.Future = field(repr=False)
    queued_at: float = 0.0


class _Workers(Protocol):
    async def acquire(self) -> Any: ...

    async def run(self, worker: Any, documents: Sequence[PassDocument]) -> list: ...


class Batcher:
    """Packs queued documents into passes and runs each on a free worker.

    Args:
        workers: Where passes run (:class:`~docgraph.serve.pool.WorkerPool`).
        max_tokens: The most tokens of a pass (estimated, :func:`estimated_tokens`).
        max_wait: Seconds the first document of a pass waits for others.
        max_queue: The most documents waiting.
        on_pass: Called with the documents and tokens of each pass as it starts.
        balance_wait: Seconds the first document of a pass waits for others while the pass
            holds fewer tokens than the largest pass under way (at least ``max_wait``; 0: no
            such wait).
    """

    def __init__(self, workers: _Workers, max_tokens: int, max_wait: float, max_queue: int,
                 on_pass: Callable[[int, int], None] = lambda documents, tokens: None,
                 balance_wait: float = 0.0) -> None:
        self._workers = workers
        self.max_tokens, self.max_wait, self.max_queue = max_tokens, max_wait, max_queue
        self.balance_wait = max(balance_wait, max_wait)
        self._on_pass = on_pass
        self._queue: deque[Job] = deque()
        self._wake = asyncio.Event()  # a document arrived or a pass ended
        self._passes: dict[asyncio.Task, int] = {}  # each pass under way: its tokens
        self._loop_task: asyncio.Task | None = None

    @property
    def depth(self) -> int:
        """Documents waiting."""
        return len(self._queue)

    def submit(self, jobs: Sequence[Job]) -> None:
        """Queue a request's documents, all or none.

        Raises:
            QueueFullError: They do not fit in the queue now.
        """
        if len(self._queue) + len(jobs) > self.max_queue:
            raise QueueFullError(f"{len(self._queue)} documents are waiting (at most "
                            f"{self.max_queue})")
        now = asyncio.get_running_loop().time()
        for job in jobs:
            job.queued_at = now
            self._queue.append(job)
        self._wake.set()

    def drop(self, jobs: Sequence[Job]) -> int:
        """Take a request's documents out of the queue (its client is gone); how many were
        still waiting (a document already in a pass is tagged, its result dropped)."""
        dropped = set(map(id, jobs))
        before = len(self._queue)
        kept = [job for job in self._queue if id(job) not in dropped]
        self._queue.clear()
        self._queue.extend(kept)
        for job in jobs:
            if not job.future.done():
                job.future.cancel()
        return before - len(self._queue)

    def start(self) -> None:
        """Start packing passes (in the running event loop)."""
        self._loop_task = asyncio.get_running_loop().create_task(self._serve())

    async def close(self, error: Callable[[], BaseException]) -> None:
        """Stop packing; every waiting document's future gets ``error()``, the passes under
        way end with their workers."""
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
        while self._queue:
            job = self._queue.popleft()
            if not job.future.done():
                job.future.set_exception(error())

    async def _woken(self, timeout: float | None) -> None:
        """Until a document arrives or a pass ends, at most ``timeout`` seconds (``None``:
        for ever)."""
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout)

    def _beside(self) -> int:
        """The tokens a pass should reach before it stops waiting for balance: those of the
        largest pass under way (at most ``max_tokens``)."""
        return min(self.max_tokens, max(self._passes.values(), default=0))

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            worker = await self._workers.acquire()
            while not self._queue:
                await self._woken(None)
            first = self._queue[0]
            batch: list[Job] = []
            tokens = 0
            while True:
                if not self._queue:
                    wait = self.max_wait if tokens >= self._beside() else self.balance_wait
                    left = first.queued_at + wait - loop.time()
                    if left <= 0:
                        break
                    await self._woken(left)
                    continue
                job = self._queue[0]
                if batch and tokens + job.tokens > self.max_tokens:
                    break
                self._queue.popleft()
                batch.append(job)
                tokens += job.tokens
                if tokens >= self.max_tokens:
                    break
            self._on_pass(len(batch), tokens)
            task = loop.create_task(self._run(worker, batch))
            self._passes[task] = tokens

    async def _run(self, worker: Any, batch: list[Job]) -> None:
        try:
            results = await self._workers.run(worker, [job.document for job in batch])
        except Exception as err:
            for job in batch:
                if not job.future.done():
                    job.future.set_exception(err)
            return
        finally:
            self._passes.pop(asyncio.current_task(), None)  # type: ignore[arg-type]
            self._wake.set()
        for job, result in zip(batch, results):
            if not job.future.done():
                job.future.set_result(result)

