"""The configuration of a run that starts from a model (docgraph/config/init_from.py): the
model's [model] section, its vectors and language model; a conflicting architecture setting is
refused naming where it was set; train.py's check of --init-from, before torch loads."""

from __future__ import annotations

from dataclasses import replace

import pytest

from docgraph.cli.arguments import check_arguments, given_settings, train_parser
from docgraph.config import ConfigError, ExperimentConfig, GCDocConfig, UsageError
from docgraph.config.init_from import (
    ARCHITECTURE,
    TUNABLE,
    adds_language_model,
    architecture_conflicts,
    init_from_config,
)


def _model() -> ExperimentConfig:
    return ExperimentConfig(dataset="conll03", embeddings="glove-6b-50d",
                            model=GCDocConfig(hidden=64, threshold=1.5, dropout=0.4))


def test_the_settings_split_into_architecture_and_tunable():
    assert {"hidden", "sent_dim", "word_dim", "graph", "pruning", "window", "lm_dim"} <= \
        set(ARCHITECTURE)
    assert {"threshold", "dropout", "theta", "constrained_decoding", "freeze_embeddings"} <= \
        set(TUNABLE)
    assert not set(ARCHITECTURE) & set(TUNABLE)


def test_the_model_s_settings_unless_given():
    run = ExperimentConfig(dataset="column", embeddings="glove-6b-50d",
                           model=GCDocConfig(dropout=0.2, hidden=64))
    merged = init_from_config(run, _model(), {"model.dropout": "--dropout"}, "conll03")
    assert merged.model.hidden == 64 and merged.model.threshold == 1.5  # the model's
    assert merged.model.dropout == 0.2  # given
    assert merged.dataset == "column"  # the run's own
    unset = init_from_config(run, _model(), {}, "conll03")
    assert unset.model.dropout == 0.4


def test_a_choice_made_on_the_model_s_dev_is_not_inherited():
    model = replace(_model(), model=replace(_model().model, label_consistency=True))
    run = ExperimentConfig(dataset="column", embeddings="glove-6b-50d",
                           model=GCDocConfig(hidden=64))
    assert init_from_config(run, model, {}, "conll03").model.label_consistency is False
    run = replace(run, model=GCDocConfig(hidden=64, label_consistency=True))
    given = {"model.label_consistency": "my.toml [model] label_consistency"}
    assert init_from_config(run, model, given, "conll03").model.label_consistency is True


@pytest.mark.parametrize(("key", "where", "change", "said"), [
    ("model.hidden", "--hidden", {"model": GCDocConfig(hidden=32)},
     "--hidden = 32: --init-from conll03 was trained with [model] hidden = 64"),
    ("model.graph", "my.toml [model] graph", {"model": GCDocConfig(hidden=64, graph=False)},
     "my.toml [model] graph = false: --init-from conll03 was trained with [model] graph = "
     "true"),
    ("embeddings", "--embeddings", {"embeddings": "none"},
     "--embeddings = 'none': --init-from conll03 was trained with embeddings = "
     "'glove-6b-50d'"),
])
def test_a_conflicting_setting_is_refused_naming_where(key, where, change, said):
    run = ExperimentConfig(**{"embeddings": "glove-6b-50d", **change})
    with pytest.raises(ConfigError) as err:
        init_from_config(run, _model(), {key: where}, "conll03")
    assert str(err.value).startswith(said)
    # the same value as the model's is no conflict
    same = init_from_config(_model(), _model(), {key: where}, "conll03")
    assert same.model == _model().model


def test_a_language_model_may_be_given_to_a_model_without_one():
    given = {"lm": "--lm", "lm_pack": "--lm-pack"}
    run = ExperimentConfig(embeddings="glove-6b-50d", lm="/encoders/minilm", lm_pack=True)
    merged = init_from_config(run, _model(), given, "conll03")
    assert merged.lm == "/encoders/minilm" and merged.lm_pack  # the run's
    assert merged.embeddings == "glove-6b-50d" and merged.model.hidden == 64  # the model's
    assert adds_language_model(run, _model())
    # a model that reads one keeps it: another is refused
    with_lm = replace(_model(), lm="/encoders/bert", model=replace(_model().model, lm_dim=768))
    assert not adds_language_model(run, with_lm)
    with pytest.raises(ConfigError, match=r"^--lm = '/encoders/minilm': --init-from conll03 "
                                          r"was trained with lm = '/encoders/bert'"):
        init_from_config(run, with_lm, given, "conll03")
    # the features' size grows from 0 without conflict, not from another size
    assert architecture_conflicts(GCDocConfig(lm_dim=384), GCDocConfig()) == []
    assert architecture_conflicts(GCDocConfig(lm_dim=384), GCDocConfig(lm_dim=768)) == [
        "[model] lm_dim = 384 (the model's: 768)"]


def test_architecture_conflicts_lists_each():
    assert architecture_conflicts(GCDocConfig(hidden=64), GCDocConfig(hidden=64)) == []
    assert architecture_conflicts(GCDocConfig(hidden=32, window=0), GCDocConfig()) == [
        "[model] hidden = 32 (the model's: 200)", "[model] window = 0 (the model's: 2)"]


def test_train_py_checks_init_from_before_torch(tmp_path):
    args = train_parser().parse_args(["--init-from", str(tmp_path / "none"),
                                      "--output-dir", str(tmp_path / "run")])
    with pytest.raises(UsageError, match=r"^--init-from .*none: neither a model directory"):
        check_arguments(args)
    args = train_parser().parse_args(["--init-from", "conll03", "--theta", "0.3",
                                      "--output-dir", str(tmp_path / "run")])
    config = check_arguments(args)
    assert config.init_from == "conll03" and config.model.threshold == 1.5
    assert config.model.theta == 0.3 and config.dataset == "sample"
    assert given_settings(args)["model.theta"] == "--theta"
    args = train_parser().parse_args(["--init-from", "conll03", "--no-graph",
                                      "--output-dir", str(tmp_path / "run")])
    with pytest.raises(ConfigError, match=r"^--no-graph = false: --init-from conll03"):
        check_arguments(args)


def test_a_preset_s_settings_are_named_by_file_and_key(tmp_path):
    preset = tmp_path / "mine.toml"
    preset.write_text("[model]\nhidden = 10\n[train]\nepochs = 2\n")
    args = train_parser().parse_args(["--config", str(preset), "--init-from", "conll03",
                                      "--output-dir", str(tmp_path / "run")])
    assert given_settings(args) == {"model.hidden": f"{preset} [model] hidden",
                                    "train.epochs": f"{preset} [train] epochs",
                                    "init_from": "--init-from"}
    with pytest.raises(ConfigError, match=rf"^{preset} \[model\] hidden = 10: --init-from"):
        check_arguments(args)
