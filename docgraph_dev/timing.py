"""Wall-clock and CPU timing of closures, shared by the measurements."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from time import perf_counter, process_time


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Median wall-clock seconds of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        start = perf_counter()
        fn()
        times.append(perf_counter() - start)
    return statistics.median(times)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """``(wall seconds, process CPU seconds)`` of one call of ``fn``."""
    wall, cpu = perf_counter(), process_time()
    fn()
    return perf_counter() - wall, process_time() - cpu


def time_interleaved(
    passes: dict[str, Callable[[], object]], repeats: int
) -> dict[str, tuple[float, float]]:
    """Median ``(wall, CPU)`` seconds of each pass, the passes interleaved repeat by repeat.

    Interleaving (A B A B ...) exposes every pass to the same drift of the machine's load, so
    ratios between passes stay meaningful on a shared machine.
    """
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in passes}
    for _ in range(repeats):
        for name, fn in passes.items():
            samples[name].append(timed(fn))
    return {
        name: (statistics.median(w for w, _ in s), statistics.median(c for _, c in s))
        for name, s in samples.items()
    }
