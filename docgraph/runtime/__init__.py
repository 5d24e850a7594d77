"""The process a run lives in: the machine, progress reporting, deterministic kernels,
process lifetimes (workers that end with their parent, SIGTERM taken as Ctrl-C) and files
written whole (atomic writes) and sealed (integrity)."""

from __future__ import annotations

from docgraph.runtime.lazy import lazy_exports

#: Where each public name lives; each is imported from its module on first use (PEP 562), so
#: that importing one module of this package loads no other.
_MODULES: dict[str, str] = {
    "WriteError": "docgraph.runtime.atomic",
    "atomic_write_bytes": "docgraph.runtime.atomic",
    "atomic_write_json": "docgraph.runtime.atomic",
    "atomic_write_text": "docgraph.runtime.atomic",
    "DamagedFileError": "docgraph.runtime.integrity",
    "read_json_file": "docgraph.runtime.integrity",
    "write_sealed_json": "docgraph.runtime.integrity",
    "set_deterministic": "docgraph.runtime.determinism",
    "resolve_device": "docgraph.runtime.machine",
    "ProcessFailedError": "docgraph.runtime.processes",
    "spawn": "docgraph.runtime.processes",
    "die_with_parent": "docgraph.runtime.lifetime",
    "stop_on_signals": "docgraph.runtime.lifetime",
    "Progress": "docgraph.runtime.progress",
    "ProgressSettings": "docgraph.runtime.progress",
    "tagging_precision": "docgraph.runtime.precision",
    "tagging_threads": "docgraph.runtime.threads",
}

__all__ = sorted(_MODULES)


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)
