"""Tests of the timing of closures (docgraph_dev/timing.py), on a clock the test drives."""

from __future__ import annotations

import itertools

import pytest

import docgraph_dev.timing as timing
from docgraph_dev.timing import median_seconds, time_interleaved, timed


@pytest.fixture
def clock(monkeypatch):
    """Wall and CPU clocks that advance by what the timed closure adds to ``clock.wall`` and
    ``clock.cpu``."""

    class Clock:
        wall = 0.0
        cpu = 0.0

    monkeypatch.setattr(timing, "perf_counter", lambda: Clock.wall)
    monkeypatch.setattr(timing, "process_time", lambda: Clock.cpu)
    return Clock


def test_median_seconds_is_the_median_of_the_calls(clock) -> None:
    durations = iter([3.0, 1.0, 2.0])

    def work() -> None:
        clock.wall += next(durations)

    assert median_seconds(work, 3) == 2.0


def test_timed_returns_wall_and_cpu_seconds(clock) -> None:
    def work() -> None:
        clock.wall += 2.0
        clock.cpu += 0.5

    assert timed(work) == (2.0, 0.5)


def test_time_interleaved_alternates_the_passes(clock) -> None:
    calls: list[str] = []
    costs = itertools.count(1.0)

    def make(name: str):
        def run() -> None:
            calls.append(name)
            cost = next(costs)
            clock.wall += cost
            clock.cpu += cost / 2

        return run

    result = time_interleaved({"a": make("a"), "b": make("b")}, repeats=3)
    assert calls == ["a", "b", "a", "b", "a", "b"]
    # a cost 1, 3, 5 and b 2, 4, 6 seconds: medians 3 and 4, CPU half of it.
    assert result == {"a": (3.0, 1.5), "b": (4.0, 2.0)}
