"""Tests of :mod:`docgraph.data.errors`: the exceptions of the corpus readers."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph.data.errors import CorpusFormatError, DataNotFoundError, format_error


def test_format_error_points_at_a_line_of_a_file():
    err = format_error(Path("data/train.txt"), 17, "expected 2 columns, got 1")
    assert isinstance(err, CorpusFormatError)
    assert str(err) == "data/train.txt:17: expected 2 columns, got 1"


def test_a_corpus_format_error_is_a_value_error():
    with pytest.raises(ValueError, match="^x:1: bad$"):
        raise format_error("x", 1, "bad")


def test_data_not_found_is_caught_as_either_kind():
    for kind in (FileNotFoundError, ValueError, OSError):
        with pytest.raises(kind):
            raise DataNotFoundError("no train data")
    assert str(DataNotFoundError("no train data in x")) == "no train data in x"


def test_every_error_of_docgraph_is_a_docgraph_error_and_its_old_kind():
    """One base (docgraph/config/errors.py) under which ``except DocgraphError`` catches every
    error docgraph raises on purpose; each is still the built-in kind it was."""
    import ast
    import importlib

    from docgraph import DocgraphError

    root = Path(__file__).resolve().parents[1] / "docgraph"
    found = {}
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
                module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
                found[node.name] = getattr(importlib.import_module(module), node.name)
    assert len(found) >= 20
    assert all(issubclass(cls, DocgraphError) for cls in found.values()), [
        name for name, cls in found.items() if not issubclass(cls, DocgraphError)]
    kinds = {"ConfigError": ValueError, "UsageError": ValueError, "CheckpointError":
             RuntimeError, "WriteError": OSError, "DataNotFoundError": FileNotFoundError,
             "CorpusFormatError": ValueError, "WorkerError": RuntimeError}
    assert all(issubclass(found[name], kind) for name, kind in kinds.items())
