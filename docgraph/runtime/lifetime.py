"""Process lifetimes: worker processes that end with their parent, SIGTERM taken as Ctrl-C.

A worker process (a training process of :func:`~docgraph.runtime.processes.spawn`, a tagging
process) calls :func:`die_with_parent` first: on Linux the kernel sends it a signal when its
parent ends (``prctl(PR_SET_PDEATHSIG)``), whatever ended the parent (``kill -9`` too), and a
watchdog thread ends it for good a few seconds later if that signal was not acted on. The
workers start in :func:`run_child` or :func:`start_pool_process`, which import nothing heavy
before that: a parent killed while its workers still import torch takes them with it.

:func:`stop_on_signals` makes SIGTERM raise :class:`KeyboardInterrupt` as Ctrl-C does, so that
``kill PID`` (what a batch system or ``timeout`` sends) stops a script as cleanly as Ctrl-C;
:func:`received_signal` says which of the two it was.

This module does not import torch.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib
import logging
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, NoReturn

__all__ = ["ORPHAN_GRACE", "die_with_parent", "exit_status", "interruption", "leave_now",
           "leaving", "received_signal",
           "reference", "resolve", "restore_handlers", "run_child", "set_parent_death_signal",
           "sigint_blocked", "signal_name", "start_pool_process", "stop_on_signals",
           "unblock_sigint"]

#: Seconds a worker whose parent ended gets to stop by itself before it exits at once.
ORPHAN_GRACE = 5.0

#: Seconds between two checks of the watchdog that the parent is still there.
_POLL = 0.5

#: Exit status of a worker that ends because its parent is gone.
_ORPHANED = 128 + signal.SIGTERM

_PR_SET_PDEATHSIG = 1

_received: int | None = None


def set_parent_death_signal(signum: int) -> bool:
    """Have the kernel send ``signum`` to this process when its parent ends (Linux ``prctl``,
    for the parent thread that started it); whether that could be arranged."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(parent: int, signum: int = signal.SIGTERM,
                    grace: float = ORPHAN_GRACE) -> None:
    """End this worker process with its parent, the process ``parent`` (a pid).

    The kernel sends ``signum`` when the parent ends (:func:`set_parent_death_signal`); a
    daemon thread ends the process with ``os._exit`` ``grace`` seconds after the parent is
    gone, in case the signal was not acted on (its handler runs only when the main thread is
    back in Python). A parent that ended before the signal was armed ends the process at once.
    """
    set_parent_death_signal(signum)
    if os.getppid() != parent:
        os._exit(_ORPHANED)
    threading.Thread(target=_watch_parent, args=(parent, grace), daemon=True,
                     name="docgraph parent watch").start()


def _watch_parent(parent: int, grace: float) -> None:
    while os.getppid() == parent:
        time.sleep(_POLL)
    time.sleep(grace)
    os._exit(_ORPHANED)


_leaving = False


def _interrupt(signum: int, frame: Any) -> None:
    """Raise :class:`KeyboardInterrupt` for the first SIGINT or SIGTERM; later ones, and any
    once the process is on its way out (:func:`leaving`), are ignored, so that the clean-up
    under way is not cut short."""
    global _received
    if _received is not None or _leaving:
        return
    _received = signum
    raise KeyboardInterrupt


def leaving() -> None:
    """Say that this process is on its way out (its work ended, with or without an error):
    from now on :func:`stop_on_signals` lets SIGINT and SIGTERM interrupt nothing."""
    global _leaving
    _leaving = True


def received_signal() -> int | None:
    """The signal (SIGINT or SIGTERM) that :func:`stop_on_signals` turned into
    :class:`KeyboardInterrupt`, or ``None``."""
    return _received


def exit_status(default: int = signal.SIGINT) -> int:
    """The exit status of a process stopped by a signal: 128 plus the signal
    (:func:`received_signal`, else ``default``): 130 for Ctrl-C, 143 for SIGTERM."""
    return 128 + int(_received or default)


def interruption() -> str:
    """How :func:`stop_on_signals` stopped the block: ``"interrupted"`` after Ctrl-C,
    ``"stopped by SIGTERM"`` after SIGTERM."""
    signum = received_signal()
    return "interrupted" if signum in (None, signal.SIGINT) else f"stopped by {signal_name(signum)}"


