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
from docgraph.config.size import estimate_parameters
from docgraph.data.conll import HEAD_BYTES, check_text_head, has_tokens, read_conll
from docgraph.data.errors import CorpusFormatError
from docgraph.data.registry import sample_data_dir
from docgraph.persistence.checkpoint import CheckpointError, load_checkpoint
from docgraph.persistence.model_dir import (
    ModelSizeError,
    build_model,
    check_model_memory,
    load_model_dir,
    parameter_count,
)
from docgraph.persistence.shipped import shipped_models
from docgraph.runtime.integrity import write_sealed_json


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
    write_sealed_json(copy / "config.json", config)
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
    write_sealed_json(copy / "config.json", config)
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
    assert message == (f"{copy}: model.pt is not a readable docgraph checkpoint: truncated, or "
                       f"not a checkpoint at all ({len(data) // 2:,} bytes without the end of a "
                       "PyTorch archive); copy it again or retrain")
    err = _one_line_error(evaluate_main, ["--model", str(copy), "--device", "cpu"], capsys)
    assert "truncated" in err and "miniz" not in err and "central directory" not in err
    (copy / "last.pt").write_bytes(b"")
    with pytest.raises(CheckpointError, match="last.pt: not a readable docgraph checkpoint: "
                                              "the file is empty"):
        load_checkpoint(copy / "last.pt")


