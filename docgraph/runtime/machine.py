"""The machine a run or a benchmark runs on: the device it asks for, the CPU model, peak and
available memory."""

from __future__ import annotations

import platform
import resource
import sys
from pathlib import Path

import torch

from docgraph.config.size import host_available_memory


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


def resolve_device(name: str) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was requested but CUDA is not available")
    if name not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', not {name!r}")
    return torch.device(name)


def available_memory(device: torch.device | str = "cpu") -> int | None:
    """Bytes of memory a new allocation can still get: free memory of a CUDA device, else the
    host's available memory (:func:`~docgraph.config.size.host_available_memory`:
    ``MemAvailable``, bounded by the cgroup's limit in a container); ``None`` when it cannot be
    told."""
    device = torch.device(device)
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    return host_available_memory()
