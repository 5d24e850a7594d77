"""Defaults of tagging (``docgraph/config/tagging.py``): each declared once, in step with what
it is documented to follow."""

from __future__ import annotations

import inspect

from docgraph.config import TrainConfig
from docgraph.config.presets import load_toml, preset_path
from docgraph.config.tagging import DEFAULT_BATCH_TOKENS, DEFAULT_MAX_DOC_TOKENS


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
    assert len(defaults) >= 5
    assert set(defaults.values()) == {DEFAULT_BATCH_TOKENS}, defaults
