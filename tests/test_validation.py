"""Every configuration value is checked before any work, naming the flag or key."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import pytest
from conftest import ROOT, script_env

from docgraph.config import ConfigError, check_values, section_settings
from docgraph.config.fields import check_field

BAD_FLAGS = [
    ("--window", "-2", "an integer >= 0"),
    ("--threshold", "-1", "a number >= 0"),
    ("--max-minutes", "-5", "a number >= 0"),
    ("--lr", "-1", "a number > 0"),
    ("--batch-tokens", "0", "an integer >= 1"),
    ("--dropout", "1.5", "a number >= 0 and < 1"),
    ("--hidden", "0", "an integer >= 1"),
    ("--samples", "0", "an integer >= 1"),
    ("--patience", "0", "an integer >= 1"),
    ("--optimizer", "adagrad", "one of 'sgd', 'adam'"),
    ("--sent-dim", "7", "an even integer >= 2"),
    ("--lm-context", "-1", "an integer >= 0"),
]


def test_rules_cover_every_field_of_every_configuration():
    from docgraph.config import ExperimentConfig, GCDocConfig, GraphConfig, TrainConfig
    from docgraph.config.fine_tune import FineTuneConfig

    for section, cls in (("model", GCDocConfig), ("graph", GraphConfig),
                         ("train", TrainConfig), ("fine_tune", FineTuneConfig)):
        assert set(section_settings(section)) == {f.name for f in fields(cls)}, section
    top = {f.name for f in fields(ExperimentConfig)} - {"model", "graph", "train", "fine_tune"}
    assert set(section_settings("")) == top
    # the choices the modules define are the ones the declarations allow (config/ has no torch)
    from docgraph.nn.cross_sentence import WINDOW_ENCODINGS
    from docgraph.nn.relation import RELATION_LABELS
    from docgraph.nn.uncertainty import MC_DROPOUT_MODES

    model = section_settings("model")
    assert model["window_encoding"].rule.choices == WINDOW_ENCODINGS
    assert model["mc_dropout"].rule.choices == MC_DROPOUT_MODES
    assert set(model["relation_labels"].rule.choices) == set(RELATION_LABELS)
    for preset in sorted((ROOT / "configs").glob("*.toml")):
        from docgraph.config import load_toml

        check_values(load_toml(preset), str(preset))  # the shipped presets are valid


@pytest.mark.parametrize("flag,value,expected", BAD_FLAGS)
def test_bad_flags_fail_before_torch_is_imported(flag, value, expected):
    code = ("import sys\nfrom docgraph.cli import train_main\n"
            f"try:\n    train_main([{flag!r}, {value!r}])\n"
            "except SystemExit as exit:\n    print(exit.code, 'torch' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=script_env(), cwd=ROOT, timeout=60)
    assert res.stdout.split() == ["2", "False"], res.stdout + res.stderr
    assert f"{flag} = " in res.stderr and expected in res.stderr


def test_toml_values_of_the_wrong_type_name_file_and_key(tmp_path):
    preset = tmp_path / "bad.toml"
    preset.write_text('dataset = "sample"\n[train]\nepochs = "ten"\n')
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "train.py"), "--config",
                          str(preset)], capture_output=True, text=True, env=script_env(),
                         cwd=ROOT, timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert f"{preset} [train] epochs = 'ten': expected an integer >= 1" in res.stderr


def test_the_python_api_checks_the_same_rules():
    from docgraph.config import ExperimentConfig, TrainConfig, apply_overrides
    from docgraph.model import GCDocConfig

    with pytest.raises(ValueError, match=r"\[model\] dropout = 1.5"):
        GCDocConfig(dropout=1.5)
    with pytest.raises(ValueError, match=r"\[train\] lr = 0"):
        TrainConfig(lr=0)
    with pytest.raises(ValueError, match=r"preset.toml \[graph\] max_neighbours = -1"):
        apply_overrides(ExperimentConfig(), {"graph": {"max_neighbours": -1}}, "preset.toml")
    with pytest.raises(ValueError, match=r"device = 'gpu'"):
        ExperimentConfig(device="gpu")


@pytest.mark.parametrize("section,key,good,bad", [
    ("train", "epochs", 3, True),          # a bool is not an integer
    ("train", "lr", 1, float("nan")),      # an int is a number; NaN is not
    ("graph", "max_doc_tokens", None, 0),  # optional
    ("graph", "skip_tokens", ["the", "."], "the"),
    ("model", "isolated", "gate", "Gate"),
])
def test_check_field_types(section, key, good, bad):
    setting = section_settings(section)[key]
    check_field(setting, good, key)
    with pytest.raises(ConfigError, match=key):
        check_field(setting, bad, key)


def test_a_new_field_is_a_flag_a_toml_key_and_a_checked_value():
    """Declaring a field is all it takes: the check, the TOML key and the message."""
    from dataclasses import dataclass

    from docgraph.config.fields import check_config, integer, settings_of

    @dataclass
    class Section:
        depth: int = integer(3, low=1, flag="--depth", help="layers")

        def __post_init__(self) -> None:
            check_config(self, "toy")

    assert Section().depth == 3
    with pytest.raises(ConfigError, match=r"\[toy\] depth = 0: expected an integer >= 1"):
        Section(depth=0)
    (name, setting), = settings_of(Section)
    assert (name, setting.flag, setting.help) == ("depth", "--depth", "layers")


def test_nn_defaults_are_the_configuration_defaults():
    import inspect

    from docgraph.config import GCDocConfig
    from docgraph.nn import CharEncoder, CrossSentenceEncoder, DocumentGraphModule
    from docgraph.nn.uncertainty import UncertaintyTagger

    config = GCDocConfig()
    module = inspect.signature(DocumentGraphModule).parameters
    for name in ("threshold", "num_samples", "dropout", "uncertainty_hidden", "mc_dropout",
                 "relation_labels", "isolated", "pruning", "edge_weights"):
        assert module[name].default == getattr(config, name), name
    tagger = inspect.signature(UncertaintyTagger).parameters
    assert tagger["threshold"].default == config.threshold
    assert tagger["hidden_channels"].default == config.uncertainty_hidden
    cross = inspect.signature(CrossSentenceEncoder).parameters
    assert (cross["sent_channels"].default, cross["window"].default) == (
        config.sent_dim, config.window)
    chars = inspect.signature(CharEncoder).parameters
    assert (chars["char_dim"].default, chars["hidden_channels"].default) == (
        config.char_dim, config.char_hidden)


@pytest.mark.parametrize("tool", ["evaluate", "predict", "visualize"])
@pytest.mark.parametrize("value,expected", [("-1", "a number >= 0"), ("nan", "a number >= 0")])
def test_tagging_threshold_is_checked_by_the_training_rule(tool, value, expected, tmp_path):
    import zipfile

    model = tmp_path / "model"
    model.mkdir()
    for name in ("config.json", "vocab.json"):
        (model / name).write_text("{}")
    zipfile.ZipFile(model / "model.pt", "w").close()  # an archive: the check gets to the flag
    (tmp_path / "in.txt").write_text("Hello .\n")
    entry = {"evaluate": "evaluate_main", "predict": "predict_main",
             "visualize": "visualize_main"}[tool]
    extra = {"evaluate": [], "predict": ["in.txt"], "visualize": ["--noisy", "5"]}[tool]
    code = (f"import sys\nfrom docgraph.cli import {entry}\n"
            f"try:\n    {entry}(['--model', {str(model)!r}, '--threshold', {value!r}, "
            f"*{extra!r}])\n"
            "except SystemExit as exit:\n    print(exit.code, 'torch' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=script_env(), cwd=tmp_path, timeout=60)
    assert res.stdout.split() == ["2", "False"], res.stdout + res.stderr
    assert "--threshold = " in res.stderr and expected in res.stderr
