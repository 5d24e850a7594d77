"""Packages whose public names are imported from their modules on first use (PEP 562)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, modules: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` whose public names (the keys of
    ``modules``) live in the modules the values name: importing one module of the package loads
    no other.

    Example::

        __getattr__, __dir__ = lazy_exports(__name__, {"Vocab": "docgraph.data.vocab"})
    """

    def attribute(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def names() -> list[str]:
        return sorted({*vars(sys.modules[package]), *modules})

    return attribute, names
