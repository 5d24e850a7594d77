"""Tests of :mod:`docgraph.cli.arguments`, in this process: the parsers and flags made from
the configuration's declarations, the precedence of defaults, presets and flags, and every
check that answers a bad argument in one line before torch loads. (The scripts themselves, run
in fresh interpreters, are ``tests/test_validation.py``'s and ``tests/test_input_checks.py``'s.)
"""

from __future__ import annotations

import argparse
import sys
import zipfile

import pytest
from conftest import TINY_MODEL

from docgraph.cli.arguments import (
    COMBINED_SWITCHES,
    SWITCHES,
    VALUE_FLAGS,
    OneLineParser,
    check_arguments,
    check_model_argument,
    check_model_size,
    check_some_tokens,
    check_stats_arguments,
    check_tagging_arguments,
    check_visualize_arguments,
    chosen_preset,
    config_from_args,
    evaluate_parser,
    fail,
    flag_dest,
    flag_help,
    flag_metavar,
    is_tty,
    non_negative_float,
    non_negative_int,
    positive_int,
    predict_parser,
    rule_type,
    stats_parser,
    switch_help,
    train_checks,
    train_parser,
    value_flags,
    visualize_parser,
)
from docgraph.config import (
    ConfigError,
    ExperimentConfig,
    UsageError,
    apply_overrides,
    preset_path,
    section_settings,
)
from docgraph.config.fields import settings_of
from docgraph.config.size import ModelSizeError, estimate_parameters, training_bytes
from docgraph.config.tagging import EVALUATE, PREDICT, VISUALIZE, TaggingConfig, tagging_settings
from docgraph.data.conll import check_input_file
from docgraph.data.errors import CorpusFormatError, DataNotFoundError
from docgraph.persistence.shipped import shipped_models
from docgraph.tagging.prediction_io import OUTPUT_FORMATS


@pytest.fixture
def model(tmp_path):
    """A directory that passes the model checks: its three files, ``model.pt`` an archive."""
    directory = tmp_path / "model"
    directory.mkdir()
    for name in ("config.json", "vocab.json"):
        (directory / name).write_text("{}")
    zipfile.ZipFile(directory / "model.pt", "w").close()
    return directory


# ------------------------------------------------------------------ flags from declarations
def test_flags_switches_and_help_come_from_the_declarations():
    declared = {s.flag for section in ("", "model", "graph", "train", "fine_tune")
                for s in section_settings(section).values() if s.flag}
    assert set(VALUE_FLAGS) == declared
    assert VALUE_FLAGS["--samples"][:2] == ("model", "num_samples")
    assert VALUE_FLAGS["--seed"][:2] == ("", "seed")
    assert SWITCHES["--no-graph"] == {"model": {"graph": False}}
    assert SWITCHES["--lm-pack"] == {"": {"lm_pack": True}}
    assert SWITCHES["--fully-annotated"] == {"fine_tune": {"keep_types": "off"}}
    assert SWITCHES["--baseline"] == {"model": {"cross_sentence": False, "graph": False}}
    text = train_parser().format_help()
    # the help of a flag says what it does, what it accepts and the built-in default
    assert "[model] threshold: uncertainty threshold for pruning (a number >= 0; default" \
        in " ".join(text.split())
    for flag in (*VALUE_FLAGS, *SWITCHES):
        assert flag in text


def test_help_of_a_switch_that_turns_a_field_off_says_so():
    assert switch_help({"model": {"pruning": False}}).startswith("turns off: prune")
    assert switch_help({"model": {"constrained_decoding": True}}).startswith(
        section_settings("model")["constrained_decoding"].help)


def test_help_of_a_switch_that_sets_several_fields_lists_them():
    assert switch_help(SWITCHES["--baseline"]) == ("sets [model] cross_sentence = false, "
                                                   "[model] graph = false")
    assert switch_help(SWITCHES["--lm-pack"]) == ("encode consecutive sentences in shared --lm "
                                                  "windows (sets lm_pack = true)")
    assert set(COMBINED_SWITCHES) <= set(SWITCHES)


def test_flag_dest():
    assert flag_dest("--lm-context") == "lm_context"
    assert flag_dest("--seed") == "seed"
    assert value_flags()["--lm-context"].dest == "lm_context"


