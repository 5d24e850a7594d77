"""GCDocConfig.precision: bf16 autocast of the forward pass (opt-in), checked on the CPU; the
host-side plans in the model's dtype."""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace

import pytest
import torch
from conftest import TINY_MODEL

from docgraph.batching.loader import collate
from docgraph.config import ConfigError
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model


def test_bf16_forward_is_close_to_fp32_and_keeps_float32_emissions_and_weights(
        sample_splits, sample_vocabs):
    graphs = documents_to_graphs(sample_splits["train"], sample_vocabs, GraphConfig())
    losses, grads = {}, {}
    for precision in ("fp32", "bf16"):
        torch.manual_seed(0)
        model = build_model(GCDocConfig(**TINY_MODEL, precision=precision), sample_vocabs)
        batch = collate(graphs, [0, 1], torch.device("cpu"), model)
        out = model(batch)
        assert out.emissions.dtype == torch.float32
        out.loss.backward()
        losses[precision] = float(out.loss)
        grads[precision] = model.emission.weight.grad
        assert all(p.dtype == torch.float32 for p in model.parameters())
    # bf16 keeps ~3 significant digits: the same loss to well under 1 %, not bit for bit
    assert losses["bf16"] != losses["fp32"]
    assert abs(losses["bf16"] - losses["fp32"]) < 0.01 * abs(losses["fp32"])
    cosine = torch.nn.functional.cosine_similarity(grads["bf16"].flatten(),
                                                   grads["fp32"].flatten(), dim=0)
    assert cosine > 0.99


def test_precision_is_checked():
    with pytest.raises(ConfigError, match="precision"):
        GCDocConfig(precision="fp16")