# ------------------------------------------------------------------- paths before torch
def _before_torch(script: str, argv: list[str]) -> tuple[int, bool, str]:
    """Run ``scripts/<script>.py ARGV`` in a fresh interpreter: its exit status, whether torch
    was imported by then, and its stderr."""
    code = ("import runpy, sys\n"
            f"sys.argv = [{script!r}, *{argv!r}]\n"
            "try:\n"
            f"    runpy.run_path({str(ROOT / 'scripts' / (script + '.py'))!r}, "
            "run_name='__main__')\n"
            "except SystemExit as exit:\n"
            "    print(exit.code, 'torch' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=script_env(), timeout=60, cwd=ROOT)
    assert len(res.stdout.split()) == 2, (res.stdout, res.stderr)  # it exited, no traceback
    status, torch_loaded = res.stdout.split()
    return int(status), torch_loaded == "True", res.stderr.strip()


@pytest.mark.parametrize(("script", "args", "message"), [
    ("evaluate", ["--model", "{missing}"],
     "--model {missing}: neither a model directory nor a shipped model (shipped: {shipped})"),
    ("evaluate", ["--model", "{model}", "--data", "{missing}"],
     "--data {missing}: file not found"),
    ("evaluate", ["--model", "{model}", "--data-dir", "{missing}"],
     "--data-dir {missing}: directory not found"),
    ("predict", ["--model", "{model}", "{missing}"], "{missing}: input file not found"),
    ("predict", ["--model", "{tmp}", "x.txt"],
     "--model {tmp}: not a model directory written by train.py (no config.json, vocab.json, "
     "model.pt)"),
    ("visualize", ["--model", "{missing}", "--noisy", "3"],
     "--model {missing}: neither a model directory nor a shipped model (shipped: {shipped})"),
    ("train", ["--dataset", "conll03", "--data-dir", "{tmp}", "--quiet"],
     "no train data in {tmp}: expected one of train.txt. CoNLL-2003 English files in the "
     "original 4-column IOB1 format. (--data-dir may be the conll2003/ folder itself or the "
     "folder holding it; there is no {tmp}/conll2003)"),
])
def test_paths_are_checked_before_torch_is_imported(model_dir, tmp_path, script, args,
                                                    message):
    values = {"missing": str(tmp_path / "missing"), "model": str(model_dir),
              "tmp": str(tmp_path), "shipped": ", ".join(shipped_models()) or "none installed"}
    code, torch_loaded, err = _before_torch(script, [a.format(**values) for a in args])
    assert (code, torch_loaded) == (2, False), err
    assert err == f"error: {message.format(**values)}"


# ------------------------------------------------- refusals before torch (fault report item 7)
@pytest.fixture
def inputs(tmp_path):
    """Input files of every kind: text, binary, not UTF-8, UTF-16, empty, blank, CoNLL
    without a token."""
    files = {"text": "Kalvenia won .\n", "empty": "", "blank": " \n\t\r\n\n",
             "docstart": "-DOCSTART- -X- O O\n\n-DOCSTART- -X- O O\n"}
    paths = {}
    for name, text in files.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text(text)
    paths["binary"] = tmp_path / "binary.bin"
    paths["binary"].write_bytes(b"PK\x03\x04\x00\x00binary")
    paths["latin1"] = tmp_path / "latin1.txt"
    paths["latin1"].write_bytes("Kalvenia won .\ncaf\u00e9 .\n".encode("latin-1"))
    paths["utf16"] = tmp_path / "utf16.txt"
    paths["utf16"].write_bytes("Kalvenia won .\n".encode("utf-16"))
    return paths


@pytest.fixture
def truncated_model(model_dir, tmp_path):
    """A copy of the tiny model whose ``model.pt`` lost its second half."""
    copy = tmp_path / "truncated"
    shutil.copytree(model_dir, copy)
    data = (copy / "model.pt").read_bytes()
    (copy / "model.pt").write_bytes(data[: len(data) // 2])
    return copy


def test_output_that_is_a_directory_is_refused_before_torch(model_dir, inputs, tmp_path):
    code, torch_loaded, err = _before_torch("predict", [
        "--model", str(model_dir), "--output", str(tmp_path), str(inputs["text"])])
    assert (code, torch_loaded) == (2, False)
    assert err == (f"error: --output {tmp_path}: is a directory; expected a file to write, "
                   f"e.g. {tmp_path / 'predictions.jsonl'}")
    (tmp_path / "file").write_text("")
    code, torch_loaded, err = _before_torch("predict", [
        "--model", str(model_dir), "--output", str(tmp_path / "file" / "out.jsonl"),
        str(inputs["text"])])
    assert (code, torch_loaded) == (2, False)
    assert err == (f"error: --output {tmp_path / 'file' / 'out.jsonl'}: {tmp_path / 'file'} is "
                   "not a directory")


@pytest.mark.parametrize(("name", "message"), [
    ("binary", "{path}:1: expected UTF-8 text or CoNLL columns, got a NUL byte at column 5 "
               "(byte offset 4): a binary file?"),
    ("latin1", "{path}:2: expected UTF-8 text, got byte 0xe9 at column 4 (byte offset 18); "
               "convert the file to UTF-8"),
    ("utf16", "{path}:1: expected UTF-8 text or CoNLL columns, got UTF-16 text (byte-order "
              "mark 0xff 0xfe at byte offset 0); convert the file to UTF-8"),
])
def test_an_input_that_is_not_text_is_refused_before_torch(model_dir, inputs, name, message):
    path = inputs[name]
    expected = "error: " + message.format(path=path)
    for script, argv in (("predict", [str(inputs["text"]), str(path)]),
                         ("evaluate", ["--data", str(path)])):
        code, torch_loaded, err = _before_torch(script, ["--model", str(model_dir), *argv])
        assert (code, torch_loaded, err) == (2, False, expected), script


def test_check_text_head_reads_only_the_first_bytes(tmp_path):
    path = tmp_path / "long.txt"
    path.write_bytes(("a" + "é" * HEAD_BYTES + "\x00").encode())
    check_text_head(path)  # a character cut by the end of the head is no error, nor a NUL after
    path.write_bytes(b"ab\r\ncd\n\xff")
    with pytest.raises(CorpusFormatError, match=r":3: expected UTF-8 text, got byte 0xff at "
                                                r"column 1 \(byte offset 7\)"):
        check_text_head(path)


def test_inputs_without_a_token_are_refused_before_torch(model_dir, inputs):
    for names in (["empty"], ["blank"], ["docstart"], ["empty", "blank", "docstart"]):
        paths = [str(inputs[name]) for name in names]
        code, torch_loaded, err = _before_torch("predict", ["--model", str(model_dir), *paths])
        assert (code, torch_loaded) == (2, False), names
        assert err == (f"error: {', '.join(paths)}: no tokens to tag (empty, or only whitespace "
                       "and control characters); expected text or CoNLL token lines "
                       "(--allow-empty: write an empty output instead)")
    many = [str(inputs["empty"])] * 4
    code, _, err = _before_torch("predict", ["--model", str(model_dir), *many])
    assert code == 2 and err.startswith(f"error: {many[0]}, {many[0]} and 2 more files: no tokens")


def test_has_tokens_reads_to_the_first_token(tmp_path):
    path = tmp_path / "in.txt"
    for text, auto, text_mode in (("", False, False), (" \n\x00\x01\n\x7f\x85\n", False, False),
                                  ("-DOCSTART- O\n\n", False, True),
                                  ("\n\n\x00x\n", True, True), ("\ufeff\n", False, False)):
        path.write_text(text)
        assert (has_tokens(path), has_tokens(path, "conll"), has_tokens(path, "text")) == (
            auto, auto, text_mode), text


def test_a_truncated_model_is_refused_before_torch(truncated_model, inputs):
    size = (truncated_model / "model.pt").stat().st_size
    expected = (f"error: --model {truncated_model}: model.pt is not a readable docgraph "
                f"checkpoint: truncated, or not a checkpoint at all ({size:,} bytes without the "
                "end of a PyTorch archive); copy it again or retrain")
    for script, argv in (("predict", [str(inputs["text"])]), ("evaluate", []),
                         ("visualize", ["--noisy", "3"])):
        code, torch_loaded, err = _before_torch(script, ["--model", str(truncated_model),
                                                         *argv])
        assert (code, torch_loaded, err) == (2, False, expected), script


def test_a_damaged_last_checkpoint_is_refused_before_torch(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "last.pt").write_bytes(b"half a checkpoint")
    code, torch_loaded, err = _before_torch("train", ["--resume", str(run), "--quiet"])
    assert (code, torch_loaded) == (2, False)
    assert err == (f"error: --resume {run}: {run / 'last.pt'}: not a readable docgraph "
                   "checkpoint: truncated, or not a checkpoint at all (17 bytes without the end "
                   "of a PyTorch archive); copy it again or retrain")


def test_an_absurd_model_size_is_refused_before_torch(tmp_path):
    for device, what in (("cpu", "training it needs"), ("auto", "building it needs")):
        code, torch_loaded, err = _before_torch("train", [
            "--hidden", "1000000", "--device", device, "--quiet",
            "--output-dir", str(tmp_path / "run")])
        assert (code, torch_loaded) == (2, False), err
        assert err.startswith("error: --hidden 1000000: the model would have "
                              "36,003,633,773,406 parameters (144.0 TB as float32) and "
                              f"{what} at least "), err
        assert ("of memory available; lower it (model sizes: --hidden 1000000, --sent-dim "
                "300, --uncertainty-hidden 100, [model] word_dim 50, --char-hidden 50, "
                "--char-dim 30)") in err
        assert len(err.splitlines()) == 1
    code, torch_loaded, err = _before_torch("train", [
        "--sent-dim", "2000000", "--quiet", "--output-dir", str(tmp_path / "run")])
    assert (code, torch_loaded) == (2, False) and err.startswith("error: --sent-dim 2000000: ")
    code, torch_loaded, err = _before_torch("train", [  # wider than any layer: its bound
        "--hidden", "100000000", "--quiet", "--output-dir", str(tmp_path / "run")])
    assert (code, torch_loaded, err) == (2, False, "error: --hidden = 100000000: expected an "
                                                   "integer >= 1 and <= 1048576")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("model", [
    {}, TINY_MODEL, {"hidden": 2000}, {"sent_dim": 20000}, {"char_hidden": 3, "char_dim": 7},
    {"graph": False}, {"cross_sentence": False, "graph": False}, {"window": 0},
    {"use_previous": False}, {"use_next": False, "window_encoding": "per_sentence"},
    {"pruning": False}, {"edge_weights": False}, {"pruning": False, "edge_weights": False},
    {"uncertainty_hidden": 333, "lm_dim": 768, "word_dim": 300, "isolated": "gate"},
    {"mc_dropout": "output", "constrained_decoding": True, "freeze_embeddings": True},
])
def test_the_closed_form_count_follows_the_model(model, sample_vocabs):
    config = apply_overrides(ExperimentConfig(), {"model": model}).model
    for vocabs, sizes in ((None, {}), (sample_vocabs, {
            "words": len(sample_vocabs.words), "chars": len(sample_vocabs.chars),
            "labels": len(sample_vocabs.labels)})):
        count = parameter_count(config, vocabs)
        estimate = estimate_parameters(config, **sizes)
        # never above the model (no false refusal), and close to it
        assert 0.97 * count <= estimate <= count, (model, estimate, count)


def test_a_control_character_in_a_conll_word_names_file_and_line(tmp_path):
    path = tmp_path / "odd.conll"
    path.write_text("-DOCSTART- O\n\nKalvenia B-LOC\n\x00 O\nwon O\n")
    with pytest.raises(CorpusFormatError) as info:
        read_conll(path)
    assert str(info.value) == (f"{path}:4: expected a word of text in the first column, got "
                               "control character U+0000 in '\\x00'")
    path.write_text("Kal\x7fvenia B-LOC\n")
    with pytest.raises(CorpusFormatError, match=r":1: .* control character U\+007F in "):
        read_conll(path)
