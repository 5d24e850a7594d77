r"""Fine-tuning held near the starting model: every weight it had is pulled back towards its
starting value after each step (``train.py --init-from MODEL --anchor STRENGTH``).

This is the L2-SP penalty of Li, Grandvalet and Davis (ICML 2018),
:math:`\frac{\lambda}{2}\lVert\theta-\theta_0\rVert^2`, in its decoupled form (as AdamW
decouples weight decay, Loshchilov and Hutter, ICLR 2019): applied to the weights after the
optimiser's step, it does not pass through Adam's per-weight scaling, so its strength means
the same for every weight. The entries a fine-tune creates (the rows of an added entity type's
labels, the added language-model columns, :func:`fresh_entries`) are left free.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor, nn

from docgraph.data.vocab import Vocab
from docgraph.training.init_from import LABEL_ROWS, LM_COLUMNS, label_map

__all__ = ["WeightAnchor", "fresh_entries"]


def fresh_entries(state: Mapping[str, Tensor], old_labels: Vocab, new_labels: Vocab,
                  old_shapes: Mapping[str, torch.Size]) -> dict[str, Tensor]:
    """The entries of a fine-tune's starting ``state`` that the starting model did not have,
    per state-dict key (``True``: fresh): the rows (and CRF columns) of the labels
    ``new_labels`` adds to ``old_labels``, and the columns added to :data:`LM_COLUMNS`
    (``old_shapes``: each tensor's shape in the starting model)."""
    new_ids, _ = label_map(old_labels, new_labels)
    fresh: dict[str, Tensor] = {}
    for key, dims in LABEL_ROWS.items():
        if key in state:
            mask = torch.ones_like(state[key], dtype=torch.bool)
            if dims == (0, 1):
                mask[new_ids.unsqueeze(1), new_ids] = False
            else:
                mask[new_ids] = False
            fresh[key] = mask
    for key in LM_COLUMNS:
        if key in state and key in old_shapes and old_shapes[key][1] < state[key].size(1):
            mask = torch.zeros_like(state[key], dtype=torch.bool)
            mask[:, old_shapes[key][1]:] = True
            fresh[key] = mask
    return fresh


class WeightAnchor:
    r"""Pulls the weights of ``model`` towards their values when the anchor was made.

    After each optimiser step of learning rate :math:`\eta`, every anchored entry moves
    towards its start:

    .. math::
        \theta \leftarrow \theta - \eta\,\lambda\,(\theta - \theta_0),

    the decoupled gradient step of :math:`\frac{\lambda}{2}\lVert\theta-\theta_0\rVert^2`.

    Args:
        model: The model, at the weights to keep it near.
        strength: :math:`\lambda` (greater than 0; :math:`\eta\lambda < 1`).
        fresh: State-dict key to a mask of entries left free (:func:`fresh_entries`).
    """

    def __init__(self, model: nn.Module, strength: float,
                 fresh: Mapping[str, Tensor] | None = None) -> None:
        if not strength > 0:
            raise ValueError(f"strength must be positive, not {strength}")
        self.strength = float(strength)
        self.params: list[nn.Parameter] = []
        self.start: list[Tensor] = []
        self.keep: list[Tensor | None] = []  # None: every entry anchored
        for name, param in model.named_parameters():
            if not param.requires_grad:
                continue
            free = (fresh or {}).get(name)
            self.params.append(param)
            self.start.append(param.detach().clone())
            self.keep.append(None if free is None
                             else (~free.to(param.device)).to(param.dtype))

    @torch.no_grad()
    def pull(self, lr: float) -> None:
        """One pull after an optimiser step taken at learning rate ``lr``."""
        rate = lr * self.strength
        if not 0 < rate < 1:
            raise ValueError(f"lr * strength must be in (0, 1), not {rate:g}")
        for param, start, keep in zip(self.params, self.start, self.keep):
            # theta + rate * (theta_0 - theta), in place: no copy of a table per step
            param.lerp_(start, rate if keep is None else keep * rate)

    @torch.no_grad()
    def distance(self) -> float:
        r""":math:`\lVert\theta-\theta_0\rVert` over the anchored entries."""
        total = torch.zeros((), dtype=torch.float64)
        for param, start, keep in zip(self.params, self.start, self.keep):
            step = param - start
            if keep is not None:
                step = step * keep
            total += step.double().pow(2).sum().cpu()
        return float(total.sqrt())

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(strength={self.strength:g}, "
                f"tensors={len(self.params)})")