def test_flag_help_says_what_a_value_may_be_and_the_default():
    settings = {**section_settings("train"), **section_settings("")}
    assert flag_help(settings["lr"], 0.01) == "learning rate (a number > 0; default 0.01)"
    assert flag_help(settings["optimizer"], "sgd") == ("sgd (paper) or adam (one of 'sgd', "
                                                       "'adam'; default 'sgd')")
    assert flag_help(settings["lm"], None) == settings["lm"].help  # free text, no default
    assert flag_help(settings["deterministic"], False).endswith("; default false)")


def test_flag_metavar():
    settings = {**section_settings("train"), **section_settings("")}
    assert flag_metavar(settings["optimizer"]) == "{sgd,adam}"
    assert flag_metavar(settings["epochs"]) == "N"
    assert flag_metavar(settings["lr"]) == "X"
    assert flag_metavar(settings["embeddings"]) == "NAME|PATH"  # declared
    assert flag_metavar(settings["lm_cache_dir"]) == "TEXT"


# ------------------------------------------------------------------------- argparse types
@pytest.mark.parametrize(("parse", "good", "bad", "expected"), [
    (non_negative_int, {"0": 0, "7": 7}, ["-1", "x", "1.5", ""], "an integer >= 0"),
    (positive_int, {"1": 1, "12": 12}, ["0", "-3", "one"], "a positive integer"),
    (non_negative_float, {"0": 0.0, "2.5": 2.5, "1e3": 1000.0},
     ["-0.5", "nan", "inf", "x"], "a number >= 0"),
])
def test_argparse_types(parse, good, bad, expected):
    for text, value in good.items():
        assert parse(text) == value
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError) as info:
            parse(text)
        assert str(info.value) == f"expected {expected}, got {text!r}"


def test_fail_is_one_line_and_status_2(capsys):
    with pytest.raises(SystemExit) as info:
        fail("--window -2: no")
    assert info.value.code == 2
    assert capsys.readouterr().err == "error: --window -2: no\n"


def test_a_one_line_parser_answers_in_one_line(capsys):
    with pytest.raises(SystemExit) as info:
        stats_parser().parse_args(["--dataset", "sample", "--neighbours", "0"])
    assert info.value.code == 2
    # one line, no usage text before it
    assert capsys.readouterr().err == ("error: argument --neighbours: expected a positive "
                                       "integer, got '0'\n")
    assert isinstance(visualize_parser(), OneLineParser)


def test_the_tagging_parsers_defaults():
    evaluate = evaluate_parser().parse_args(["--model", "m"])
    assert (evaluate.split, evaluate.device, evaluate.mc_seed, evaluate.processes) == (
        "test", "auto", 0, 0)
    assert evaluate.threshold is None and evaluate.progress_interval == 30.0
    predict = predict_parser().parse_args(["--model", "m", "a.txt", "b.txt"])
    assert predict.inputs == ["a.txt", "b.txt"] and predict.format == next(iter(OUTPUT_FORMATS))
    assert (predict.input_format, predict.documents, predict.allow_empty) == ("auto", "file",
                                                                            False)
    visualize = visualize_parser().parse_args(["--model", "m"])
    assert (visualize.device, visualize.split, visualize.max_words) == ("auto", "dev", 6)


@pytest.mark.parametrize(("tool", "parser"), [(EVALUATE, evaluate_parser),
                                               (PREDICT, predict_parser),
                                               (VISUALIZE, visualize_parser)])
def test_the_tagging_flags_come_from_the_declarations(tool, parser):
    """Each tool takes exactly the :class:`TaggingConfig` fields marked for it, with their
    declared defaults, choices and metavars; the others are not flags of it."""
    actions = {a.dest: a for a in parser()._actions}
    flags: dict[str, list[str]] = {}
    for a in parser()._actions:
        flags.setdefault(a.dest, []).extend(a.option_strings)
    taken = dict(tagging_settings(tool))
    for name, setting in settings_of(TaggingConfig):
        if name not in taken:
            assert name not in actions, (tool, name)
            continue
        action = actions[name]
        assert action.default == getattr(TaggingConfig(), name)
        assert setting.help in action.help
        if setting.switches:
            assert flags[name] == list(setting.switches)
        else:
            assert action.option_strings == [setting.flag]
            assert tuple(action.choices or ()) == setting.rule.choices
            assert action.metavar == (None if setting.rule.choices else setting.metavar)
    assert {"device", "threshold", "mc_seed", "lm"} <= set(taken)
    assert ("processes" in taken) == (tool != VISUALIZE)
    assert ("max_doc_tokens" in taken) == (tool == PREDICT)


