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
