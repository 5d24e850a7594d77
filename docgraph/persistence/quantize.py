"""8-bit rows: a weight matrix stored as ``int8`` with one scale per row, for packed models.

Row ``i`` of a ``float`` matrix ``W`` is stored as

.. math::
    q_i = \\operatorname{round}(W_i / s_i) \\in [-127, 127]^d, \\qquad
    s_i = \\max_j |W_{ij}| / 127,

so each entry is off by at most :math:`s_i / 2`, and read back as :math:`s_i q_i`. A packed
``model.pt`` holds the ``int8`` tensor under the weight's own key and the ``float32`` scales
under that key plus :data:`SCALE_SUFFIX`; :func:`dequantized_state` turns such a state dict
back into the one the model loads.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor

__all__ = ["SCALE_SUFFIX", "dequantize_rows", "dequantized_state", "quantize_rows",
           "quantized_state"]

#: Suffix of the key that holds the per-row scales of an 8-bit tensor.
SCALE_SUFFIX = ":int8-row-scale"


def quantize_rows(weight: Tensor) -> tuple[Tensor, Tensor]:
    """``weight`` (``[N, d]``) as ``int8`` rows and their ``float32`` scales (``[N, 1]``);
    an all-zero row gets scale 1."""
    if weight.dim() != 2 or not weight.is_floating_point():
        raise ValueError(f"expected a 2-dimensional floating-point tensor, got "
                         f"{weight.dtype} of shape {tuple(weight.shape)}")
    w = weight.detach().to(torch.float32)
    scale = w.abs().amax(dim=1, keepdim=True) / 127.0
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    q = torch.round(w / scale).clamp_(-127, 127).to(torch.int8)
    return q, scale


def dequantize_rows(q: Tensor, scale: Tensor) -> Tensor:
    """The ``float32`` rows that ``q`` and ``scale`` (from :func:`quantize_rows`) stand for."""
    if q.dtype != torch.int8 or scale.shape != (q.shape[0], 1):
        raise ValueError(f"expected int8 rows [N, d] and scales [N, 1], got {q.dtype} "
                         f"{tuple(q.shape)} and {tuple(scale.shape)}")
    return q.to(torch.float32) * scale.to(torch.float32)


def quantized_state(state: Mapping[str, Tensor], keys: tuple[str, ...]) -> dict[str, Tensor]:
    """``state`` with each of ``keys`` stored as 8-bit rows and their scales."""
    out = dict(state)
    for key in keys:
        out[key], out[key + SCALE_SUFFIX] = quantize_rows(state[key])
    return out


def dequantized_state(state: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """``state`` with every 8-bit tensor (one that has a scale entry) read back as
    ``float32``; a state without any is returned as it is.

    Raises:
        ValueError: A scale entry without its tensor, or one that does not fit it.
    """
    scales = [k for k in state if k.endswith(SCALE_SUFFIX)]
    if not scales:
        return dict(state)
    out = {k: v for k, v in state.items() if not k.endswith(SCALE_SUFFIX)}
    for key in scales:
        name = key[:-len(SCALE_SUFFIX)]
        if name not in out:
            raise ValueError(f"{key!r}: a scale entry without the tensor {name!r}")
        out[name] = dequantize_rows(out[name], state[key])
    return out
