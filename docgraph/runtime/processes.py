"""Worker processes: the process group of a data-parallel run (``torchrun`` or a built-in
launcher, gloo on CPU), its workers and how they end, and the process pool of tagging.

On a CPU machine the LSTMs that dominate GCDoc's cost parallelise poorly over intra-op
threads (their time steps are sequential, their matrix products small), so ``scripts/train.py``
uses every core by running one single-threaded process per core, each on its own share of
every batch, with gradients averaged by :class:`~torch.nn.parallel.DistributedDataParallel`
(see :func:`default_processes` and ``docs/experiments.md``, "Both cores").
"""

from __future__ import annotations

import atexit
import datetime
import gc
import importlib
import json
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import re
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NoReturn

import torch
import torch.distributed as dist

from docgraph.config.errors import DocgraphError
from docgraph.config.fields import available_cores
from docgraph.config.tagging import (
    BASELINE_MIN_TOKENS_PER_TAGGING_PROCESS,
    MAX_AUTO_TAGGING_PROCESSES,
    MIN_TOKENS_PER_TAGGING_PROCESS,
)
from docgraph.runtime.lifetime import (
    exit_status,
    leave_now,
    leaving,
    process_alive,
    received_signal,
    reference,
    resolve,
    run_child,
    sigint_blocked,
    signal_name,
    start_pool_process,
    stop_on_signals,
    unblock_sigint,
)

log = logging.getLogger("docgraph")

#: Seconds the processes of :func:`spawn` get to stop after Ctrl-C or SIGTERM (they save
#: nothing half-written: every file is written atomically) before they are killed.
INTERRUPT_GRACE = 20.0

#: How long a process waits at a collective: the first process may spend a long time alone
#: before the others join it (computing and caching ``--lm`` features of a large corpus took
#: 27 minutes for OntoNotes on one CPU thread), longer than torch's default of 30 minutes.
COLLECTIVE_TIMEOUT = datetime.timedelta(hours=6)


def _import_before_the_group() -> None:
    """Import ``torch._dynamo`` before the process group exists: imported later (by the
    DDP wrapper's constructor) it keeps a reference to the group for good (torch 2.13), and
    the group's gloo threads then outlive ``destroy_process_group`` into the interpreter's
    shutdown, where they can end the process with a C++ abort."""
    with suppress(ImportError):
        importlib.import_module("torch._dynamo")


def init_distributed(device: str = "auto") -> None:
    """Initialise the default process group from the ``torchrun`` environment."""
    if dist.is_initialized():
        return
    _import_before_the_group()
    use_cuda = device != "cpu" and torch.cuda.is_available()
    backend = "nccl" if use_cuda else "gloo"
    if use_cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend=backend, timeout=COLLECTIVE_TIMEOUT)


def cleanup_distributed() -> None:
    """Destroy the process group if one is up (after collecting the garbage: nothing left in
    a reference cycle may hold the group past its end)."""
    if dist.is_initialized():
        gc.collect()
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


