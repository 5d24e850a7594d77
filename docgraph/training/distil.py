r"""Fine-tuning that keeps the starting model's reading of its own labels on every training
token (``train.py --init-from MODEL --distil WEIGHT``).

Knowledge distillation for an added entity type, as in learning without forgetting (Li and
Hoiem, ECCV 2016) and its use for named entities by Monaikul et al. (AAAI 2021): the starting
model, frozen, reads each training batch; the model being trained pays for every token

.. math::
    \lambda\,\mathrm{KL}\big(p_0(\cdot \mid t)\,\big\|\,p_\theta(\cdot \mid t)\big),
    \qquad p(c \mid t) = \frac{\exp e_{t,c}}{\sum_{c' \in \mathcal{L}_0} \exp e_{t,c'}},
    \; c \in \mathcal{L}_0,

where :math:`e_t` are a model's emission scores of token :math:`t` and :math:`\mathcal{L}_0`
the starting model's labels. The distribution is over those labels alone, so the emission
scores of an added type's labels stay free: the new type can outscore ``O`` where the data
annotates it while the old labels keep their order among themselves. With ``--distil-on
rehearsal`` the sum runs over the tokens of the ``--rehearse`` documents alone (the starting
model's own domain); the user's documents are learnt from their labels.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Batch

from docgraph.model import GCDoc, GCDocOutput

__all__ = ["Distiller", "label_distillation"]


def label_distillation(teacher: Tensor, student: Tensor, labels: Tensor) -> Tensor:
    r"""The summed :math:`\mathrm{KL}(p_0 \| p_\theta)` over tokens of the distributions that
    the emission scores ``teacher`` and ``student`` give the labels ``labels``.

    Shapes:
        - **teacher**, **student**: :math:`(N, C)` emission scores.
        - **labels**: :math:`(L,)` label ids, :math:`L \le C`.
        - **output**: a scalar.
    """
    if teacher.shape != student.shape:
        raise ValueError(f"teacher scores {list(teacher.shape)} and student scores "
                         f"{list(student.shape)} differ in shape")
    target = F.log_softmax(teacher.index_select(1, labels).float(), dim=1)
    predicted = F.log_softmax(student.index_select(1, labels).float(), dim=1)
    return F.kl_div(predicted, target, reduction="sum", log_target=True)


class Distiller:
    """The starting model, frozen, and the distillation term it adds to a training step's
    loss (see the module docstring).

    Args:
        model: The model at its starting weights (copied; the copy never trains).
        labels: Ids of the starting model's labels in ``model``'s label vocabulary.
        weight: :math:`\\lambda` (greater than 0).
    """

    def __init__(self, model: GCDoc, labels: Tensor, weight: float) -> None:
        if not weight > 0:
            raise ValueError(f"weight must be positive, not {weight}")
        self.teacher = copy.deepcopy(model).eval()
        self.teacher.requires_grad_(False)
        self.labels = labels.to(torch.long)
        self.weight = float(weight)

    def to(self, device: torch.device | str) -> Distiller:
        """Move the frozen model (and the label ids) to ``device``."""
        self.teacher.to(device)
        self.labels = self.labels.to(device)
        return self

    def loss(self, batch: Batch, out: GCDocOutput) -> Tensor:
        """:math:`\\lambda` times the summed divergence of the trained model's emission scores
        ``out.emissions`` on ``batch`` from the frozen model's (its Monte-Carlo masks from a
        fixed seed: the global random stream is not drawn from), over the tokens of the node
        mask ``batch.distilled`` where the batch has one, else over every token."""
        covered = getattr(batch, "distilled", None)
        student = out.emissions
        if covered is not None and not bool(covered.any()):
            return student.new_zeros(())
        with torch.no_grad():
            teacher = self.teacher(batch, compute_loss=False, mc_seed=0).emissions
        if covered is not None:
            teacher, student = teacher[covered], student[covered]
        return self.weight * label_distillation(teacher, student, self.labels)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(labels={self.labels.numel()}, weight={self.weight})"
