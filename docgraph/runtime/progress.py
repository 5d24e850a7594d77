"""Progress of long work: a tqdm bar on a terminal, a line every few seconds in a log file.

:class:`Progress` reports one counted piece of work (the steps of an epoch, the tokens of a
split being tagged, the documents whose graphs are built). Where it goes depends on where the
program's output goes:

* stderr is a terminal: a tqdm bar (with the rate, the ETA and optional statistics such as
  the loss), removed when the work ends;
* stderr is a file or a pipe (a background job, ``> train.out 2>&1``): one line on the
  ``docgraph`` logger every :attr:`ProgressSettings.interval` seconds (30 by default), e.g.
  ``epoch 3: 120/800 steps (15%), 0:41 elapsed, ETA 3:50, 1,234 tok/s, mean loss 12.5``;
* ``--quiet`` (:func:`configure` with ``enabled=False``), or any process of a data-parallel
  group but the first: nothing.

:class:`Stages` times the stages of a run (reading the corpus, building graphs, training,
tagging); a stage that has no counter of its own says it is still running every
``interval`` seconds, so a slow stage is never silent.

This module does not import torch.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["Progress", "ProgressSettings", "Stages", "configure", "format_clock",
           "is_rank_zero", "log_to_file", "settings"]

log = logging.getLogger("docgraph")

#: Seconds between two refreshes of a bar's statistics (each may read a value back from a GPU).
STATS_REFRESH = 1.0


@dataclass(frozen=True)
class ProgressSettings:
    """How progress is shown.

    Attributes:
        enabled: ``False`` shows nothing (``--quiet``).
        interval: Seconds between two progress lines when stderr is not a terminal (0: a line
            at every update).
        tty: Whether to draw bars; ``None`` draws them when stderr is a terminal.
        announce_after: A stage (:class:`Stages`) still running after this many seconds says
            so; quicker stages print only their result.
    """

    enabled: bool = True
    interval: float = 30.0
    tty: bool | None = None
    announce_after: float = 2.0

    def __post_init__(self) -> None:
        if self.interval < 0 or self.announce_after < 0:
            raise ValueError(f"progress interval {self.interval} and announce_after "
                             f"{self.announce_after} must be >= 0")

    @property
    def bars(self) -> bool:
        """Whether progress is drawn as bars (a terminal) rather than written as lines."""
        if self.tty is not None:
            return self.tty
        return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


_settings = ProgressSettings()


def settings() -> ProgressSettings:
    """The settings in force (:func:`configure`)."""
    return _settings


def configure(**changes: Any) -> ProgressSettings:
    """Change the settings of this process (fields of :class:`ProgressSettings`); returns the
    previous ones, e.g. to restore them."""
    global _settings
    previous = _settings
    _settings = replace(_settings, **changes)
    return previous


def is_rank_zero() -> bool:
    """Whether this process is rank 0 as torch-free code can tell: of its process group when one
    is up, else by ``$RANK`` (the only process is rank 0); only rank 0 shows progress.

    Reads the group when torch.distributed is loaded and initialised, else ``$RANK`` (set by
    ``torchrun`` and :func:`docgraph.runtime.processes.spawn`); never imports torch itself.
    """
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank() == 0
    return os.environ.get("RANK", "0") == "0"


def format_clock(seconds: float) -> str:
    """``"4:05"`` or ``"1:02:03"``."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _terminal_size(file: Any) -> dict[str, Any]:
    """tqdm's size arguments: follow the terminal's width when it has a size; a terminal
    without one (``script -c`` run from a non-terminal) would make tqdm draw nothing, so it
    gets :func:`shutil.get_terminal_size`'s (80 x 24 by default)."""
    try:
        columns, lines = os.get_terminal_size(file.fileno())
        if columns > 0 and lines > 0:
            return {"dynamic_ncols": True}
    except (OSError, ValueError, AttributeError):
        pass
    size = shutil.get_terminal_size()
    return {"ncols": size.columns, "nrows": size.lines}


