"""8-bit rows (docgraph/persistence/quantize.py): the stored values against a hand-computed
reference, the error bound, and state dicts that go there and back."""

from __future__ import annotations

import pytest
import torch

from docgraph.persistence.quantize import (
    SCALE_SUFFIX,
    dequantize_rows,
    dequantized_state,
    quantize_rows,
    quantized_state,
)


def test_rows_by_hand():
    w = torch.tensor([[1.27, -0.635, 0.0], [0.0, 0.0, 0.0], [-2.54, 0.01, 2.54]])
    q, scale = quantize_rows(w)
    assert q.dtype == torch.int8 and scale.shape == (3, 1)
    assert torch.allclose(scale.squeeze(1), torch.tensor([0.01, 1.0, 0.02]))
    # 0.635 / 0.01 = 63.5 rounds to even; 0.01 / 0.02 = 0.5 likewise
    assert q.tolist() == [[127, -64, 0], [0, 0, 0], [-127, 0, 127]]
    back = dequantize_rows(q, scale)
    assert torch.allclose(back, torch.tensor([[1.27, -0.64, 0.0], [0, 0, 0], [-2.54, 0, 2.54]]))


def test_error_is_at_most_half_a_step():
    w = torch.randn(200, 50, generator=torch.Generator().manual_seed(0)) * 3
    q, scale = quantize_rows(w)
    error = (dequantize_rows(q, scale) - w).abs()
    assert bool((error <= scale / 2 + 1e-6).all())
    assert bool((q.abs() <= 127).all()) and int(q.abs().amax()) == 127


def test_state_there_and_back():
    state = {"emb.weight": torch.randn(10, 4), "lin.bias": torch.randn(3)}
    packed = quantized_state(state, ("emb.weight",))
    assert set(packed) == {"emb.weight", "emb.weight" + SCALE_SUFFIX, "lin.bias"}
    assert packed["emb.weight"].dtype == torch.int8
    back = dequantized_state(packed)
    assert set(back) == set(state) and back["emb.weight"].dtype == torch.float32
    assert torch.equal(back["lin.bias"], state["lin.bias"])
    assert torch.allclose(back["emb.weight"], state["emb.weight"], atol=0.05)
    assert dequantized_state(state).keys() == state.keys()  # nothing to undo


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="2-dimensional floating-point"):
        quantize_rows(torch.ones(3, dtype=torch.float32))
    with pytest.raises(ValueError, match="2-dimensional floating-point"):
        quantize_rows(torch.ones(3, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="scales"):
        dequantize_rows(torch.zeros(3, 2, dtype=torch.int8), torch.ones(2, 1))
    with pytest.raises(ValueError, match="without the tensor"):
        dequantized_state({"x" + SCALE_SUFFIX: torch.ones(2, 1)})