def test_a_tagging_flag_is_read_and_checked_by_its_rule():
    settings = dict(settings_of(TaggingConfig))
    read = rule_type(settings["mc_seed"])
    assert read("7") == 7
    for bad in ("-1", "x", "1.5"):
        with pytest.raises(argparse.ArgumentTypeError,
                           match=f"^expected an integer >= 0, got {bad!r}$"):
            read(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="expected an integer >= 1, got '0'"):
        rule_type(settings["max_doc_tokens"])("0")
    with pytest.raises(argparse.ArgumentTypeError,
                       match="expected one of 'auto', 'cpu', 'cuda', got 'tpu'"):
        rule_type(settings["device"])("tpu")
    args = predict_parser().parse_args(["--model", "m", "a.txt", "--tokenized",
                                        "--max-doc-tokens", "300", "--device", "cpu"])
    assert (args.tokenized, args.max_doc_tokens, args.device) == (True, 300, "cpu")



def test_is_tty(monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert is_tty()
    monkeypatch.setenv("TERM", "dumb")
    assert not is_tty()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert not is_tty()


# ------------------------------------------------------------------- train.py's config
def test_defaults_then_preset_then_flags(tmp_path):
    preset = tmp_path / "p.toml"
    preset.write_text('dataset = "sample"\n[train]\nepochs = 7\nlr = 0.5\n[model]\nhidden = 9\n')
    args = train_parser().parse_args(["--config", str(preset), "--lr", "0.25", "--no-graph"])
    config = config_from_args(args)
    assert config.train.epochs == 7  # the preset over the default
    assert config.train.lr == 0.25  # the flag over the preset
    assert config.model.hidden == 9 and config.model.graph is False
    assert config.train.patience == ExperimentConfig().train.patience  # untouched: default


def test_the_dataset_preset_is_read_unless_another_is_given():
    args = train_parser().parse_args([])
    assert chosen_preset(args) == preset_path("sample")
    config = config_from_args(args)
    assert config.dataset == "sample"
    args = train_parser().parse_args(["--dataset", "column"])  # no configs/column.toml
    assert chosen_preset(args) is None
    config = config_from_args(args)
    assert (config.dataset, config.output_dir) == ("column", "runs/column")


def test_a_dataset_flag_wins_over_the_presets(tmp_path):
    preset = tmp_path / "p.toml"
    preset.write_text('dataset = "conll03"\n')
    args = train_parser().parse_args(["--config", str(preset), "--dataset", "sample"])
    assert config_from_args(args).dataset == "sample"


def test_a_missing_config_file(tmp_path):
    args = train_parser().parse_args(["--config", str(tmp_path / "none.toml")])
    with pytest.raises(UsageError) as info:
        chosen_preset(args)
    assert str(info.value) == f"--config {tmp_path / 'none.toml'}: file not found"


def test_a_resumed_run_takes_its_saved_configuration_and_the_flags():
    base = apply_overrides(ExperimentConfig(), {"model": {"hidden": 11}, "output_dir": "old"})
    args = train_parser().parse_args(["--resume", "runs/x", "--epochs", "3", "--baseline"])
    config = config_from_args(args, base)
    assert config.model.hidden == 11 and config.train.epochs == 3
    assert (config.model.graph, config.model.cross_sentence) == (False, False)
    assert config.output_dir == "runs/x"


def test_check_arguments_names_the_flag_or_the_file(tmp_path, monkeypatch):
    # the default --output-dir (runs/sample) is read from a working directory of the test's
    # own: the checkout's may hold the run of the README's quick start
    monkeypatch.chdir(tmp_path)
    check_arguments(train_parser().parse_args(["--hidden", "16"]))
    with pytest.raises(ConfigError, match="^--window = -2: expected an integer >= 0"):
        check_arguments(train_parser().parse_args(["--window", "-2"]))
    with pytest.raises(ConfigError, match="^--seeds = -1: expected an integer >= 0"):
        check_arguments(train_parser().parse_args(["--seeds", "1", "-1"]))
    preset = tmp_path / "bad.toml"
    preset.write_text("[train]\nepochs = 0\n")
    with pytest.raises(ConfigError, match=rf"^{preset} \[train\] epochs = 0: "):
        check_arguments(train_parser().parse_args(["--config", str(preset)]))
    with pytest.raises(DataNotFoundError, match=f"no train data in {tmp_path}"):
        check_arguments(train_parser().parse_args(["--dataset", "conll03", "--data-dir",
                                                   str(tmp_path)]))
    with pytest.raises(ModelSizeError, match="^--hidden 1000000: "):
        check_arguments(train_parser().parse_args(["--hidden", "1000000"]))


def test_check_arguments_of_a_resumed_run_checks_its_checkpoint(tmp_path):
    with pytest.raises(UsageError) as info:  # nothing to resume: refused before torch loads
        check_arguments(train_parser().parse_args(["--resume", str(tmp_path)]))
    assert str(info.value) == (f"--resume {tmp_path}: no checkpoint last.pt in that directory "
                               "(nothing to resume)")
    with pytest.raises(UsageError, match=r"no such run directory$"):
        check_arguments(train_parser().parse_args(["--resume", str(tmp_path / "gone")]))
    with pytest.raises(UsageError, match=r"^--resume and --seeds cannot be combined$"):
        check_arguments(train_parser().parse_args(["--resume", str(tmp_path), "--seeds", "1"]))
    (tmp_path / "last.pt").write_bytes(b"half a checkpoint")
    with pytest.raises(UsageError) as info:
        check_arguments(train_parser().parse_args(["--resume", str(tmp_path)]))
    assert str(info.value) == (f"--resume {tmp_path}: {tmp_path / 'last.pt'}: not a readable "
                               "docgraph checkpoint: truncated, or not a checkpoint at all (17 "
                               "bytes without the end of a PyTorch archive); copy it again or "
                               "retrain")


def test_check_model_size_counts_what_training_keeps(tmp_path):
    def config(device, **train):
        return apply_overrides(ExperimentConfig(), {
            "device": device, "model": {"hidden": 2000}, "train": train})

    count = estimate_parameters(config("cpu").model)
    adam = training_bytes(count, "adam")
    check_model_size(config("cpu", optimizer="adam"), available=adam)
    with pytest.raises(ModelSizeError, match=r"^--hidden 2000: .* and training it in 2 "
                                             r"processes needs at least "):
        check_model_size(config("cpu", optimizer="adam", processes=2), available=adam)
    with pytest.raises(ModelSizeError, match="^--hidden 2000: "):
        check_model_size(config("cpu", optimizer="adam"), available=adam - 1)
    # another device: the weights alone, built in host memory before they move
    check_model_size(config("auto", optimizer="adam"), available=4 * count)
    with pytest.raises(ModelSizeError, match=" and building it needs at least "):
        check_model_size(config("cuda"), available=4 * count - 1)


def test_check_model_size_without_a_memory_figure_lets_it_through(monkeypatch):
    monkeypatch.setattr(train_checks, "host_available_memory", lambda: None)
    check_model_size(apply_overrides(ExperimentConfig(), {"model": {"hidden": 10**6}}))
    small = apply_overrides(ExperimentConfig(), {"model": TINY_MODEL})
    check_model_size(small, available=10**9)


# ------------------------------------------------------------------------ tagging tools
def test_check_model_argument(model, tmp_path):
    assert check_model_argument(str(model)) == model.resolve()
    for name in shipped_models():
        check_model_argument(name)
    names = ", ".join(shipped_models()) or "none installed"
    with pytest.raises(UsageError) as info:
        check_model_argument(str(tmp_path / "none"))
    assert str(info.value) == (f"--model {tmp_path / 'none'}: neither a model directory nor a "
                               f"shipped model (shipped: {names})")
    (model / "vocab.json").unlink()
    (model / "model.pt").unlink()
    with pytest.raises(UsageError) as info:
        check_model_argument(str(model), "--from")
    assert str(info.value) == (f"--from {model}: not a model directory written by train.py "
                               "(no vocab.json, model.pt; train.py writes config.json, "
                               "vocab.json, model.pt)")
    assert (info.value.flag, info.value.value) == ("--from", str(model))
    (model / "vocab.json").write_text("{}")
    (model / "model.pt").write_bytes(b"")
    with pytest.raises(UsageError, match=rf"^--model {model}: model.pt is not a readable "
                                         "docgraph checkpoint: the file is empty"):
        check_model_argument(str(model))


def test_check_input_file(tmp_path):
    (tmp_path / "in.txt").write_text("Kalvenia won .\n")
    check_input_file(str(tmp_path / "in.txt"))
    missing = str(tmp_path / "no.txt")
    with pytest.raises(UsageError, match=f"^--data {missing}: file not found$"):
        check_input_file(missing, "--data")
    with pytest.raises(UsageError, match=f"^{missing}: input file not found$"):
        check_input_file(missing)
    with pytest.raises(UsageError, match=f"^--data {tmp_path}: expected a text file, got a "
                                         "directory$"):
        check_input_file(str(tmp_path), "--data")
    with pytest.raises(UsageError, match=f"^{tmp_path}: expected an input file, got a "
                                         "directory$"):
        check_input_file(str(tmp_path))
    (tmp_path / "bin").write_bytes(b"PK\x03\x04\x00")
    with pytest.raises(CorpusFormatError, match=":1: expected UTF-8 text or CoNLL columns, "
                                                "got a NUL byte"):
        check_input_file(str(tmp_path / "bin"))


def test_check_some_tokens(tmp_path):
    empty, text = tmp_path / "empty.txt", tmp_path / "text.txt"
    empty.write_text(" \n\n")
    text.write_text("Kalvenia won .\n")
    check_some_tokens([])
    check_some_tokens([str(empty), str(text)])
    with pytest.raises(UsageError) as info:
        check_some_tokens([str(empty)] * 3)
    assert str(info.value).startswith(f"{empty}, {empty}, {empty}: no tokens to tag (empty, "
                                      "or only whitespace")
    with pytest.raises(UsageError, match=f"^{empty}, {empty} and 3 more files: no tokens"):
        check_some_tokens([str(empty)] * 5)


def test_check_tagging_arguments(model, tmp_path):
    def check(*argv):
        check_tagging_arguments(evaluate_parser().parse_args(["--model", str(model), *argv]))

    check()
    with pytest.raises(ConfigError, match="^--threshold = -1.0: expected a number >= 0"):
        check("--threshold", "-1")
    with pytest.raises(UsageError, match=f"^--data-dir {tmp_path / 'x'}: directory not found$"):
        check("--data-dir", str(tmp_path / "x"))
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match=f"^--output-dir {tmp_path / 'file'}: exists and is "
                                         "not a directory$"):
        check("--output-dir", str(tmp_path / "file"))
    with pytest.raises(UsageError, match="--data .*: file not found"):
        check("--data", str(tmp_path / "none.conll"))
    blank = tmp_path / "blank.txt"
    blank.write_text("\n")
    args = predict_parser().parse_args(["--model", str(model), str(blank)])
    with pytest.raises(UsageError, match="no tokens to tag"):
        check_tagging_arguments(args)
    check_tagging_arguments(predict_parser().parse_args(["--model", str(model), str(blank),
                                                         "--allow-empty"]))
    with pytest.raises(UsageError, match="^--output .*: is a directory"):
        check_tagging_arguments(predict_parser().parse_args(
            ["--model", str(model), str(blank), "--allow-empty", "--output", str(tmp_path)]))