class ProcessError(DocgraphError):
    """The clean failure of a process of :func:`spawn`: its one-line message and the exit
    status the command should end with (2: bad input, 1: anything else). The process
    itself prints nothing; :func:`spawn` raises it in the launcher as a
    :class:`ProcessFailedError`."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


class ProcessFailedError(DocgraphError, RuntimeError):
    """A process of :func:`spawn` failed: the first failure of any of them.

    ``str()`` says in one line which process and how: its error (:class:`ProcessError`, or
    another exception), the signal that killed it or its exit status.

    Attributes:
        rank: The process that failed first.
        pid: Its process id.
        status: The exit status the command should end with.
        detail: The process's own error message (``None`` for a process killed or ended
            without one).
        traceback: The traceback of an unexpected exception (``None`` for a
            :class:`ProcessError`, a signal or an exit status).
        signal: The signal that ended it, if one did.
    """

    def __init__(self, message: str, rank: int, pid: int | None, status: int, *,
                 detail: str | None = None, traceback: str | None = None,
                 signal: int | None = None) -> None:
        super().__init__(message)
        self.rank, self.pid, self.status = rank, pid, status
        self.detail, self.traceback, self.signal = detail, traceback, signal


#: Seconds the other processes get to stop (as after Ctrl-C) once one of them failed, before
#: they are killed.
FAILURE_GRACE = 10.0

#: Words of the errors a process gets from a collective when another process of the group has
#: gone: consequences of another failure, never its cause.
PEER_ERRORS = ("closed by peer", "reset by peer", "broken pipe", "connection refused",
               "socket closed", "connection closed")


def _is_peer_error(err: BaseException) -> bool:
    """Whether ``err`` is what a collective raises when another process has gone."""
    text = str(err).lower()
    return isinstance(err, RuntimeError) and any(words in text for words in PEER_ERRORS)


def _one_line(err: BaseException) -> str:
    """``"Type: first line of the message"``."""
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__


def _record(records: Path, rank: int, **fields: Any) -> None:
    """Write a process's failure record for the launcher (``<rank>.json``, whole or not at
    all)."""
    path = records / f"{rank}.json"
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps({"rank": rank, "time": time.time(), **fields}))
        os.replace(tmp, path)
    except OSError:  # the launcher's temporary directory is gone: nobody to tell
        pass


def _worker(rank: int, world: int, port: int, threads: int, records: str, fn: str,
            args: tuple) -> None:
    """One process of :func:`spawn` (started by :func:`~docgraph.runtime.lifetime.run_child`,
    so it ends with the launcher): run ``fn`` (``"module:function"``) in the group; SIGTERM
    stops it as Ctrl-C does; a failure is written to ``records`` for the launcher and ends
    the process with its exit status, without a traceback."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world))
    with stop_on_signals():
        try:
            status = _run_in_group(rank, world, threads, Path(records), fn, args)
        except KeyboardInterrupt:  # a signal before the process knew it was leaving
            status = exit_status()
    _exit_now(status)


def _exit_now(status: int) -> NoReturn:
    """End a worker whose work and group are done: its exit handlers run, then it leaves
    without the interpreter's tear-down (:func:`~docgraph.runtime.lifetime.leave_now`)."""
    atexit._run_exitfuncs()
    leave_now(status)


def _run_in_group(rank: int, world: int, threads: int, records: Path, fn: str,
                  args: tuple) -> int:
    """:func:`_worker` under :func:`stop_on_signals`: its exit status."""
    status, grouped = 0, False
    try:
        unblock_sigint()  # blocked while the process started (spawn)
        torch.set_num_threads(threads)
        function = resolve(fn)
        _import_before_the_group()
        dist.init_process_group("gloo", rank=rank, world_size=world,
                                timeout=COLLECTIVE_TIMEOUT)
        grouped = True
        function(*args)
        # Leave together: the first process hosts the group's store, and one that tore the
        # group down while another still talked to it could end that one with a C++ abort at
        # exit. After a failure there is no waiting: the parent stops the others.
        dist.barrier()
        leaving()
        (records / f"{rank}.done").touch()
    except KeyboardInterrupt:
        leaving()
        signum = received_signal() or signal.SIGINT
        status = exit_status(signum)
        _record(records, rank, signal=int(signum), status=status,
                message=f"stopped by {signal_name(signum)}")
    except ProcessError as err:
        leaving()
        status = err.status
        _record(records, rank, message=str(err), status=status)
    except Exception as err:
        leaving()
        status, peer = 1, _is_peer_error(err)
        _record(records, rank, message=_one_line(err), status=status, peer=peer,
                traceback=None if peer else traceback.format_exc())
    finally:
        leaving()
        if grouped:
            # Nothing may hold the group past its end: a DDP wrapper kept alive by a reference
            # cycle keeps gloo's threads running into the interpreter's shutdown, where they
            # end the process with "terminate called without an active exception".
            gc.collect()
            dist.destroy_process_group()
    return status


