"""What a run leaves on disk and what a model is loaded from: model directories (written by
``train.py``, packed and shipped, found by name), checkpoints, run locks."""

from __future__ import annotations

from docgraph.runtime.lazy import lazy_exports

#: Where each public name lives; each is imported from its module on first use (PEP 562), so
#: that importing one module of this package loads no other.
_MODULES: dict[str, str] = {
    "ModelDirError": "docgraph.persistence.locate",
    "locate_model_dir": "docgraph.persistence.locate",
    "ModelNotFoundError": "docgraph.persistence.shipped",
    "resolve_model": "docgraph.persistence.shipped",
    "shipped_models": "docgraph.persistence.shipped",
    "ModelOverrides": "docgraph.persistence.model_dir",
    "OverrideError": "docgraph.persistence.model_dir",
    "build_model": "docgraph.persistence.model_dir",
    "load_model_dir": "docgraph.persistence.model_dir",
    "read_model_dir": "docgraph.persistence.model_dir",
    "save_model_dir": "docgraph.persistence.model_dir",
    "PackSummary": "docgraph.persistence.packing",
    "pack_model_dir": "docgraph.persistence.packing",
    "model_speeds": "docgraph.persistence.speeds",
    "save_model_speeds": "docgraph.persistence.speeds",
    "read_manifest": "docgraph.persistence.manifest",
    "verify_manifest": "docgraph.persistence.manifest",
    "load_checkpoint": "docgraph.persistence.checkpoint",
    "save_checkpoint": "docgraph.persistence.checkpoint",
    "CheckpointError": "docgraph.persistence.archive",
    "RunDirectoryBusyError": "docgraph.persistence.run_lock",
    "RunLock": "docgraph.persistence.run_lock",
}

__all__ = sorted(_MODULES)


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)
