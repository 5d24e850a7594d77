"""The model workers of the tagging service, seen from the front process that holds the HTTP
connections: each a process with the model loaded (:mod:`docgraph.serve.worker`), one pass at
a time.

The model runs outside the process that holds the connections so that a worker that dies
(``kill -9``, out of memory) cannot take the connections with it: its pass fails with
:class:`WorkerLostError` (the requests get 503) and a new worker takes its place. This module does
not import torch.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.process import BaseProcess
from typing import Any

from docgraph.config.errors import DocgraphError
from docgraph.config.serve import ServeConfig
from docgraph.runtime.lifetime import run_child
from docgraph.serve.batcher import PassDocument

__all__ = ["TaggingFailedError", "WorkerLostError", "WorkerPool"]

log = logging.getLogger(__name__)

#: The worker's entry point (imported only in the worker: it loads torch).
_WORKER_MAIN = "docgraph.serve.worker:main"

#: Seconds between two starts of a worker in the same place, after one died.
_RESTART_PAUSE = 1.0

#: Seconds a worker gets to leave after it was told to, before it is killed.
_STOP_GRACE = 5.0


class WorkerLostError(DocgraphError, RuntimeError):
    """The worker tagging a pass ended before answering (killed, out of memory)."""


class TaggingFailedError(DocgraphError, RuntimeError):
    """The worker could not tag a pass (the reason is in the worker's log)."""


class _Worker:
    """One worker process and the front's end of its pipe."""

    def __init__(self, place: int, config: ServeConfig) -> None:
        context = multiprocessing.get_context("spawn")
        self.place = place
        self.conn, child = context.Pipe()
        self.process: BaseProcess = context.Process(
            target=run_child, args=(os.getpid(), signal.SIGKILL, _WORKER_MAIN, child, config),
            name=f"docgraph serve worker {place}", daemon=True)
        self.process.start()
        child.close()  # the pipe ends (EOF) when the worker does
        self.card: dict[str, Any] | None = None

    def wait_ready(self) -> dict[str, Any]:
        """Block until the worker has loaded and warmed the model; its model card."""
        try:
            kind, payload = self.conn.recv()
        except (EOFError, OSError):
            raise WorkerLostError(f"worker {self.place} ended while loading the model") from None
        if kind != "ready":
            raise TaggingFailedError(f"worker {self.place} could not load the model: {payload}")
        self.card = payload
        return payload

    def exchange(self, documents: Sequence[PassDocument]) -> list[tuple[list[dict], int]]:
        """Send a pass, block until its answer."""
        try:
            self.conn.send(list(documents))
            kind, payload = self.conn.recv()
        except (EOFError, OSError):
            raise WorkerLostError(f"worker {self.place} (pid {self.process.pid}) ended during a "
                             "pass") from None
        if kind != "ok":
            raise TaggingFailedError(payload)
        return payload

    def stop(self) -> None:
        """Ask the worker to leave; kill it when it does not (once; later calls do nothing)."""
        if self.conn.closed:
            return
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.process.join(_STOP_GRACE)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        with contextlib.suppress(OSError):
            self.conn.close()


class WorkerPool:
    """``config.workers`` model workers, each tagging one pass at a time; a worker that dies is
    replaced.

    Args:
        config: The service's settings (the model, threads, precision, workers).
        on_ready: Called with the model card each time a worker is ready.
        on_restart: Called each time a worker is replaced.
        on_fatal: Called with the message when no worker could ever load the model.
    """

    def __init__(self, config: ServeConfig, on_ready: Callable[[dict], None],
                 on_restart: Callable[[], None], on_fatal: Callable[[str], None]) -> None:
        self.config = config
        self._on_ready, self._on_restart, self._on_fatal = on_ready, on_restart, on_fatal
        self._threads = ThreadPoolExecutor(max_workers=2 * config.workers,
                                           thread_name_prefix="docgraph-serve-pipe")
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._workers: dict[int, _Worker] = {}
        self._ever_ready = False
        self._closing = False
        self._tasks: set[asyncio.Task] = set()

    @property
    def ready(self) -> int:
        """How many workers have the model loaded and warmed."""
        return sum(1 for w in self._workers.values() if w.card is not None
                   and w.process.is_alive())

    def start(self) -> None:
        """Start every worker (the model loads in the background)."""
        for place in range(self.config.workers):
            self._spawn(place, pause=0.0)

    def _spawn(self, place: int, pause: float) -> None:
        task = asyncio.get_running_loop().create_task(self._bring_up(place, pause))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _bring_up(self, place: int, pause: float) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(pause)
        if self._closing:
            return
        worker = await loop.run_in_executor(self._threads, _Worker, place, self.config)
        self._workers[place] = worker
        try:
            card = await loop.run_in_executor(self._threads, worker.wait_ready)
        except (WorkerLostError, TaggingFailedError) as err:
            self._workers.pop(place, None)
            await loop.run_in_executor(self._threads, worker.stop)
            if self._closing:
                return
            if not self._ever_ready:
                self._on_fatal(str(err))
                return
            log.error("%s; starting it again", err)
            self._spawn(place, _RESTART_PAUSE)
            return
        self._ever_ready = True
        log.info("worker %d (pid %d) ready", place, worker.process.pid)
        self._on_ready(card)
        self._idle.put_nowait(worker)

    async def acquire(self) -> _Worker:
        """The next idle worker that is alive (waiting for one), to :meth:`run` a pass on."""
        worker = await self._idle.get()
        while not worker.process.is_alive():  # died while idle
            self._replace(worker)
            worker = await self._idle.get()
        return worker

    async def run(self, worker: _Worker, documents: Sequence[PassDocument]
                  ) -> list[tuple[list[dict], int]]:
        """Tag a pass on ``worker`` (from :meth:`acquire`), then give the worker back.

        Raises:
            WorkerLostError: The worker ended during the pass (it is being replaced).
            TaggingFailedError: The worker could not tag the pass.
        """
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(self._threads, worker.exchange, documents)
        except WorkerLostError:
            self._replace(worker)
            raise
        except TaggingFailedError:
            self._idle.put_nowait(worker)
            raise
        self._idle.put_nowait(worker)
        return result

    def _replace(self, worker: _Worker) -> None:
        """Start a worker in the place of ``worker``, which ended."""
        worker.process.join(_STOP_GRACE)
        log.error("worker %d (pid %d) ended (exit %s); starting it again", worker.place,
                  worker.process.pid, worker.process.exitcode)
        with contextlib.suppress(OSError):
            worker.conn.close()
        if self._workers.get(worker.place) is worker:
            del self._workers[worker.place]
        self._on_restart()
        self._spawn(worker.place, 0.0)

    async def close(self) -> None:
        """Stop every worker and the threads that talk to them."""
        self._closing = True
        for task in list(self._tasks):
            task.cancel()
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(self._threads, w.stop)
                               for w in list(self._workers.values())))
        self._workers.clear()
        self._threads.shutdown(wait=False, cancel_futures=True)
