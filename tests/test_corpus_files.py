"""The files of a corpus named on a command line: files, folders and globs."""

from __future__ import annotations

import pytest

from docgraph.config.fields import UsageError
from docgraph.data.corpus_files import corpus_inputs


def test_files_folders_and_globs_give_each_file_once_in_order(tmp_path, monkeypatch):
    for name in ("b/2.txt", "b/1.jsonl", "b/.hidden", "b/.cache/x.txt", "a.txt", "c.parquet"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    monkeypatch.chdir(tmp_path)
    found = corpus_inputs(["b", "*.txt", "a.txt", str(tmp_path / "**" / "*.parquet")])
    assert found == [tmp_path / "a.txt", tmp_path / "b" / "1.jsonl", tmp_path / "b" / "2.txt",
                     tmp_path / "c.parquet"]


def test_a_pattern_naming_nothing_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match=r"nope\.txt: no such file or directory"):
        corpus_inputs([str(tmp_path / "nope.txt")])
    with pytest.raises(UsageError, match="matches no file"):
        corpus_inputs([str(tmp_path / "*.md")])
    with pytest.raises(UsageError, match="matches no file"):
        corpus_inputs([str(tmp_path / "empty")])