def _planned_tensors(value):
    """Every tensor of a plan, walking its layouts (dataclasses and lists) by brute force."""
    if isinstance(value, torch.Tensor):
        yield value
    elif is_dataclass(value):
        for f in fields(value):
            yield from _planned_tensors(getattr(value, f.name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _planned_tensors(item)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_every_planned_floating_tensor_has_the_models_dtype(dtype, sample_splits, sample_vocabs):
    graphs = documents_to_graphs(sample_splits["train"], sample_vocabs, GraphConfig())
    torch.manual_seed(0)
    model = build_model(GCDocConfig(**TINY_MODEL, window_encoding="concat"), sample_vocabs)
    model = model.to(dtype)
    assert model.dtype == dtype
    collated = collate(graphs, [0, 1, 2], torch.device("cpu"), model)
    for plan in (collated.plan, model.plan(collated)):
        assert plan.dtype == dtype
        floating = [t for t in _planned_tensors(plan) if t.is_floating_point()]
        assert floating  # the mean weights of the sentence, window and character layouts
        assert {t.dtype for t in floating} == {dtype}
    # a plan made for another dtype is converted, not used as it is
    other = torch.float32 if dtype == torch.float64 else torch.float64
    used = model._plan_of(collated, collated.plan.to(dtype=other))
    assert {t.dtype for t in _planned_tensors(used) if t.is_floating_point()} == {dtype}


# ----------------------------------------------------------------- the precision of tagging
def test_tagging_precision_comes_from_the_argument_the_variable_or_the_default(monkeypatch):
    from docgraph.runtime import precision as module

    monkeypatch.delenv(module.PRECISION_ENV, raising=False)
    assert module.tagging_precision("bf16", "cpu") == "bf16"
    assert module.tagging_precision("fp32", "cpu") == "fp32"
    assert module.tagging_precision(None, "cpu") == module.DEFAULT_TAGGING_PRECISION
    monkeypatch.setenv(module.PRECISION_ENV, "bf16")
    assert module.tagging_precision(None, "cpu") == "bf16"
    assert module.tagging_precision("fp32", "cpu") == "fp32"  # the argument wins
    monkeypatch.setenv(module.PRECISION_ENV, "half")
    with pytest.raises(ValueError, match="DOCGRAPH_TAGGING_PRECISION must be one of"):
        module.tagging_precision(None, "cpu")
    with pytest.raises(ValueError, match="precision must be one of auto, fp32, bf16, got 'x'"):
        module.tagging_precision("x", "cpu")


@pytest.mark.parametrize("native", [True, False])
def test_auto_takes_bf16_only_on_a_cpu_that_multiplies_it_natively(native, monkeypatch):
    from docgraph.runtime import precision as module

    monkeypatch.setattr(module, "native_bf16", lambda: native)
    assert module.tagging_precision("auto", "cpu") == ("auto" if native else None)
    assert module.tagging_precision("auto", "cuda") is None  # the trained precision


def test_the_override_sets_the_models_precision_and_the_language_models():
    from docgraph.config import ExperimentConfig
    from docgraph.persistence.model_dir import ModelOverrides

    config = ExperimentConfig()
    assert ModelOverrides().apply(config) is config
    assert ModelOverrides(precision="fp32").apply(config) is config  # as trained
    assert ModelOverrides(precision="bf16").apply(config).model.precision == "bf16"
    both = ModelOverrides(threshold=2.0, precision="bf16").apply(config).model
    assert (both.precision, both.threshold) == ("bf16", 2.0)
    assert ModelOverrides(precision="bf16").lm_precision == "bf16"
    assert ModelOverrides().lm_precision == ModelOverrides(precision="fp32").lm_precision == "fp32"
    # auto (a CPU with bf16 instructions): the language model in bf16, the network too unless
    # it reads the language model's features
    auto = ModelOverrides(precision="auto")
    assert auto.lm_precision == "bf16"
    assert auto.apply(config).model.precision == "bf16"
    assert auto.apply(replace(config, lm="/some/minilm")).model.precision == "fp32"
    with pytest.raises(ConfigError, match="precision"):
        ModelOverrides(precision="fp16").apply(config)


@pytest.mark.parametrize("precision", ["fp32", "bf16", "auto"])
def test_a_tagger_runs_its_products_in_the_precision_it_was_loaded_with(precision, model_dir,
                                                                        monkeypatch):
    from docgraph.runtime import precision as module
    from docgraph.tagging.tagger import Tagger

    monkeypatch.setattr(module, "native_bf16", lambda: True)
    tagger = Tagger.load(model_dir, precision=precision)
    assert tagger.overrides.precision == precision  # what the tagging processes load with
    precision = "bf16" if precision == "auto" else precision  # a model without an LM
    assert tagger.model.config.precision == precision
    seen = []
    hook = tagger.model.context_encoder.register_forward_hook(
        lambda module, args, out: seen.append(out.dtype))
    emissions = []
    decode = tagger.model.crf.decode
    tagger.model.crf.decode = lambda e, *a, **k: emissions.append(e.dtype) or decode(e, *a, **k)
    try:
        tags = tagger.predict("Kestrel beat Carrow 2-1 on Saturday. Piet Rauch scored twice.")
    finally:
        hook.remove()
        del tagger.model.crf.decode
    assert seen and set(seen) == {torch.bfloat16 if precision == "bf16" else torch.float32}
    assert set(emissions) == {torch.float32}  # the CRF decodes float32 emissions either way
    assert tags


def test_the_language_model_runs_in_bf16_when_told_and_its_features_stay_close(tiny_lm):
    import numpy as np

    from docgraph.data.contextual import ContextualEncoder
    from docgraph.data.document import make_document

    doc = make_document("d", [(["the", "cats", "running"], ["O"] * 3),
                              (["dog", "."], ["O"] * 2)])
    fp32 = ContextualEncoder(tiny_lm)
    bf16 = ContextualEncoder(tiny_lm, precision="bf16")
    a, b = fp32.encode([doc]), bf16.encode([doc])
    assert a.dtype == b.dtype == np.float32 and a.shape == b.shape
    assert not np.array_equal(a, b)  # the products did run in bfloat16
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cosine.min() > 0.99
    assert fp32.cache_key([doc]) != bf16.cache_key([doc])  # never one cache for both
    with pytest.raises(ValueError, match="precision must be 'fp32' or 'bf16'"):
        ContextualEncoder(tiny_lm, precision="fp16")