def spawn(fn: Callable[..., Any], processes: int, *args: Any, threads: int = 1,
          name: str = "process") -> None:
    """Run ``fn(*args)`` in ``processes`` CPU processes joined in a gloo process group.

    Each process gets ``threads`` intra-op threads and the usual ``RANK``/``WORLD_SIZE``
    environment; ``fn`` must be a module-level function and ``args`` picklable. The
    processes end with this one, whatever ends it, even while they still import torch
    (:func:`~docgraph.runtime.lifetime.run_child`). On Ctrl-C (or SIGTERM, under
    :func:`~docgraph.runtime.lifetime.stop_on_signals`) the processes are given
    :data:`INTERRUPT_GRACE` seconds to stop, then killed, and :class:`KeyboardInterrupt` is
    raised here. A process that ends with a signal after every process had finished ``fn``
    (a crash in the interpreter's shutdown) is reported with a warning: the run is whole.

    Args:
        fn: The function.
        processes: How many processes.
        args: Its arguments.
        threads: Intra-op threads of each process.
        name: What a process is called in messages (``"training process"``).

    Raises:
        ProcessFailedError: A process failed; the first failure of any process (an error
            raised by ``fn`` comes before the errors it caused in the others).
    """
    remove_stale_records()
    start_resource_tracker()
    records = Path(tempfile.mkdtemp(prefix=f"{RECORDS_PREFIX}{os.getpid()}-"))
    context = multiprocessing.get_context("spawn")
    port = free_port()
    started: list[Any] = []
    try:
        try:
            with sigint_blocked():  # a Ctrl-C now comes after the processes have started
                for rank in range(processes):
                    process = context.Process(
                        target=run_child, name=f"{name} {rank}",
                        args=(os.getpid(), signal.SIGTERM, reference(_worker), rank, processes,
                              port, threads, str(records), reference(fn), args))
                    process.start()
                    started.append(process)
            first = _first_failure(started)
            if first is None:
                return
            stopping = time.time()
            ended = [i for i, process in enumerate(started) if not process.is_alive()]
            _stop_processes(started, FAILURE_GRACE)
        except BaseException:  # Ctrl-C, SIGTERM (stop_on_signals)
            _stop_processes(started)
            raise
        failure = _failure(started, first, ended, records, stopping, name)
        if failure is None:
            return
        if failure.signal == signal.SIGINT and failure.detail is not None:
            raise KeyboardInterrupt  # a Ctrl-C the process got before this one
        raise failure
    finally:
        shutil.rmtree(records, ignore_errors=True)


#: The prefix of the directories in which :func:`spawn`'s processes leave their records.
RECORDS_PREFIX = "docgraph-spawn-"


def remove_stale_records(directory: str | Path | None = None) -> list[Path]:
    """Remove the record directories of :func:`spawn` (in ``directory``, by default the
    temporary directory) whose launcher is no longer alive (one killed with SIGKILL could not
    remove its own); returns them."""
    base = Path(directory or tempfile.gettempdir())
    pattern = re.compile(re.escape(RECORDS_PREFIX) + r"(?:(\d+)-)?[a-z0-9_]{8}")
    removed = []
    for path in base.glob(f"{RECORDS_PREFIX}*"):
        match = pattern.fullmatch(path.name)
        if match is None or not path.is_dir():
            continue
        if match.group(1) is not None and process_alive(int(match.group(1))):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _first_failure(processes: Sequence[Any]) -> int | None:
    """Wait for the processes to end; the index of the first that fails (exit status other
    than 0), or ``None`` when all succeed."""
    pending = {process.sentinel: i for i, process in enumerate(processes)}
    while pending:
        for sentinel in multiprocessing.connection.wait(list(pending)):
            index = pending.pop(sentinel)
            processes[index].join()
            if processes[index].exitcode != 0:
                return index
    return None


