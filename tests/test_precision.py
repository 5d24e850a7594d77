"""GCDocConfig.precision: bf16 autocast of the forward pass (opt-in), checked on the CPU; the
host-side plans in the model's dtype."""

from __future__ import annotations

from dataclasses import fields, is_dataclass

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
