"""Tests of :mod:`docgraph.runtime.lifetime`, in this process: SIGTERM taken as Ctrl-C, SIGINT
blocked while workers start, the parent-death signal, and how a worker is started (the
workers themselves are ``tests/test_processes.py``'s)."""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import sys
import threading
import time

import pytest
from conftest import ROOT, script_env

from docgraph.runtime import lifetime
from docgraph.runtime.lifetime import (
    exit_status,
    interruption,
    received_signal,
    reference,
    resolve,
    restore_handlers,
    run_child,
    sigint_blocked,
    signal_name,
    start_pool_process,
    stop_on_signals,
    unblock_sigint,
)

needs_sigmask = pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"),
                                   reason="no pthread_sigmask on this platform")
needs_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux prctl")

CALLS: list[tuple] = []


def record(*args):
    """A module-level function a worker can be told to run (by :func:`reference`)."""
    CALLS.append(args)
    return sum(args)


@pytest.fixture(autouse=True)
def _clean_state(monkeypatch):
    """Leave the module's flags and this process's handlers as they were; SIGTERM goes to a
    harmless handler, so that a broken :func:`stop_on_signals` fails a test, not the run."""
    monkeypatch.setattr(lifetime, "_received", None)
    monkeypatch.setattr(lifetime, "_leaving", False)
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    caught = []
    signal.signal(signal.SIGTERM, lambda signum, frame: caught.append(signum))
    CALLS.clear()
    yield caught
    restore_handlers(previous)


def _signal_self(signum):
    """Send ``signum`` to the main thread and give its handler the chance to run."""
    signal.pthread_kill(threading.main_thread().ident, signum)
    for _ in range(100):
        time.sleep(0.001)


@pytest.mark.parametrize(("signum", "name"), [
    (signal.SIGKILL, "SIGKILL"), (signal.SIGTERM, "SIGTERM"), (2, "SIGINT"), (999, "signal 999"),
])
def test_signal_name(signum, name):
    assert signal_name(signum) == name


def test_sigterm_in_the_block_is_a_keyboard_interrupt(_clean_state):
    fallback = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), stop_on_signals():
        _signal_self(signal.SIGTERM)
    assert received_signal() == signal.SIGTERM
    assert exit_status() == 128 + signal.SIGTERM == 143
    assert interruption() == "stopped by SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is fallback  # the handler is given back
    assert _clean_state == []  # the fallback never saw it


def test_later_signals_and_signals_while_leaving_interrupt_nothing(_clean_state):
    with stop_on_signals():
        with pytest.raises(KeyboardInterrupt):
            _signal_self(signal.SIGTERM)
        _signal_self(signal.SIGTERM)  # the clean-up under way is not cut short
    assert received_signal() == signal.SIGTERM
    with stop_on_signals():
        assert received_signal() is None  # a new block starts afresh
        lifetime.leaving()
        _signal_self(signal.SIGTERM)
    assert received_signal() is None and _clean_state == []


def test_an_interrupt_dropped_in_a_weakref_callback_still_stops_the_block(_clean_state, capsys):
    import weakref

    class Owner:
        pass

    def callback(_ref):  # the handler raises here, where Python prints and drops it
        _signal_self(signal.SIGTERM)

    owner = Owner()
    watch = weakref.ref(owner, callback)
    hook = sys.unraisablehook
    with pytest.raises(KeyboardInterrupt), stop_on_signals():
        del owner
        for _ in range(1000):  # the signal sent again, after the callback
            time.sleep(0.001)
    assert watch() is None and received_signal() == signal.SIGTERM
    assert "Exception ignored" not in capsys.readouterr().err
    assert sys.unraisablehook is hook and _clean_state == []


