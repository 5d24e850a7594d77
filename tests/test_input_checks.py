"""Arguments that ask for more than the machine has, or point at the wrong place, are answered
with one line naming them, before any work (and, for paths, before torch is imported)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

import pytest
from conftest import ROOT, TINY_MODEL, script_env, tiny_config

from docgraph.cli import evaluate_main, predict_main, train_main
from docgraph.config import ConfigError, ExperimentConfig, apply_overrides, check_processes
from docgraph.config.fields import available_cores
from docgraph.data.errors import DataNotFoundError
from docgraph.data.registry import dataset_files, resolve_data_dir, sample_data_dir
from docgraph.persistence.checkpoint import CheckpointError, load_checkpoint
from docgraph.persistence.model_dir import (
    ModelSizeError,
    build_model,
    check_model_memory,
    load_model_dir,
    parameter_count,
)


def _one_line_error(main, argv, capsys) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


# ---------------------------------------------------------------- processes and model size
def test_processes_are_bounded_by_the_cores(tmp_path, capsys):
    check_processes(2, cores=2)
    check_processes(0, cores=1)  # automatic
    with pytest.raises(ConfigError, match=r"--processes 3: this machine has 2 CPU cores "
                                          r"available; expected at most 2"):
        check_processes(3, cores=2)
    cores = available_cores()
    err = _one_line_error(train_main, ["--processes", "1000", "--quiet",
                                       "--output-dir", str(tmp_path / "run")], capsys)
    assert f"--processes 1000: this machine has {cores} CPU core" in err
    preset = tmp_path / "many.toml"
    preset.write_text("[train]\nprocesses = 1000\n")
    err = _one_line_error(train_main, ["--config", str(preset), "--quiet",
                                       "--output-dir", str(tmp_path / "run")], capsys)
    assert "[train] processes 1000" in err and f"at most {cores}" in err
    assert not (tmp_path / "run").exists()


def test_processes_of_the_tagging_tools(model_dir, capsys):
    err = _one_line_error(evaluate_main, ["--model", str(model_dir), "--processes", "1000"],
                          capsys)
    assert "--processes 1000: this machine has" in err
    with pytest.raises(SystemExit) as info:  # argparse: its usage, then the error
        evaluate_main(["--model", str(model_dir), "--processes", "-1"])
    assert info.value.code == 2
    assert ("argument --processes: expected an integer >= 0, got '-1'"
            in capsys.readouterr().err)


def test_a_model_too_large_for_memory_names_the_flag(tmp_path, capsys):
    small = apply_overrides(ExperimentConfig(), {"model": TINY_MODEL}).model
    check_model_memory(small, available=10**9)
    big = apply_overrides(ExperimentConfig(), {"model": {"hidden": 2000}}).model
    count = parameter_count(big)
    assert count > 30 * 10**6  # counted without allocating anything
    with pytest.raises(ModelSizeError, match=r"^--hidden 2000: the model would have "
                                             f"{count:,} parameters"):
        check_model_memory(big, available=10**8)
    check_model_memory(big, available=10**12)
    adam = 4 * count * 4  # weights, gradients and two moments
    check_model_memory(big, "adam", available=adam)
    with pytest.raises(ModelSizeError, match="in 2 processes"):
        check_model_memory(big, "adam", processes=2, available=adam)
    wide = apply_overrides(ExperimentConfig(), {"model": {"sent_dim": 20000}}).model
    with pytest.raises(ModelSizeError, match="^--sent-dim 20000: "):
        check_model_memory(wide, available=10**8)

    start = time.perf_counter()
    err = _one_line_error(train_main, ["--hidden", "1000000", "--quiet", "--device", "cpu",
                                       "--output-dir", str(tmp_path / "run")], capsys)
    assert time.perf_counter() - start < 10
    assert err.startswith("error: --hidden 1000000: the model would have ")
    assert "more than the" in err and "of memory available" in err
    assert not (tmp_path / "run").exists()


def test_an_allocation_that_fails_at_build_names_the_sizes(sample_vocabs, monkeypatch):
    import docgraph.persistence.model_dir as model_dir

    def refuse(*args, **kwargs):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: "
                           "not enough memory: you tried to allocate 4000000000000 bytes.")

    monkeypatch.setattr(model_dir, "GCDoc", refuse)
    config = apply_overrides(ExperimentConfig(), {"model": {"hidden": 500000}}).model
    with pytest.raises(ModelSizeError, match=r"cannot allocate the model \(--hidden 500000, "):
        build_model(config, sample_vocabs)


# ---------------------------------------------------------------------------- --data-dir
def _column_corpus(root):
    folder = root / "column"
    folder.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        shutil.copy(sample_data_dir() / f"{split}.txt", folder / f"{split}.txt")
    return folder


def test_data_dir_is_the_corpus_root_or_the_dataset_folder(tmp_path):
    folder = _column_corpus(tmp_path / "corpora")
    assert resolve_data_dir("column", folder) == folder
    assert resolve_data_dir("column", tmp_path / "corpora") == folder
    assert dataset_files("column", tmp_path / "corpora") == {
        s: folder / f"{s}.txt" for s in ("train", "dev", "test")}
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataNotFoundError) as info:
        dataset_files("conll03", empty)
    message = str(info.value)
    assert f"no train data in {empty}: expected one of train.txt" in message
    assert "the conll2003/ folder itself or the folder holding it" in message
    assert f"there is no {empty / 'conll2003'}" in message
    (empty / "conll2003").mkdir()  # a root whose dataset folder lacks the files: both named
    with pytest.raises(DataNotFoundError, match=f"no train data in {empty}: .*; no train data "
                                                f"in {empty / 'conll2003'}: "):
        dataset_files("conll03", empty)


@pytest.mark.slow
def test_a_run_records_the_folder_it_read(tmp_path, capsys):
    folder = _column_corpus(tmp_path / "corpora")
    config = apply_overrides(tiny_config(tmp_path / "run", epochs=1),
                             {"dataset": "column", "data_dir": str(tmp_path / "corpora")})
    from docgraph.training.experiment import run_experiment

    run_experiment(config)
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["data_dir"] == str(folder.resolve())
    # evaluate.py finds the corpus again from the model alone
    assert evaluate_main(["--model", str(tmp_path / "run"), "--split", "dev", "--quiet",
                          "--device", "cpu", "--output-dir", str(tmp_path / "eval")]) == 0
    assert "dev (12 documents)" in capsys.readouterr().out


# ------------------------------------------------------------------------------ --mc-seed
def test_negative_mc_seed_is_rejected(model_dir, capsys):
    for main in (evaluate_main, predict_main):
        with pytest.raises(SystemExit) as info:
            main(["--model", str(model_dir), "--mc-seed", "-1", *(["x.txt"] if main is
                                                                  predict_main else [])])
        assert info.value.code == 2
        assert "--mc-seed: expected an integer >= 0, got '-1'" in capsys.readouterr().err
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "visualize.py"), "--model",
                          str(model_dir), "--noisy", "3", "--mc-seed", "-1"],
                         capture_output=True, text=True, env=script_env(), timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip() == "error: argument --mc-seed: expected an integer >= 0, got '-1'"


# ------------------------------------------------------------------ damaged model directories
def test_a_config_that_does_not_fit_the_weights_names_the_field(model_dir, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(model_dir, copy)
    config = json.loads((copy / "config.json").read_text())
    config["model"]["hidden"] = 32
    (copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError) as info:
        load_model_dir(copy)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{copy / 'model.pt'}: weights do not fit "
                              f"{copy / 'config.json'}: [model] hidden is 32 in config.json but "
                              "the weights were trained with 16 (")
    err = _one_line_error(evaluate_main, ["--model", str(copy), "--device", "cpu"], capsys)
    assert "[model] hidden is 32" in err
    config["model"]["hidden"] = 16
    config["model"]["graph"] = False
    (copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="graph is false in config.json but the weights "
                                              "were trained with true"):
        load_model_dir(copy)


def test_a_truncated_checkpoint_says_so_in_a_few_words(model_dir, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(model_dir, copy)
    data = (copy / "model.pt").read_bytes()
    (copy / "model.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError) as info:
        load_model_dir(copy)
    message = str(info.value)
    assert message == (f"{copy / 'model.pt'}: not a readable docgraph checkpoint: truncated, or "
                       f"not a checkpoint at all ({len(data) // 2:,} bytes without the end of a "
                       "PyTorch archive); copy it again or retrain")
    err = _one_line_error(evaluate_main, ["--model", str(copy), "--device", "cpu"], capsys)
    assert "truncated" in err and "miniz" not in err and "central directory" not in err
    (copy / "last.pt").write_bytes(b"")
    with pytest.raises(CheckpointError, match="last.pt: not a readable docgraph checkpoint: "
                                              "the file is empty"):
        load_checkpoint(copy / "last.pt")


# ------------------------------------------------------------------- paths before torch
@pytest.mark.parametrize(("script", "args", "message"), [
    ("evaluate", ["--model", "{missing}"], "--model {missing}: model directory not found"),
    ("evaluate", ["--model", "{model}", "--data", "{missing}"],
     "--data {missing}: file not found"),
    ("evaluate", ["--model", "{model}", "--data-dir", "{missing}"],
     "--data-dir {missing}: directory not found"),
    ("predict", ["--model", "{model}", "{missing}"], "{missing}: input file not found"),
    ("predict", ["--model", "{tmp}", "x.txt"],
     "--model {tmp}: not a model directory written by train.py (no config.json, vocab.json, "
     "model.pt)"),
    ("visualize", ["--model", "{missing}", "--noisy", "3"],
     "--model {missing}: model directory not found"),
    ("train", ["--dataset", "conll03", "--data-dir", "{tmp}", "--quiet"],
     "no train data in {tmp}: expected one of train.txt. CoNLL-2003 English files in the "
     "original 4-column IOB1 format. (--data-dir may be the conll2003/ folder itself or the "
     "folder holding it; there is no {tmp}/conll2003)"),
])
def test_paths_are_checked_before_torch_is_imported(model_dir, tmp_path, script, args,
                                                    message):
    values = {"missing": str(tmp_path / "missing"), "model": str(model_dir),
              "tmp": str(tmp_path)}
    argv = [a.format(**values) for a in args]
    code = ("import runpy, sys\n"
            f"sys.argv = [{script!r}, *{argv!r}]\n"
            "try:\n"
            f"    runpy.run_path({str(ROOT / 'scripts' / (script + '.py'))!r}, "
            "run_name='__main__')\n"
            "except SystemExit as exit:\n"
            "    print(exit.code, 'torch' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=script_env(), timeout=60, cwd=ROOT)
    assert res.stdout.split() == ["2", "False"], (res.stdout, res.stderr)
    assert res.stderr.strip() == f"error: {message.format(**values)}"
