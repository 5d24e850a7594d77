"""GCDocConfig.precision: bf16 autocast of the forward pass (opt-in), checked on the CPU."""

from __future__ import annotations

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