def test_ctrl_c_in_the_block_is_told_apart_from_sigterm():
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with pytest.raises(KeyboardInterrupt), stop_on_signals():
        _signal_self(signal.SIGINT)
    assert received_signal() == signal.SIGINT and exit_status() == 130
    assert interruption() == "interrupted"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_ignored_sigint_stays_ignored():
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a background job of a script
    with stop_on_signals():
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        _signal_self(signal.SIGINT)
    assert received_signal() is None


def test_exit_status_without_a_signal_is_the_default():
    assert exit_status() == 130
    assert exit_status(signal.SIGTERM) == 143


def test_outside_the_main_thread_the_block_just_runs():
    before = signal.getsignal(signal.SIGTERM)
    seen, errors = [], []

    def work():
        try:
            with stop_on_signals():
                seen.append(signal.getsignal(signal.SIGTERM))
        except Exception as err:  # signal.signal refuses other threads
            errors.append(err)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert errors == [] and seen == [before]


def test_restore_handlers_leaves_handlers_set_outside_python_alone():
    def mine(signum, frame):
        return None

    restore_handlers({signal.SIGTERM: mine, signal.SIGINT: None})
    assert signal.getsignal(signal.SIGTERM) is mine


def _blocked() -> bool:
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])


@needs_sigmask
def test_sigint_blocked_delivers_a_ctrl_c_after_the_block():
    caught = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    assert not _blocked()
    with sigint_blocked():
        assert _blocked()
        _signal_self(signal.SIGINT)
        assert caught == []  # pending
    for _ in range(100):
        if caught:
            break
        time.sleep(0.001)
    assert caught == [signal.SIGINT] and not _blocked()


@needs_sigmask
def test_unblock_sigint():
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        assert _blocked()
        unblock_sigint()
        assert not _blocked()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def test_reference_and_resolve_name_a_module_level_function():
    assert reference(signal_name) == "docgraph.runtime.lifetime:signal_name"
    assert resolve(reference(signal_name)) is signal_name
    assert resolve(reference(record)) is record
    assert resolve("os.path:join") is os.path.join
    assert resolve("signal:Signals.SIGTERM") is signal.Signals.SIGTERM  # a dotted name
    with pytest.raises(AttributeError):
        resolve("os.path:no_such_function")


@needs_linux
def test_set_parent_death_signal_arms_the_kernel():
    libc = ctypes.CDLL(None, use_errno=True)

    def armed() -> int:
        value = ctypes.c_int()
        assert libc.prctl(2, ctypes.byref(value), 0, 0, 0) == 0  # PR_GET_PDEATHSIG
        return value.value

    before = armed()
    try:
        assert lifetime.set_parent_death_signal(signal.SIGUSR2) is True
        assert armed() == signal.SIGUSR2
    finally:
        lifetime.set_parent_death_signal(before)
    assert armed() == before


def test_set_parent_death_signal_elsewhere_than_linux(monkeypatch):
    monkeypatch.setattr(lifetime.sys, "platform", "darwin")
    assert lifetime.set_parent_death_signal(signal.SIGTERM) is False


class _ExitError(Exception):
    pass


def _fake_exit(code):
    raise _ExitError(code)


def test_a_worker_whose_parent_is_already_gone_exits_at_once(monkeypatch):
    armed = []
    monkeypatch.setattr(lifetime, "set_parent_death_signal", armed.append)
    monkeypatch.setattr(lifetime.os, "_exit", _fake_exit)
    with pytest.raises(_ExitError) as info:
        lifetime.die_with_parent(os.getppid() + 100000, signal.SIGKILL)
    assert info.value.args == (128 + signal.SIGTERM,)
    assert armed == [signal.SIGKILL]


def test_a_worker_watches_its_parent_from_a_daemon_thread(monkeypatch):
    started = []

    class Thread:
        def __init__(self, target, args, daemon, name):
            started.append((target, args, daemon, name))

        def start(self):
            started.append("started")

    monkeypatch.setattr(lifetime, "set_parent_death_signal", lambda signum: True)
    monkeypatch.setattr(lifetime.threading, "Thread", Thread)
    lifetime.die_with_parent(os.getppid(), grace=2.5)
    assert started == [(lifetime._watch_parent, (os.getppid(), 2.5), True,
                        "docgraph parent watch"), "started"]