def _failure(processes: Sequence[Any], first: int, ended: Sequence[int], records: Path,
             stopping: float, name: str) -> ProcessFailedError | None:
    """What :func:`spawn` reports once process ``first`` failed and the others were stopped
    (from ``stopping`` on; ``ended`` had ended by then): the earliest failure a process wrote
    down that is not the consequence of another's (a collective that lost its peer) nor of
    being stopped; else the death of a process that could write nothing (a signal); else the
    lost peer. ``None`` when every process had finished (a crash at exit)."""
    found: dict[int, dict[str, Any]] = {}
    for rank in range(len(processes)):
        with suppress(OSError, ValueError):
            found[rank] = json.loads((records / f"{rank}.json").read_text())
    if all((records / f"{rank}.done").exists() for rank in range(len(processes))):
        process = processes[first]
        log.warning("%s %d (pid %s) %s after the run had finished; the run's files are whole",
                    name, first, process.pid, _how(process.exitcode))
        return None
    causes = sorted((r for r in found.values() if not r.get("peer") and r["time"] < stopping),
                    key=lambda r: r["time"])
    silent = [i for i in (first, *ended) if i not in found and processes[i].exitcode]
    if not causes and silent:
        process = processes[silent[0]]
        code = process.exitcode
        how = _how(code)
        if code == -signal.SIGKILL:
            how += " (as the out-of-memory killer does; see dmesg)"
        return ProcessFailedError(f"{name} {silent[0]} (pid {process.pid}) {how}", silent[0],
                                  process.pid, 1 if code < 0 else code,
                                  signal=-code if code < 0 else None)
    chosen = causes[0] if causes else found.get(first) or min(found.values(),
                                                                key=lambda r: r["time"])
    rank = int(chosen["rank"])
    pid = processes[rank].pid
    return ProcessFailedError(f"{name} {rank} (pid {pid}): {chosen['message']}", rank, pid,
                              int(chosen.get("status", 1)), detail=chosen["message"],
                              traceback=chosen.get("traceback"), signal=chosen.get("signal"))


def _how(exitcode: int) -> str:
    """``"was killed by SIGKILL"`` or ``"exited with status 3"``."""
    if exitcode < 0:
        return f"was killed by {signal_name(-exitcode)}"
    return f"exited with status {exitcode}"


def _stop_processes(processes: Sequence[Any], grace: float = INTERRUPT_GRACE) -> None:
    """Send SIGTERM to the processes still running (they stop as after Ctrl-C, which a
    terminal may have sent them already), give them ``grace`` seconds, then kill those still
    running."""
    for process in processes:
        if process.is_alive():
            with suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
    _join(processes, grace)
    for process in processes:
        if process.is_alive():
            process.kill()
        process.join()


def _join(processes: Sequence[Any], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))


class WorkerError(DocgraphError, RuntimeError):
    """A process of a :func:`process_pool` died without raising an exception."""


