"""A small corpus of one's own trains with settings of its size: the small-corpus settings of
``train.py`` without a preset (docgraph/config/train.py, docgraph/cli/arguments.py), the
minimum of optimiser steps before early stopping and the warning when dev F1 stays at 0
(docgraph/training/loop.py)."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from conftest import TINY_FLAGS

from docgraph.cli.arguments import check_arguments, small_corpus_config, train_parser
from docgraph.config import ExperimentConfig, TrainConfig, apply_overrides, check_values, load_toml
from docgraph.config.train import SMALL_CORPUS, small_corpus_line, small_corpus_settings

ROOT = Path(__file__).resolve().parents[1]

#: A document of 14 tokens (two entities); ``_corpus`` repeats it.
DOCUMENT = ("-DOCSTART- O\n\nKestrel B-ORG\nbeat O\nCarrow B-ORG\nin O\nVeldania B-LOC\n. O\n\n"
            "Piet B-PER\nRauch I-PER\nscored O\ntwice O\nfor O\nKestrel B-ORG\ntoday O\n. O\n\n")


def _corpus(directory: Path, documents: int = 4, dev: str | None = None) -> Path:
    """A column corpus of ``documents`` training documents (14 tokens each) in
    ``directory``; ``dev`` replaces the dev file's text."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "train.txt").write_text(DOCUMENT * documents)
    (directory / "dev.txt").write_text(DOCUMENT if dev is None else dev)
    (directory / "test.txt").write_text(DOCUMENT)
    return directory


def _config(*argv: str) -> ExperimentConfig:
    return check_arguments(train_parser().parse_args([*argv, "--quiet"]))


def test_the_small_corpus_settings_are_valid_train_settings():
    check_values({"train": dict(SMALL_CORPUS)}, "SMALL_CORPUS")
    config = TrainConfig(**SMALL_CORPUS)
    assert {key: getattr(config, key) for key in SMALL_CORPUS} == dict(SMALL_CORPUS)
    # each one changes a built-in default (else it would not need to be listed)
    assert all(getattr(TrainConfig(), key) != value for key, value in SMALL_CORPUS.items())


def test_small_corpus_settings_by_size_and_flags():
    config = TrainConfig()
    assert small_corpus_settings(19_999, config) == dict(SMALL_CORPUS)
    assert small_corpus_settings(20_000, config) == {}  # not below the threshold
    assert small_corpus_settings(5, replace(config, small_corpus_tokens=0)) == {}
    assert small_corpus_settings(99, replace(config, small_corpus_tokens=100)) != {}
    kept = small_corpus_settings(10, config, given={"lr", "processes"})
    assert kept == {k: v for k, v in SMALL_CORPUS.items() if k not in ("lr", "processes")}


def test_the_line_says_the_size_the_settings_and_what_differs():
    small = replace(TrainConfig(), **SMALL_CORPUS)
    line = small_corpus_line(30, 5_460, small)
    assert line == ("small corpus (30 documents, 5,460 tokens; --small-corpus-tokens 20,000): "
                    "--optimizer adam --lr 0.005 --loss-reduction sentence_mean --batch-tokens "
                    "500 --epochs 100 --patience 10 --min-steps 300 --processes 1 (the "
                    "small-corpus settings; a flag changes any of them)")
    line = small_corpus_line(30, 5_460, replace(small, lr=0.01, epochs=40))
    assert line.endswith("(the small-corpus settings would be --lr 0.005 --epochs 100: "
                         "train.py takes them where no preset or flag sets them)")
    assert "--lr 0.01 " in line and small_corpus_line(3_000, 20_000, small) is None


