"""Int8 dynamic quantisation of a trained network's LSTM and linear layers, for tagging.

Every weight matrix is quantised once to signed 8 bits, one scale per output row; the
activations are quantised on the fly at every call (dynamic quantisation), the products run in
fbgemm's integer kernels, and the results are float32 again. The LSTMs keep their own calls
(:func:`~docgraph.nn.layout.lstm_direction`, one direction at a time): each direction's
weights are packed into the cell parameters that :func:`torch.quantized_lstm` takes. A
quantised network tags only: it has no gradients, and it runs on the CPU.
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from docgraph.nn.layout import direction_weights

__all__ = ["INT8_CELLS", "Int8Linear", "int8_lstm_cells", "is_int8", "quantize_int8"]

#: The attribute of a quantised LSTM that holds its directions' int8 cell parameters.
INT8_CELLS = "int8_cells"


def _packed(weight: Tensor, bias: Tensor | None) -> object:
    """``weight`` quantised to int8 per output row (symmetric, zero point 0) and packed with
    ``bias`` for fbgemm's dynamic linear kernels."""
    weight = weight.detach().float()
    scales = weight.abs().amax(dim=1).clamp(min=1e-8) / 127.0
    zero = torch.zeros(weight.size(0), dtype=torch.long)
    with warnings.catch_warnings():  # fbgemm's kernels still take torch's quantized tensors
        warnings.filterwarnings("ignore", message=".*quantized tensor creation",
                                category=UserWarning)
        q = torch.quantize_per_channel(weight, scales.double(), zero, 0, torch.qint8)
    return torch.ops.quantized.linear_prepack(q, None if bias is None else bias.detach().float())


def int8_lstm_cells(lstm: torch.nn.LSTM) -> list[object]:
    """The int8 cell parameters of each direction of a one-layer LSTM (left to right, then
    right to left), as :func:`torch.quantized_lstm` takes them."""
    cells = []
    for suffix in ("", "_reverse"):
        weights = direction_weights(lstm, suffix)
        w_ih, w_hh = weights[:2]
        b_ih, b_hh = (weights[2].detach().float(), weights[3].detach().float()) if lstm.bias \
            else (None, None)
        cells.append(torch.ops.quantized.make_quantized_cell_params_dynamic(
            _packed(w_ih, b_ih), _packed(w_hh, b_hh), b_ih, b_hh, True))
    return cells


class Int8Linear(torch.nn.Module):
    """A linear layer whose weight is int8 (per output row) and whose input is quantised at
    every call (fbgemm's dynamic kernels); input and output float32 (a bfloat16 input is
    widened first). :attr:`weight` and :attr:`bias` keep the float layer's tensors, for what
    reads their shape or dtype."""

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight, self.bias = linear.weight, linear.bias
        self._packed = _packed(linear.weight, linear.bias)

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        out = torch.ops.quantized.linear_dynamic(x.reshape(-1, shape[-1]).float(), self._packed,
                                                 True)
        return out.reshape(*shape[:-1], self.out_features)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.in_features}, {self.out_features}, "
                f"bias={self.bias is not None})")


def quantize_int8(module: torch.nn.Module) -> torch.nn.Module:
    """Quantise ``module``'s LSTM and linear layers to int8, in place, for tagging on the CPU:
    every :class:`torch.nn.LSTM` below it gets its cells (:data:`INT8_CELLS`, read by
    :func:`~docgraph.nn.layout.lstm_direction`), every :class:`torch.nn.Linear` becomes an
    :class:`Int8Linear`. The float parameters stay (the state dict is unchanged). Returns
    ``module``.

    Raises:
        ValueError: ``module`` is in training mode or has a parameter off the CPU.
    """
    if module.training:
        raise ValueError("int8 quantisation is for tagging: put the module in eval mode first")
    if any(p.device.type != "cpu" for p in module.parameters()):
        raise ValueError("int8 quantisation runs on the CPU only")
    for parent in list(module.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(parent, name, Int8Linear(child))
            elif isinstance(child, torch.nn.LSTM):
                setattr(child, INT8_CELLS, int8_lstm_cells(child))
    return module


def is_int8(module: torch.nn.Module) -> bool:
    """Whether :func:`quantize_int8` quantised ``module``."""
    return any(isinstance(m, Int8Linear) or getattr(m, INT8_CELLS, None) is not None
               for m in module.modules())
