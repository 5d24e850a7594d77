"""Int8 dynamic quantisation of LSTM and linear layers (docgraph.nn.quantized)."""

import pytest
import torch

from docgraph.nn.layout import lstm_direction
from docgraph.nn.quantized import INT8_CELLS, Int8Linear, is_int8, quantize_int8


def test_an_int8_lstm_direction_is_close_to_the_float_one_and_not_equal():
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(12, 10, batch_first=True, bidirectional=True).eval()
    x = torch.randn(5, 7, 12)
    floats = [lstm_direction(lstm, x, s) for s in ("", "_reverse")]
    quantize_int8(torch.nn.Sequential(lstm).eval())
    ints = [lstm_direction(lstm, x, s) for s in ("", "_reverse")]
    for f, q in zip(floats, ints):
        assert f.shape == q.shape and q.dtype == torch.float32
        assert 0 < (f - q).abs().max() < 0.05  # 8-bit weights and activations
    linear = torch.nn.Linear(12, 6).eval()
    expected = linear(x)
    (quantized,) = quantize_int8(torch.nn.Sequential(linear).eval()).children()
    assert isinstance(quantized, Int8Linear)
    assert 0 < (quantized(x) - expected).abs().max() < 0.05


def test_quantisation_replaces_linear_layers_and_gives_lstms_cells_in_eval_mode_only():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LSTM(4, 3, batch_first=True,
                                                                       bidirectional=True))
    with pytest.raises(ValueError, match="eval mode"):
        quantize_int8(model)
    assert not is_int8(model)
    keys = model.state_dict().keys()
    quantize_int8(model.eval())
    assert is_int8(model) and isinstance(model[0], Int8Linear)
    assert len(getattr(model[1], INT8_CELLS)) == 2  # one per direction
    assert model.state_dict().keys() == keys