def dead_pool_process(pool: ProcessPoolExecutor, name: str = "process") -> str:
    """Which process of a broken ``pool`` died and how, e.g. ``"tagging process 4711 was
    killed by SIGKILL"`` (the pool stops the others itself, with SIGTERM)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        process.join(1.0)
    ended = [p for p in processes if p.exitcode not in (None, 0)]
    chosen = next((p for p in ended if p.exitcode != -signal.SIGTERM), None) or \
        next(iter(ended), None)
    if chosen is None:
        return f"a {name} died"
    return f"{name} {chosen.pid} {_how(chosen.exitcode)}"


def tagging_processes(num_tokens: int, device: str | torch.device = "cpu",
                      requested: int = 0, cores: int | None = None,
                      min_tokens: int = MIN_TOKENS_PER_TAGGING_PROCESS) -> int:
    """How many processes tag ``num_tokens`` tokens.

    Args:
        num_tokens: Tokens to tag.
        device: Where the model runs; tagging on CUDA always uses one process.
        requested: ``0`` (auto): one per core (at most
            :data:`MAX_AUTO_TAGGING_PROCESSES`) when every process gets at least
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
    return max(1, min(MAX_AUTO_TAGGING_PROCESSES, cores, num_tokens // max(1, min_tokens)))


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


class _Pool(ProcessPoolExecutor):
    """A process pool whose processes start with SIGINT blocked (:func:`sigint_blocked`)."""

    def _spawn_process(self) -> None:
        with sigint_blocked():
            super()._spawn_process()  # type: ignore[misc]


@contextmanager
def process_pool(workers: int, initializer: Callable[..., Any] | None = None,
                 initargs: tuple = (), shared: tuple = ()) -> Iterator[ProcessPoolExecutor]:
    """A :class:`~concurrent.futures.ProcessPoolExecutor` of ``workers`` fresh (spawned)
    processes that end with this one, whatever ends it, even while they still import torch
    (:func:`~docgraph.runtime.lifetime.start_pool_process`); Ctrl-C is this process's to act
    on. When the block raises (an error, Ctrl-C, SIGTERM, a generator closed early) they are
    killed at once instead of finishing the work submitted to them.

    Args:
        workers: How many processes.
        initializer: Run first in each process as ``initializer(*initargs, *shared)``.
        initargs: Its picklable arguments (unpickled after the process is set to end with
            this one).
        shared: Arguments that go to a process only as it is started
            (``multiprocessing.Value``).
    """
    payload = pickle.dumps((initializer, initargs))
    start_resource_tracker()
    pool = _Pool(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                 initializer=start_pool_process, initargs=(os.getpid(), payload, *shared))
    try:
        yield pool
    except BaseException:
        _kill_pool(pool)
        raise
    pool.shutdown()


#: The warning option that silences the resource tracker's count of leaked objects.
_QUIET_TRACKER = "ignore::UserWarning:multiprocessing.resource_tracker"


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (once per process) without its warning about
    leaked semaphores: after a SIGKILL of this process it still removes the semaphores of the
    process pool, and the warning would only tell the user of objects already cleaned up."""
    from multiprocessing import resource_tracker

    added = _QUIET_TRACKER not in sys.warnoptions
    if added:
        sys.warnoptions.append(_QUIET_TRACKER)  # passed to the tracker as -W
    try:
        resource_tracker.ensure_running()
    finally:
        if added:
            sys.warnoptions.remove(_QUIET_TRACKER)


def pool_result(pool: ProcessPoolExecutor, future: Future, poll: float = 0.5) -> Any:
    """The result of ``future``, submitted to ``pool``; :class:`BrokenProcessPool` as soon as
    a process of the pool has died.

    The pool notices a death by itself unless the process died while it wrote a result: the
    pool's reader then waits for the rest of that result forever, so the processes are
    checked every ``poll`` seconds as well.
    """
    while True:
        try:
            return future.result(timeout=poll)
        except FutureTimeout:
            if any(p.exitcode is not None
                   for p in (getattr(pool, "_processes", None) or {}).values()):
                raise BrokenProcessPool("a process of the pool died") from None


def _kill_pool(pool: ProcessPoolExecutor) -> None:
    """Kill the processes of ``pool`` and shut it down, dropping the work not done."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with suppress(ProcessLookupError, AttributeError):
            process.kill()
    for process in processes:
        process.join(5.0)
    # A process killed while it wrote a result leaves the pool's reader waiting for the rest;
    # with every writer gone (this process holds the last one) the reader sees the end.
    with suppress(AttributeError, OSError):
        pool._result_queue._writer.close()  # type: ignore[attr-defined]
    pool.shutdown(wait=True, cancel_futures=True)
