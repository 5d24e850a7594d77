"""The tagging settings and defaults (``docgraph/config/tagging.py``): each declared once, in step
with what it is documented to follow."""

from __future__ import annotations

import inspect

import pytest

from docgraph.config import GCDocConfig, TrainConfig
from docgraph.config.fields import settings_of
from docgraph.config.presets import load_toml, preset_path
from docgraph.config.tagging import (
    DEFAULT_BATCH_TOKENS,
    DEFAULT_MAX_DOC_TOKENS,
    PREDICT,
    TaggingConfig,
    tagging_settings,
)


def test_tagging_batches_follow_the_evaluation_batches_of_training():
    assert TrainConfig().eval_batch_tokens == DEFAULT_BATCH_TOKENS


def test_the_chunk_length_is_the_ontonotes_presets():
    preset = preset_path("ontonotes")
    assert preset is not None
    assert load_toml(preset)["graph"]["max_doc_tokens"] == DEFAULT_MAX_DOC_TOKENS


def test_every_tagging_function_takes_the_one_default():
    from docgraph.tagging import inference

    defaults = {name: inspect.signature(fn).parameters["batch_tokens"].default
                for name, fn in vars(inference).items()
                if inspect.isfunction(fn) and fn.__module__ == inference.__name__
                and not name.startswith("_") and "batch_tokens" in inspect.signature(fn).parameters}
    assert len(defaults) >= 4
    assert set(defaults.values()) == {DEFAULT_BATCH_TOKENS}, defaults


def test_the_tagging_threshold_follows_the_model_threshold_rule():
    model_rule = dict(settings_of(GCDocConfig))["threshold"].rule
    tagging_rule = dict(settings_of(TaggingConfig))["threshold"].rule
    assert (tagging_rule.low, tagging_rule.high) == (model_rule.low, model_rule.high)
    assert tagging_rule.optional and tagging_rule.accepts(None)
    assert not tagging_rule.accepts(-1.0) and not tagging_rule.accepts(float("nan"))


def test_every_tagging_setting_has_a_flag_and_a_tool():
    tools = {"evaluate", "predict", "visualize"}
    for name, setting in settings_of(TaggingConfig):
        assert setting.marks and setting.marks <= tools, name
        assert bool(setting.flag) != bool(setting.switches), name
        assert setting.rule.accepts(getattr(TaggingConfig(), name)), name
    assert [n for n, _ in tagging_settings(PREDICT)][-4:] == ["tokenized", "allow_empty",
                                                              "scores", "min_score"]
    with pytest.raises(ValueError, match="tool must be one of evaluate, predict, visualize"):
        tagging_settings("train")