def test_the_watchdog_ends_the_worker_once_the_parent_is_gone(monkeypatch):
    monkeypatch.setattr(lifetime.os, "_exit", _fake_exit)
    start = time.monotonic()
    with pytest.raises(_ExitError) as info:
        lifetime._watch_parent(os.getppid() + 100000, 0.05)  # not (or no longer) the parent
    assert info.value.args == (143,) and time.monotonic() - start >= 0.05


def test_run_child_ends_with_its_parent_then_calls_the_target(monkeypatch):
    watched = []
    monkeypatch.setattr(lifetime, "die_with_parent",
                        lambda parent, signum: watched.append((parent, signum)))
    assert run_child(42, signal.SIGTERM, reference(record), 1, 2, 3) == 6
    assert watched == [(42, signal.SIGTERM)] and CALLS == [(1, 2, 3)]


@needs_sigmask
def test_a_pool_process_leaves_ctrl_c_to_its_parent_and_runs_its_initializer(monkeypatch):
    watched, registered = [], []
    monkeypatch.setattr(lifetime, "die_with_parent",
                        lambda parent, signum: watched.append((parent, signum)))
    # not in this process: its exit handler would end the test run with os._exit(0)
    monkeypatch.setattr(lifetime.atexit, "register", registered.append)
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    handler = signal.getsignal(signal.SIGINT)
    try:
        start_pool_process(7, pickle.dumps((record, (1, 2))), 30)
        assert not _blocked()
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        assert watched == [(7, signal.SIGKILL)]  # a pool process writes nothing: no grace
        assert CALLS == [(1, 2, 30)]  # the pickled arguments, then the shared ones
        start_pool_process(7, pickle.dumps((None, ())))
        assert CALLS == [(1, 2, 30)]
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        signal.signal(signal.SIGINT, handler)
    # it leaves at once when the pool lets it go
    assert registered == [lifetime.leave_now, lifetime.leave_now]


def test_leave_now_flushes_what_was_written_and_keeps_the_status(tmp_path):
    """A worker that leaves with ``os._exit`` still hands over its buffered output and its
    log records, and exits with the status it was given."""
    import subprocess

    log = tmp_path / "worker.log"
    code = ("import logging, sys\n"
            f"handler = logging.FileHandler({str(log)!r})\n"
            "logging.getLogger().addHandler(handler)\n"
            "logging.getLogger().warning('logged before leaving')\n"
            "sys.stdout.write('buffered'); sys.stderr.write('also buffered')\n"
            "from docgraph.runtime.lifetime import leave_now\n"
            "leave_now(3)\n"
            "print('never')\n")
    env = {k: v for k, v in script_env().items() if k != "PYTHONUNBUFFERED"}  # buffered
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env, cwd=ROOT)
    assert (res.returncode, res.stdout, res.stderr) == (3, "buffered", "also buffered")
    assert log.read_text() == "logged before leaving\n"


def test_a_child_arms_its_death_signal_before_importing_its_target(monkeypatch):
    """Class: process lifetime. The target's import may take seconds (torch): a parent that
    dies meanwhile must take the child with it, so the signal is armed first."""
    from docgraph.runtime import lifetime

    calls: list[str] = []
    monkeypatch.setattr(lifetime, "die_with_parent",
                        lambda parent, signum: calls.append(f"arm {parent} {signum}"))

    def resolve(target):
        calls.append(f"import {target}")
        return lambda *args: calls.append(f"call {args}")

    monkeypatch.setattr(lifetime, "resolve", resolve)
    lifetime.run_child(123, 15, "pkg.mod:fn", "a", 1)
    assert calls == ["arm 123 15", "import pkg.mod:fn", "call ('a', 1)"]
