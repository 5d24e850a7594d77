"""Multi-process data-parallel training: ``torchrun`` or a built-in launcher (gloo on CPU).

On a CPU machine the LSTMs that dominate GCDoc's cost parallelise poorly over intra-op
threads (their time steps are sequential, their matrix products small), so ``scripts/train.py``
uses every core by running one single-threaded process per core, each on its own share of
every batch, with gradients averaged by :class:`~torch.nn.parallel.DistributedDataParallel`
(see :func:`default_processes` and ``docs/experiments.md``, "Both cores").
"""

from __future__ import annotations

import datetime
import multiprocessing
import os
import signal
import socket
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import torch
import torch.distributed as dist

from docgraph.config.fields import available_cores
from docgraph.runtime import progress as _progress

#: Seconds the processes of :func:`spawn` get to stop by themselves after Ctrl-C (they save
#: nothing half-written: every file is written atomically) before they are terminated.
INTERRUPT_GRACE = 20.0

#: How long a process waits at a collective: the first process may spend a long time alone
#: before the others join it (computing and caching ``--lm`` features of a large corpus took
#: 27 minutes for OntoNotes on one CPU thread), longer than torch's default of 30 minutes.
COLLECTIVE_TIMEOUT = datetime.timedelta(hours=6)


def init_distributed(device: str = "auto") -> None:
    """Initialise the default process group from the ``torchrun`` environment."""
    if dist.is_initialized():
        return
    use_cuda = device != "cpu" and torch.cuda.is_available()
    backend = "nccl" if use_cuda else "gloo"
    if use_cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend=backend, timeout=COLLECTIVE_TIMEOUT)


def cleanup_distributed() -> None:
    """Destroy the process group if one is up."""
    if dist.is_initialized():
        dist.destroy_process_group()


def world_and_rank() -> tuple[int, int]:
    """The number of processes of the process group and this one's rank (``(1, 0)`` without
    a group)."""
    if dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def is_main_process() -> bool:
    """Whether this process writes the run's files: rank 0, or the only process."""
    return world_and_rank()[1] == 0


