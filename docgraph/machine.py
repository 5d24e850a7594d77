"""What machine a run or a benchmark ran on: CPU model, cores, peak memory."""

from __future__ import annotations

import platform
import resource
import sys
from pathlib import Path


def cpu_model() -> str:
    """The CPU model name from ``/proc/cpuinfo`` (or :func:`platform.processor`)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def peak_rss_mib() -> float:
    """Peak resident memory of this process in MiB (``ru_maxrss`` is KiB on Linux)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024
