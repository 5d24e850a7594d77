"""Every configuration value is checked before any work, naming the flag or key."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import pytest
from conftest import ROOT, script_env

from docgraph.validation import RULES, ConfigError, check_field, check_values

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
    from docgraph.config import ExperimentConfig, TrainConfig
    from docgraph.graph import GraphConfig
    from docgraph.model import GCDocConfig

    for section, cls in (("model", GCDocConfig), ("graph", GraphConfig),
                         ("train", TrainConfig)):
        assert set(RULES[section]) == {f.name for f in fields(cls)}, section
    top = {f.name for f in fields(ExperimentConfig)} - {"model", "graph", "train"}
    assert set(RULES[""]) == top
    # the choices the modules define are the ones the rules allow (validation.py imports no torch)
    from docgraph.nn.cross_sentence import WINDOW_ENCODINGS
    from docgraph.nn.relation import RELATION_LABELS
    from docgraph.nn.uncertainty import MC_DROPOUT_MODES

    model = RULES["model"]
    assert model["window_encoding"].choices == WINDOW_ENCODINGS
    assert model["mc_dropout"].choices == MC_DROPOUT_MODES
    assert set(model["relation_labels"].choices) == set(RELATION_LABELS)
    for preset in sorted((ROOT / "configs").glob("*.toml")):
        from docgraph.presets import load_toml

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
    check_field(section, key, good)
    with pytest.raises(ConfigError, match=key):
        check_field(section, key, bad)