def test_the_corpus_split_is_found_before_torch_loads(tmp_path, monkeypatch):
    """A shipped model knows its dataset, not where its corpus is: ``evaluate.py`` and
    ``visualize.py`` say so at once, before anything is loaded."""
    monkeypatch.delenv("DOCGRAPH_DATA_DIR", raising=False)
    with pytest.raises(ValueError, match="^no data directory for 'conll03': pass --data-dir"):
        check_tagging_arguments(evaluate_parser().parse_args(["--model", "conll03"]))
    with pytest.raises(DataNotFoundError):
        check_tagging_arguments(evaluate_parser().parse_args(
            ["--model", "conll03", "--data-dir", str(tmp_path), "--split", "dev"]))
    labelled = tmp_path / "gold.conll"
    labelled.write_text("-DOCSTART- O\n\nParis B-LOC\n")
    check_tagging_arguments(evaluate_parser().parse_args(["--model", "conll03", "--data",
                                                          str(labelled)]))
    check_visualize_arguments(visualize_parser().parse_args(
        ["--model", "conll03", "--dataset", "sample", "--noisy", "3"]))


@pytest.mark.parametrize(("argv", "message"), [
    ([], "nothing to do: give --out FILE (with --doc), --html FILE and/or --noisy K"),
    (["--out", "f.png"], "--out needs --doc N"),
    (["--out", "f.pdf", "--doc", "0"], "--out f.pdf: the figure must be a .png or .svg file"),
    (["--noisy", "0"], "--noisy must be >= 1, got 0"),
    (["--noisy", "3", "--doc", "-1"], "--doc must be >= 0, got -1"),
    (["--noisy", "3", "--word", "Paris"], "--word needs --out FILE"),
    (["--noisy", "3", "--max-words", "-1"], "--max-words must be >= 0, got -1"),
    (["--html", "{tmp}"], "--html {tmp}: is a directory; expected a file to write"),
])
def test_check_visualize_arguments(model, tmp_path, argv, message):
    argv = [a.format(tmp=tmp_path) for a in argv]
    args = visualize_parser().parse_args(["--model", str(model), *argv])
    with pytest.raises(UsageError) as info:
        check_visualize_arguments(args)
    assert str(info.value) == message.format(tmp=tmp_path)