def signal_name(signum: int) -> str:
    """``"SIGKILL"`` for 9, and so on (``"signal N"`` for an unknown one)."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def restore_handlers(previous: dict[int, Any]) -> None:
    """Put back the signal handlers of ``previous`` (signal -> handler, as
    :func:`signal.signal` returned them; ``None``, set outside Python, is left alone)."""
    for signum, handler in previous.items():
        if handler is not None:
            signal.signal(signum, handler)


#: Seconds before a signal whose interrupt Python dropped is sent again (:func:`_send_again`).
_RESEND_DELAY = 0.05


def _send_again(signum: int) -> None:
    """Send ``signum`` to the main thread again, once the callback that dropped its
    interrupt has returned."""
    time.sleep(_RESEND_DELAY)
    with suppress(ProcessLookupError):
        signal.pthread_kill(threading.main_thread().ident, signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`KeyboardInterrupt` in the main thread as
    Ctrl-C does (and so does SIGINT, unless it is ignored, as in a background job of a
    script); :func:`received_signal` tells them apart. Elsewhere than in the main thread the
    block just runs.

    A signal that arrives while the main thread runs a finaliser or a weakref callback raises
    there, where Python prints the exception and drops it: such an interrupt is sent again
    (silently, from a short-lived thread) so that it still stops the block."""
    global _received, _leaving
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received, _leaving = None, False
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    previous_hook = sys.unraisablehook

    def interrupt_again(unraisable: Any) -> None:
        global _received
        signum = _received
        if signum is None or _leaving or not issubclass(unraisable.exc_type, KeyboardInterrupt):
            previous_hook(unraisable)
            return
        _received = None  # so that the signal sent again raises
        threading.Thread(target=_send_again, args=(signum,), daemon=True,
                         name="docgraph signal again").start()

    signal.signal(signal.SIGTERM, _interrupt)
    if previous[signal.SIGINT] is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt)
    sys.unraisablehook = interrupt_again
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        restore_handlers(previous)


@contextmanager
def sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while the block runs (a Ctrl-C then is delivered after
    it): processes started in the block start with SIGINT blocked (the mask survives
    ``exec``), so that a Ctrl-C while one is still importing cannot end it with a traceback;
    the process unblocks it once it has its own handler (:func:`unblock_sigint`)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def unblock_sigint() -> None:
    """Unblock SIGINT (blocked by the parent, :func:`sigint_blocked`) in this thread."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def reference(function: Callable[..., Any]) -> str:
    """``"module:name"`` of a module-level function, for :func:`resolve` in another process
    (which imports the module only then)."""
    return f"{function.__module__}:{function.__qualname__}"


def resolve(name: str) -> Callable[..., Any]:
    """The function :func:`reference` named."""
    module, _, qualname = name.partition(":")
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def run_child(parent: int, signum: int, target: str, *args: Any) -> Any:
    """The target of a spawned worker process: end with ``parent`` (:func:`die_with_parent`
    with ``signum``), then import and call ``target`` (:func:`reference`) with ``args``."""
    die_with_parent(parent, signum)
    return resolve(target)(*args)


def leave_now(status: int = 0) -> NoReturn:
    """End this worker process now that its work is done: its logging handlers flushed and
    closed and its standard streams flushed, then ``os._exit(status)``, as a forked process
    leaves, without the interpreter's tear-down of torch and its threads (over a second per
    process, and where a C++ abort at exit came from)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    os._exit(status)


def start_pool_process(parent: int, payload: bytes, *shared: Any) -> None:
    """The initializer of a process of a process pool: Ctrl-C is left to the parent (which
    stops the pool: no traceback per process), the process ends with ``parent`` (SIGKILL: a
    pool process writes nothing) and, once the pool lets it go, leaves at once
    (:func:`leave_now`, the first of its exit handlers; its results are sent by then), then
    ``initializer(*initargs, *shared)`` runs, ``payload`` being the pickled
    ``(initializer, initargs)`` (unpickled only now: it may import torch)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    unblock_sigint()  # blocked while the process started
    die_with_parent(parent, signal.SIGKILL)
    atexit.register(leave_now)
    initializer, initargs = pickle.loads(payload)
    if initializer is not None:
        initializer(*initargs, *shared)


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
