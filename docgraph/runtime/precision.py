"""The arithmetic a trained model tags with.

:class:`~docgraph.tagging.tagger.Tagger`, ``predict.py``, ``evaluate.py``, ``visualize.py`` and
the spaCy component take a tagging precision, else ``DOCGRAPH_TAGGING_PRECISION``, else
:data:`DEFAULT_TAGGING_PRECISION`; where it resolves to none, the model tags in the precision
it was trained in (``[model] precision``, float32 unless trained with ``--precision bf16``).

* ``"fp32"``: float32 throughout.
* ``"bf16"``: the matrix products (linear layers, LSTM layers, a language model's layers) run in
  bfloat16 under :func:`torch.autocast`; emissions, the CRF and the Monte-Carlo masks stay
  float32. A few tags may differ from float32's.
* ``"auto"``: on a CPU whose instructions multiply bfloat16 natively (AVX-512 BF16 or AMX, as
  oneDNN reports them) and on a GPU that does (:func:`torch.cuda.is_bf16_supported`), a
  language model's layers in bfloat16 and the network too, unless the model reads a language
  model's features (there the network is a small share of the time); elsewhere the trained
  precision.

Why and by how much: ``docs/experiments.md``, "Tagging in bfloat16".
"""

from __future__ import annotations

import os

import torch

from docgraph.config.tagging import (
    DEFAULT_TAGGING_PRECISION,
    PRECISION_ENV,
    TAGGING_PRECISIONS,
)

__all__ = ["DEFAULT_TAGGING_PRECISION", "PRECISION_ENV", "TAGGING_PRECISIONS", "native_bf16",
           "tagging_precision"]


def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in its own instructions (oneDNN's check:
    AVX-512 BF16 or AMX)."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def tagging_precision(precision: str | None, device: torch.device | str) -> str | None:
    """The precision to tag in on ``device``, as
    :attr:`ModelOverrides.precision <docgraph.persistence.model_dir.ModelOverrides>` takes it:
    ``"fp32"``, ``"bf16"``, ``"auto"`` (this CPU, or this GPU, multiplies bfloat16 natively) or
    ``None`` (as trained: ``"auto"`` elsewhere). It is ``precision``, else
    ``$DOCGRAPH_TAGGING_PRECISION``, else :data:`DEFAULT_TAGGING_PRECISION`.

    Raises:
        ValueError: ``precision`` (or the variable) is not one of :data:`TAGGING_PRECISIONS`.
    """
    where = "precision"
    if precision is None:
        precision = os.environ.get(PRECISION_ENV, "").strip() or DEFAULT_TAGGING_PRECISION
        where = PRECISION_ENV
    if precision not in TAGGING_PRECISIONS:
        raise ValueError(f"{where} must be one of {', '.join(TAGGING_PRECISIONS)}, got "
                         f"{precision!r}")
    if precision != "auto":
        return precision
    device = torch.device(device)
    if device.type == "cuda":
        return "auto" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else None
    return "auto" if device.type == "cpu" and native_bf16() else None