def test_check_visualize_arguments_that_work(model, tmp_path):
    for argv in (["--noisy", "3"], ["--out", "f.SVG", "--doc", "0", "--word", "Paris"],
                 ["--html", str(tmp_path / "page.html")]):
        check_visualize_arguments(visualize_parser().parse_args(["--model", str(model), *argv]))


def test_check_stats_arguments(tmp_path):
    check_stats_arguments(stats_parser().parse_args(["--dataset", "sample"]))
    args = stats_parser().parse_args(["--dataset", "conll03", "--data-dir", str(tmp_path)])
    with pytest.raises(DataNotFoundError, match=f"no train data in {tmp_path}"):
        check_stats_arguments(args)


def test_a_new_run_into_a_directory_with_a_run_is_refused_unless_overwrite(tmp_path):
    run = tmp_path / "run"
    args = ["--output-dir", str(run)]
    check_arguments(train_parser().parse_args(args))  # nothing there
    run.mkdir()
    (run / "train.log").write_text("a run that never saved")
    check_arguments(train_parser().parse_args(args))
    for name in ("metrics.json", "last.pt"):  # a finished run, then one under way
        (run / name).write_text("{}")
        with pytest.raises(UsageError) as info:
            check_arguments(train_parser().parse_args(args))
        assert str(info.value) == (f"--output-dir {run}: holds a run already ({name} is "
                                   f"there); --resume {run} continues it, --overwrite "
                                   "replaces it")
        (run / name).unlink()
    (run / "model.pt").write_text("{}")
    check_arguments(train_parser().parse_args([*args, "--overwrite"]))
    with pytest.raises(UsageError, match="--resume and --overwrite cannot be combined"):
        check_arguments(train_parser().parse_args(["--resume", str(run), "--overwrite"]))


def test_seeds_directories_count_as_the_run(tmp_path):
    (tmp_path / "seed-2").mkdir()
    (tmp_path / "seed-2" / "model.pt").write_bytes(b"x")
    args = ["--output-dir", str(tmp_path), "--seeds", "1", "2"]
    with pytest.raises(UsageError, match=r"model.pt is there\); --resume .*seed-2 continues"):
        check_arguments(train_parser().parse_args(args))


def test_a_held_directory_is_refused_before_torch(tmp_path):
    from docgraph.persistence.run_lock import lock_run_directory

    lock = lock_run_directory(tmp_path / "run")
    try:
        with pytest.raises(UsageError, match=r"^--output-dir .*run: in use by another run "
                                             r"\(process \d+ on "):
            check_arguments(train_parser().parse_args(["--output-dir", str(tmp_path / "run")]))
    finally:
        lock.release()
    check_arguments(train_parser().parse_args(["--output-dir", str(tmp_path / "run")]))
