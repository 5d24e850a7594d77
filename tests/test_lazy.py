"""Lazy package exports (docgraph/runtime/lazy.py): a name is imported on first use only."""

import sys
import types

import pytest

from docgraph.runtime.lazy import lazy_exports


def test_a_name_is_imported_from_its_module_on_first_use(monkeypatch):
    package = types.ModuleType("lazy_pkg")
    monkeypatch.setitem(sys.modules, "lazy_pkg", package)
    package.__getattr__, package.__dir__ = lazy_exports("lazy_pkg", {"dumps": "json"})
    monkeypatch.delitem(sys.modules, "json", raising=False)
    assert "json" not in sys.modules
    import json as reference

    assert package.dumps is reference.dumps
    assert "dumps" in package.__dir__()
    with pytest.raises(AttributeError, match="'lazy_pkg' has no attribute 'loads'"):
        package.__getattr__("loads")