def test_train_py_without_a_preset_takes_them_below_the_size(tmp_path):
    data = _corpus(tmp_path / "mine")
    out = ["--output-dir", str(tmp_path / "run")]
    config = _config("--dataset", "column", "--data-dir", str(data), *out)
    assert {k: getattr(config.train, k) for k in SMALL_CORPUS} == dict(SMALL_CORPUS)
    # a flag's value stays; the others are the small corpus's
    config = _config("--dataset", "column", "--data-dir", str(data), "--lr", "0.01",
                     "--processes", "1", "--epochs", "3", *out)
    assert (config.train.lr, config.train.epochs) == (0.01, 3)
    assert (config.train.batch_tokens, config.train.optimizer) == (500, "adam")
    # 56 training tokens: a threshold of 56 or 0 keeps the built-in defaults
    for threshold in ("56", "0"):
        config = _config("--dataset", "column", "--data-dir", str(data),
                         "--small-corpus-tokens", threshold, *out)
        assert config.train == replace(TrainConfig(), small_corpus_tokens=int(threshold))
    # the dev share held out first: 4 documents, one held out, 42 tokens
    config = _config("--dataset", "column", "--data-dir", str(data), "--dev-fraction", "0.25",
                     "--small-corpus-tokens", "50", *out)
    assert config.train.optimizer == "adam"
    # a preset is a choice of its own: --config keeps it whole
    config = _config("--dataset", "column", "--data-dir", str(data), "--config",
                     str(ROOT / "configs" / "sample.toml"), *out)
    assert config.train == apply_overrides(
        ExperimentConfig(), load_toml(ROOT / "configs" / "sample.toml")).train


@pytest.mark.parametrize("dataset", ["conll03", "ontonotes", "sample"])
def test_the_presets_resolve_as_before_whatever_the_corpus_size(dataset, tmp_path):
    # a tiny corpus in the data set's format: its preset, not the size, decides
    data = tmp_path / dataset
    if dataset == "conll03":
        _corpus(data)
    elif dataset == "ontonotes":
        data.mkdir()
        for split in ("train", "dev", "test"):
            (data / f"{split}.gold_conll").write_text(
                "#begin document (a/b/c); part 000\n"
                "a/b/c 0 0 Kestrel NNP - - - - (ORG) -\na/b/c 0 1 won VBD - - - - * -\n\n"
                "#end document\n")
    argv = ["--dataset", dataset, "--output-dir", str(tmp_path / "run")]
    if dataset != "sample":
        argv += ["--data-dir", str(data)]
    config = _config(*argv)
    preset = load_toml(ROOT / "configs" / f"{dataset}.toml")
    expected = apply_overrides(ExperimentConfig(dataset=dataset), preset)
    assert config.train == expected.train and config.model == expected.model
    assert (config.train.min_steps, config.train.processes) == (0, 0)
    # the [train] section of the conll03 preset as it resolved before the size rule
    if dataset == "conll03":
        assert asdict(config.train) == {
            "epochs": 30, "patience": 6, "min_steps": 0, "small_corpus_tokens": 20_000,
            "optimizer": "adam", "lr": 0.002, "momentum": 0.0, "weight_decay": 1e-8,
            "clip_norm": 5.0, "lr_schedule": "none", "lr_decay": 0.05, "batch_tokens": 4000,
            "eval_batch_tokens": 8000, "loss_reduction": "sentence_mean", "threads": 0,
            "processes": 0, "max_minutes": 0.0, "lowercase_share": 0.0,
            "uppercase_share": 0.0, "novel_name_share": 0.0, "novel_name_variants": 3,
            "novel_name_cues": 0, "novel_name_common_cues": False,
            "word_dropout": 0.0, "mention_masking": 0.0, "selection": "dev",
            "deterministic": False}


def test_a_resumed_run_keeps_its_saved_settings(tmp_path):
    data = _corpus(tmp_path / "mine")
    args = train_parser().parse_args(["--dataset", "column", "--data-dir", str(data),
                                      "--resume", str(tmp_path / "run")])
    saved = ExperimentConfig(dataset="column", data_dir=str(data))
    assert small_corpus_config(saved, args) is saved