def launched_by_torchrun() -> bool:
    """Whether this process is one of several started by ``torchrun``."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def default_processes(device: str, cores: int | None = None) -> int:
    """How many training processes ``scripts/train.py`` starts when ``--processes 0`` (auto).

    One process per core (at most 2, the machines this project is measured on) on a CPU
    device; one process on CUDA (a single process uses the whole GPU).

    Args:
        device: ``"auto"``, ``"cpu"`` or ``"cuda"``.
        cores: Cores available (default: :func:`available_cores`).
    """
    if device == "cuda" or (device == "auto" and torch.cuda.is_available()):
        return 1
    cores = available_cores() if cores is None else cores
    return max(1, min(2, cores))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (for a gloo rendezvous or ``torchrun``)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _worker(rank: int, world: int, port: int, threads: int,
            fn: Callable[..., Any], args: tuple) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world))
    torch.set_num_threads(threads)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=COLLECTIVE_TIMEOUT)
    try:
        fn(*args)
        # Leave together: the first process hosts the group's store, and one that tore the
        # group down while another still talked to it could end that one with a C++ abort at
        # exit ("terminate called without an active exception"). After a failure there is no
        # waiting: the parent stops the other processes.
        dist.barrier()
    finally:
        dist.destroy_process_group()


def spawn(fn: Callable[..., Any], processes: int, *args: Any, threads: int = 1) -> None:
    """Run ``fn(*args)`` in ``processes`` CPU processes joined in a gloo process group.

    Each process gets ``threads`` intra-op threads and the usual ``RANK``/``WORLD_SIZE``
    environment; ``fn`` and ``args`` must be picklable (a module-level function). Raises
    :class:`torch.multiprocessing.ProcessRaisedException` if a process fails. On Ctrl-C the
    processes are given :data:`INTERRUPT_GRACE` seconds to stop, then terminated, and
    :class:`KeyboardInterrupt` is raised here.
    """
    context = torch.multiprocessing.start_processes(
        _worker, args=(processes, free_port(), threads, fn, args), nprocs=processes,
        join=False, start_method="spawn")
    try:
        while not context.join():
            pass
    except KeyboardInterrupt:
        _stop_processes(context.processes)
        raise


def _stop_processes(processes: Sequence[Any], grace: float = INTERRUPT_GRACE) -> None:
    """After Ctrl-C: let the processes stop (a terminal's Ctrl-C reached them too; a signal
    sent to this process alone is passed on), then terminate those still running."""
    for process in processes:
        if process.is_alive():
            os.kill(process.pid, signal.SIGINT)
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
            process.join(5.0)


class WorkerError(RuntimeError):
    """A process of :func:`map_in_processes` died without raising an exception."""


MIN_TOKENS_PER_TAGGING_PROCESS = 20_000
"""Automatic tagging shares a GCDoc model's input out over several processes only when each
gets at least this many tokens: a process costs a few seconds to start (importing torch,
loading the model), which a smaller share does not win back (``docs/experiments.md``,
"Tagging on both cores")."""

BASELINE_MIN_TOKENS_PER_TAGGING_PROCESS = 160_000
"""The same for a model without graph and cross-sentence module (the BiLSTM-CRF), which tags
about 8x faster per token (``infer_cost_ratio`` of ``scripts/benchmark.py``)."""


def tagging_processes(num_tokens: int, device: str | torch.device = "cpu",
                      requested: int = 0, cores: int | None = None,
                      min_tokens: int = MIN_TOKENS_PER_TAGGING_PROCESS) -> int:
    """How many processes tag ``num_tokens`` tokens.

    Args:
        num_tokens: Tokens to tag.
        device: Where the model runs; tagging on CUDA always uses one process.
        requested: ``0`` (auto): one per core (at most 2) when every process gets at least
            ``min_tokens`` tokens, else 1; a positive number is taken as it is (capped by the
            number of tokens, at least 1).
        cores: Cores available (default: :func:`available_cores`).
        min_tokens: Fewest tokens per process for the automatic choice
            (:data:`MIN_TOKENS_PER_TAGGING_PROCESS`, or
            :data:`BASELINE_MIN_TOKENS_PER_TAGGING_PROCESS` for a BiLSTM-CRF).
    """
    if requested < 0:
        raise ValueError(f"processes must be >= 0 (0: automatic), got {requested}")
    if torch.device(device).type == "cuda":
        return 1
    if requested > 0:
        return max(1, min(requested, num_tokens))
    cores = available_cores() if cores is None else cores
    return max(1, min(2, cores, num_tokens // max(1, min_tokens)))


def min_tagging_tokens(graph: bool, cross_sentence: bool) -> int:
    """The ``min_tokens`` of :func:`tagging_processes` for a model with or without the
    document graph and the cross-sentence module."""
    if graph or cross_sentence:
        return MIN_TOKENS_PER_TAGGING_PROCESS
    return BASELINE_MIN_TOKENS_PER_TAGGING_PROCESS


def contiguous_shards(lengths: Sequence[int], parts: int) -> list[range]:
    """Split items into at most ``parts`` non-empty runs of consecutive items of about equal
    total length (each run ends where the running total first reaches its share).

    Concatenating the runs' results in order gives the result of the whole list, which is
    what tagging needs (outputs stay aligned with the input documents).
    """
    if parts < 1:
        raise ValueError(f"parts must be >= 1, got {parts}")
    total = sum(lengths)
    shards: list[range] = []
    start, running = 0, 0
    for i, length in enumerate(lengths):
        running += length
        if len(shards) < parts - 1 and running * parts >= total * (len(shards) + 1):
            shards.append(range(start, i + 1))
            start = i + 1
    if start < len(lengths):
        shards.append(range(start, len(lengths)))
    return shards


def _init_worker(threads: int, counter: Any) -> None:
    torch.set_num_threads(threads)
    _progress.report_to(counter)


def map_in_processes(fn: Callable[..., Any], arguments: Sequence[tuple], threads: int = 1,
                     progress: _progress.Progress | None = None) -> list[Any]:
    """``[fn(*args) for args in arguments]``, each call in its own fresh (spawned) process.

    Each process runs ``threads`` intra-op threads. ``fn`` must be a module-level function and
    its arguments and results picklable. An exception raised by ``fn`` is raised here.

    Args:
        fn: The function.
        arguments: One tuple of arguments per call.
        threads: Intra-op threads of each process.
        progress: Shows the sum of the counts of every :class:`~docgraph.runtime.progress.Progress`
            of the processes, polled twice a second (:func:`docgraph.runtime.progress.report_to`).

    Raises:
        WorkerError: A process died without raising (e.g. killed for memory).
    """
    if len(arguments) <= 1:
        return [fn(*args) for args in arguments]
    context = multiprocessing.get_context("spawn")
    counter = context.Value("q", 0)
    try:
        with ProcessPoolExecutor(max_workers=len(arguments), mp_context=context,
                                 initializer=_init_worker, initargs=(threads, counter)) as pool:
            futures = [pool.submit(fn, *args) for args in arguments]
            pending = set(futures)
            while pending:
                _, pending = wait(pending, timeout=0.5, return_when=FIRST_EXCEPTION)
                if progress is not None:
                    progress.update(counter.value - progress.n)
                if any(f.done() and f.exception() is not None for f in futures):
                    break
            return [future.result() for future in futures]
    except BrokenProcessPool as err:
        raise WorkerError(f"a worker process died unexpectedly ({err})") from None


def map_document_shards(fn: Callable[..., list], documents: Sequence[Any], processes: int,
                        *args: Any, progress: _progress.Progress | None = None) -> list:
    """``fn(documents, *args)`` computed on :func:`contiguous_shards` of the documents (by
    ``num_tokens``), one shard per process (:func:`map_in_processes`, which shows the
    processes' counts on ``progress``), results concatenated.

    ``fn`` must return one list per shard whose concatenation in shard order is its result on
    the whole list (one entry per document or per chunk of a document).
    """
    shards = contiguous_shards([d.num_tokens for d in documents], processes)
    results = map_in_processes(fn, [([documents[i] for i in shard], *args) for shard in shards],
                               progress=progress)
    return [item for shard_result in results for item in shard_result]
