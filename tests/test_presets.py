"""Tests of :mod:`docgraph.config.presets`: the TOML presets, found and read with errors that
name the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

from docgraph.config.presets import load_toml, preset_path


def test_the_shipped_presets_are_found():
    for dataset in ("sample", "conll03", "ontonotes"):
        assert preset_path(dataset) == ROOT / "configs" / f"{dataset}.toml"
    assert preset_path("column") is None


def test_every_shipped_preset_reads():
    for dataset in ("sample", "conll03", "ontonotes"):
        assert load_toml(preset_path(dataset)).get("dataset") == dataset


def test_load_toml_reads_sections_from_a_str_or_a_path(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('dataset = "sample"\n[train]\nepochs = 3\nlr = 0.5\n')
    expected = {"dataset": "sample", "train": {"epochs": 3, "lr": 0.5}}
    assert load_toml(path) == load_toml(str(path)) == expected
    (tmp_path / "empty.toml").write_text("")
    assert load_toml(tmp_path / "empty.toml") == {}


def test_a_missing_preset_names_the_file(tmp_path):
    path = tmp_path / "missing.toml"
    with pytest.raises(ValueError) as info:
        load_toml(path)
    assert str(info.value) == f"{path}: configuration file not found"


def test_invalid_toml_names_the_file_and_the_place(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[train\nepochs = 1\n")
    with pytest.raises(ValueError, match=rf"^{path}: invalid TOML \(.*line 1"):
        load_toml(path)


def test_preset_path_is_none_for_a_name_without_a_file():
    assert preset_path("no-such-dataset") is None
    assert isinstance(preset_path("sample"), Path)