def _stats_text(stats: Mapping[str, Any]) -> str:
    return ", ".join(f"{value} {key}" if key.endswith("/s") else f"{key} {value}"
                     for key, value in stats.items())


class Progress:
    """Progress of one counted piece of work; see the module docstring for where it goes.

    Use it as a context manager (it closes on errors and Ctrl-C too)::

        with Progress("epoch 3", total=len(sampler), unit="step",
                      stats=lambda: {"mean loss": f"{loss_sum / steps:.3g}"}) as bar:
            for batch in batches:
                ...
                bar.update()

    Args:
        desc: What is being done, e.g. ``"epoch 3"`` or ``"tagging dev"``.
        total: The count at the end, when known.
        unit: Singular name of what is counted (``"step"``, ``"token"``).
        stats: Called only when a line or the bar's statistics are due, so it may be costly
            (read a loss back from a GPU): a mapping shown after the counts, a key ending in
            ``/s`` after its value (``{"tok/s": "1,234"}``).
        enabled: ``False`` shows nothing (whatever the settings).
        settings: Settings to use instead of the process's (:func:`configure`).
        file: Where a bar is drawn (default: stderr).
    """

    def __init__(self, desc: str, total: int | None = None, unit: str = "item", *,
                 stats: Callable[[], Mapping[str, Any]] | None = None, enabled: bool = True,
                 settings: ProgressSettings | None = None, file: Any = None) -> None:
        self.desc, self.total, self.unit, self.stats = desc, total, unit, stats
        self.settings = settings or _settings
        self.n = 0
        self.start = time.perf_counter()
        self._last_line = self.start
        self._last_stats = self.start - STATS_REFRESH
        self.active = enabled and self.settings.enabled and is_rank_zero()
        self._bar: Any = None
        if self.active and self.settings.bars:
            from tqdm import tqdm

            file = file if file is not None else sys.stderr
            self._bar = tqdm(total=total, desc=desc, unit=unit, leave=False, file=file,
                             unit_scale=unit == "token", **_terminal_size(file))

    @property
    def elapsed(self) -> float:
        """Seconds since the work started."""
        return time.perf_counter() - self.start

    def update(self, n: int = 1) -> None:
        """Count ``n`` more; draw the bar, or write a line when one is due."""
        self.n += n
        if not self.active:
            return
        now = time.perf_counter()
        if self._bar is not None:
            self._bar.update(n)
            if self.stats is not None and now - self._last_stats >= STATS_REFRESH:
                self._last_stats = now
                self._bar.set_postfix_str(_stats_text(self.stats()), refresh=False)
        elif now - self._last_line >= self.settings.interval and (n or self.settings.interval):
            # (a count that did not move is a line only at a real interval: "still at 0/N")
            self._last_line = now
            log.info("%s", self.line())

    def line(self) -> str:
        """The progress line: counts, percentage, elapsed time, ETA and statistics."""
        elapsed = self.elapsed
        unit = self.unit if self.n == 1 and not self.total else self.unit + "s"
        parts = []
        if self.total:
            parts.append(f"{self.n:,}/{self.total:,} {unit} ({100 * self.n // self.total}%)")
        else:
            parts.append(f"{self.n:,} {unit}")
        parts.append(f"{format_clock(elapsed)} elapsed")
        if self.total and 0 < self.n < self.total:
            parts.append(f"ETA {format_clock(elapsed / self.n * (self.total - self.n))}")
        if self.stats is not None:
            text = _stats_text(self.stats())
            if text:
                parts.append(text)
        return f"{self.desc}: " + ", ".join(parts)

    def close(self) -> float:
        """Remove the bar; returns the seconds the work took."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        return self.elapsed

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Stages:
    """The stages of a run, timed.

    ``with stages("building graphs"):`` runs a stage: if it is still running after
    :attr:`ProgressSettings.announce_after` seconds it says so, then again every
    ``interval`` seconds (``heartbeat=False`` for a stage whose own :class:`Progress` reports
    it); at its end, one line with its duration. :attr:`seconds` keeps every stage's total,
    :meth:`summary` says them in one line.

    Args:
        enabled: ``False`` logs nothing (the stages are still timed).
        settings: Settings to use instead of the process's (:func:`configure`).
    """

    def __init__(self, enabled: bool = True, settings: ProgressSettings | None = None) -> None:
        self.settings = settings or _settings
        self.enabled = enabled and is_rank_zero()
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str, heartbeat: bool = True, done: bool = True,
                 ) -> Iterator[dict[str, Any]]:
        """Run stage ``name``; the yielded dict may receive a ``"result"`` string for the last
        line (e.g. ``"2,483 documents"``)."""
        start = time.perf_counter()
        info: dict[str, Any] = {}
        stop = threading.Event()
        watcher = None
        if self.enabled and self.settings.enabled and heartbeat:
            watcher = threading.Thread(target=self._watch, args=(name, start, stop),
                                       daemon=True, name=f"docgraph stage {name}")
            watcher.start()
        try:
            yield info
        finally:
            stop.set()
            if watcher is not None:
                watcher.join()
            seconds = time.perf_counter() - start
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds
        if self.enabled and done:
            result = f": {info['result']}" if info.get("result") else ""
            log.info("%s%s (%s)", name, result, _duration(seconds))

    def _watch(self, name: str, start: float, stop: threading.Event) -> None:
        wait = self.settings.announce_after
        while not stop.wait(wait):
            log.info("%s... (%s so far)", name, _duration(time.perf_counter() - start))
            wait = max(self.settings.interval, 0.1)

    def summary(self) -> str:
        """``"stage times: reading the corpus 5.3 s, building graphs 3.1 s, ..."``."""
        return "stage times: " + ", ".join(f"{name} {_duration(seconds)}"
                                           for name, seconds in self.seconds.items())


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else format_clock(seconds)


class _RunLog(logging.FileHandler):
    """The file handler of :func:`log_to_file`: when its file cannot be written (a full disk)
    it says so once on stderr and drops its lines, instead of a traceback per line."""

    failed = False

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging API
        if self.failed:
            return
        self.failed = True
        err = sys.exc_info()[1]
        cause = getattr(err, "strerror", None) or err
        sys.stderr.write(f"warning: cannot write {self.baseFilename}: {cause}; its lines are "
                         "lost from here\n")


class _Forward(logging.Handler):
    """Passes records on to the root logger's handlers, as propagation would (used while
    :func:`log_to_file` holds the ``docgraph`` logger at INFO for its file)."""

    def emit(self, record: logging.LogRecord) -> None:
        for handler in logging.getLogger().handlers:
            if record.levelno >= handler.level:
                handler.handle(record)


@contextmanager
def log_to_file(path: str | os.PathLike[str], logger: str = "docgraph") -> Iterator[None]:
    """Append the ``logger``'s INFO lines (stages, progress, epochs) to ``path`` while the
    block runs, each with its time, whatever reaches the console (``--quiet`` keeps the
    console to warnings; the file still gets everything).

    The logger is held at INFO for the file; what it passes on to the root logger's handlers
    stays what it was (nothing new appears on a console or in a caller's logging).
    """
    target = logging.getLogger(logger)
    console_level = target.getEffectiveLevel()
    level, propagate = target.level, target.propagate
    handler = _RunLog(path, encoding="utf-8")
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%d %H:%M:%S"))
    forward = _Forward(console_level) if propagate else None
    target.addHandler(handler)
    if forward is not None:
        target.addHandler(forward)
    target.setLevel(min(logging.INFO, console_level))
    target.propagate = False
    try:
        yield
    finally:
        target.removeHandler(handler)
        if forward is not None:
            target.removeHandler(forward)
        target.setLevel(level)
        target.propagate = propagate
        with suppress(OSError):  # a full disk was said once (_RunLog), and may be the error
            handler.close()
