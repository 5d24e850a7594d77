"""Tests of :mod:`docgraph.persistence.lm_record`: the language model a model directory records
(``lm.json``), checked when the model is loaded, moved or changed."""

from __future__ import annotations

import pytest
from conftest import TINY_LM_VOCAB, needs_transformers, tiny_config

from docgraph.data.lm_fingerprints import LanguageModelError, model_dir_hash
from docgraph.persistence.lm_record import check_lm_record


def test_lm_record_errors_name_what_is_missing_or_different(tmp_path):
    lm = tmp_path / "lm"
    lm.mkdir()
    (lm / "config.json").write_text("{}")
    record = {"path": str(lm), "hash": model_dir_hash(lm)}
    assert check_lm_record(record) == lm
    with pytest.raises(LanguageModelError, match="missing"):
        check_lm_record(record, tmp_path / "elsewhere", where="run")
    (lm / "config.json").write_text('{"changed": 1}')
    with pytest.raises(LanguageModelError, match="differ"):
        check_lm_record(record)


@needs_transformers
def test_baseline_run_records_its_language_model(tiny_lm, tmp_path):
    import shutil

    from docgraph import Tagger
    from docgraph.cli import evaluate_main
    from docgraph.config import apply_overrides
    from docgraph.persistence.checkpoint import CheckpointError
    from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
    from docgraph.training.experiment import run_experiment

    lm = tmp_path / "lm"
    shutil.copytree(tiny_lm, lm)
    run = tmp_path / "run"
    config = apply_overrides(tiny_config(run, model={"cross_sentence": False, "graph": False},
                                         epochs=1),
                             {"lm": str(lm), "lm_context": 4, "lm_cache_dir": str(tmp_path)})
    metrics = run_experiment(config)
    assert metrics["config"]["model"]["lm_dim"] == 16
    _, _, loaded = load_model_dir(run)
    assert loaded.lm == str(lm.resolve()) and loaded.lm_context == 4
    # moved: found again with lm=...; the recorded path alone no longer works
    moved = tmp_path / "moved"
    lm.rename(moved)
    with pytest.raises(CheckpointError, match=r"needs the language model .*missing"):
        load_model_dir(run)
    tagger = Tagger.load(run, lm=moved)
    assert len(tagger.predict(["the cat sat on the mat ."])) == 1
    # the tagging scripts take the same override: evaluate.py --lm, in one and in two processes
    data = tmp_path / "eval.conll"
    data.write_text("-DOCSTART- O\n\nthe O\ncat O\nsat O\n\n-DOCSTART- O\n\nthe O\nmat O\n")
    for processes in ("1", "2"):
        with pytest.raises(SystemExit, match="2"):  # without --lm: the clean one-line error
            evaluate_main(["--model", str(run), "--data", str(data), "--processes", processes])
        out = tmp_path / f"eval-p{processes}"
        assert evaluate_main(["--model", str(run), "--data", str(data), "--lm", str(moved),
                              "--processes", processes, "--output-dir", str(out)]) == 0
        assert (out / "eval_predictions.conll").is_file()
    # different files: refused
    (moved / "vocab.txt").write_text("\n".join([*TINY_LM_VOCAB, "extra"]) + "\n")
    with pytest.raises(CheckpointError, match="differ"):
        load_model_dir(run, overrides=ModelOverrides(lm=moved))
    # no record at all
    (run / "lm.json").unlink()
    with pytest.raises(CheckpointError, match="lm.json"):
        load_model_dir(run, overrides=ModelOverrides(lm=moved))


def test_a_directory_inside_an_installed_package_is_found_where_it_is_installed(tmp_path):
    import json as json_module
    from pathlib import Path

    from docgraph.persistence.lm_record import installed_package_path

    # json's own directory, recorded under another environment's site-packages
    here = Path(json_module.__file__).parent
    elsewhere = tmp_path / "old-venv" / "lib" / "site-packages" / "json"
    assert installed_package_path(elsewhere) == here
    assert installed_package_path(tmp_path / "no" / "package") is None
    assert installed_package_path(tmp_path / "site-packages" / "no_such_package_x") is None
    assert installed_package_path(tmp_path / "site-packages") is None