def test_early_stopping_waits_for_min_steps_and_warns_when_nothing_is_found():
    from docgraph.training.loop import (
        NO_ENTITY_EPOCHS,
        TrainState,
        early_stopped,
        no_entity_warning,
        steps_taken,
        stop_reason,
    )

    history = [{"epoch": e, "dev_f1": 0.0, "steps": 4} for e in range(1, 4)]
    state = TrainState(epoch=3, best_epoch=1, bad_epochs=2, history=history)
    config = TrainConfig(patience=2, min_steps=13)
    assert steps_taken(state) == 12 and not early_stopped(state, config)
    state.history.append({"epoch": 4, "dev_f1": 0.0, "steps": 4})
    state.bad_epochs, state.epoch = 3, 4
    assert early_stopped(state, config) and stop_reason(state, config) == "early_stopping"
    assert early_stopped(state, replace(config, min_steps=0))
    assert stop_reason(state, replace(config, min_steps=17, epochs=4)) == "max_epochs"
    # dev F1 below 1 in each of the first three epochs: warned once, after the third
    assert NO_ENTITY_EPOCHS == 3
    warning = no_entity_warning(history[:3], 40, config)
    assert warning.startswith("dev F1 below 1 in each of the first 3 epochs (12 optimiser "
                              "steps of --batch-tokens 2000): the model finds no dev entity")
    assert "--small-corpus-tokens" in warning and "--min-steps" in warning
    assert no_entity_warning(history[:2], 40, config) is None  # not yet
    assert no_entity_warning(history, 40, config) is None  # said already
    found = [*history[:2], {"epoch": 3, "dev_f1": 1.5, "steps": 4}]
    assert no_entity_warning(found, 40, config) is None
    assert "the dev split has no entity" in no_entity_warning(history[:3], 0, config)
    # a record without steps (written before they were counted) counts none
    assert steps_taken(TrainState(history=[{"epoch": 1, "dev_f1": 0.0}])) == 0


def test_a_small_corpus_trains_with_its_settings_end_to_end(tmp_path, caplog):
    from docgraph.cli import train_main

    data = _corpus(tmp_path / "mine", documents=3)
    run = tmp_path / "run"
    # --min-steps above what 4 epochs take: early stopping (patience 1) waits for the 2 steps
    # of half the epoch cap, not for 1000
    flags = [f for f in TINY_FLAGS if f != "--quiet"]
    assert train_main(["--dataset", "column", "--data-dir", str(data), "--output-dir", str(run),
                       *flags, "--epochs", "4", "--patience", "1", "--min-steps", "1000"]) == 0
    saved = json.loads((run / "config.json").read_text())["train"]
    assert (saved["optimizer"], saved["batch_tokens"], saved["processes"]) == ("adam", 500, 1)
    assert (saved["epochs"], saved["patience"], saved["min_steps"]) == (4, 1, 1000)
    metrics = json.loads((run / "metrics.json").read_text())
    records = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()]
    assert [r["steps"] for r in records] == [1] * metrics["epochs"]  # one batch of 500
    assert metrics["epochs"] >= 2 and metrics["stop_reason"] == (
        "max_epochs" if metrics["epochs"] == 4 else "early_stopping")
    log = (run / "train.log").read_text()
    assert ("--min-steps 1000 is more than the 2 steps of half the epoch cap (--epochs 4, 1 "
            "step an epoch of --batch-tokens 500): early stopping waits for 2 steps") in log
    assert f"training stopped after epoch {metrics['epochs']} by " in log
    assert log.count("small corpus (3 documents, 42 tokens; --small-corpus-tokens 20,000): "
                     "--optimizer adam --lr 0.005") == 1
    # a dev split without entities: F1 0 whatever the model does, and the warning says so
    plain = DOCUMENT.replace("B-ORG", "O").replace("B-LOC", "O").replace("B-PER", "O")
    data = _corpus(tmp_path / "nodev", documents=3, dev=plain.replace("I-PER", "O"))
    caplog.clear()
    assert train_main(["--dataset", "column", "--data-dir", str(data), "--output-dir",
                       str(tmp_path / "run2"), *flags, "--epochs", "3"]) == 0
    assert "the dev split has no entity" in caplog.text
