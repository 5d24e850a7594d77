"""Tests of :mod:`docgraph.config.train`: the optimisation settings, their paper defaults and
their checks."""

from __future__ import annotations

from dataclasses import fields

import pytest

from docgraph.config import ConfigError, TrainConfig


def test_the_defaults_are_the_papers_optimisation():
    config = TrainConfig()
    assert (config.optimizer, config.lr, config.momentum) == ("sgd", 0.01, 0.0)
    assert (config.weight_decay, config.clip_norm) == (1e-8, 5.0)
    assert (config.loss_reduction, config.lr_schedule) == ("sum", "none")
    assert (config.epochs, config.patience) == (50, 8)
    assert (config.threads, config.processes, config.max_minutes) == (0, 0, 0.0)
    assert config.deterministic is False


def test_every_field_has_a_default():
    assert TrainConfig() == TrainConfig(**{f.name: f.default for f in fields(TrainConfig)})


def test_the_bounds_are_accepted():
    config = TrainConfig(epochs=1, patience=1, lr=1e-12, momentum=0.0, weight_decay=0.0,
                         clip_norm=0.0, lr_decay=0.0, batch_tokens=1, eval_batch_tokens=1,
                         threads=0, processes=0, max_minutes=0.0)
    assert config.clip_norm == 0.0 and config.batch_tokens == 1
    assert TrainConfig(momentum=0.999).momentum == 0.999
    assert TrainConfig(lr=1).lr == 1  # an integer is a number


@pytest.mark.parametrize(("changes", "message"), [
    ({"epochs": 0}, "epochs = 0: expected an integer >= 1"),
    ({"epochs": True}, "epochs = True: expected an integer >= 1"),
    ({"patience": 0}, "patience = 0: expected an integer >= 1"),
    ({"optimizer": "adagrad"}, "optimizer = 'adagrad': expected one of 'sgd', 'adam'"),
    ({"lr": 0}, "lr = 0: expected a number > 0"),
    ({"lr": float("nan")}, "lr = nan: expected a number > 0"),
    ({"momentum": 1.0}, "momentum = 1.0: expected a number >= 0 and < 1"),
    ({"weight_decay": -1e-8}, "weight_decay = -1e-08: expected a number >= 0"),
    ({"clip_norm": -1.0}, "clip_norm = -1.0: expected a number >= 0"),
    ({"lr_schedule": "step"}, "lr_schedule = 'step': expected one of 'none', 'inverse', "
                              "'cosine'"),
    ({"batch_tokens": 0}, "batch_tokens = 0: expected an integer >= 1"),
    ({"eval_batch_tokens": 0}, "eval_batch_tokens = 0: expected an integer >= 1"),
    ({"loss_reduction": "mean"}, "loss_reduction = 'mean': expected one of 'sum', "
                                 "'sentence_mean'"),
    ({"threads": -1}, "threads = -1: expected an integer >= 0"),
    ({"processes": -1}, "processes = -1: expected an integer >= 0"),
    ({"max_minutes": -1.0}, "max_minutes = -1.0: expected a number >= 0"),
    ({"deterministic": "yes"}, "deterministic = 'yes': expected true or false"),
])
def test_bad_values_name_the_train_field(changes, message):
    with pytest.raises(ConfigError) as info:
        TrainConfig(**changes)
    assert str(info.value) == f"[train] {message}"
