"""The selective auxiliary (relation) classifier of GCDoc."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["RelationClassifier", "relation_loss"]


def relation_loss(logits: Tensor, same_type: Tensor, reduction: str = "sum") -> Tensor:
    r"""Binary cross-entropy of the relation classifier (Eq. loss_aui).

    .. math::
        \mathcal{L}_a = -\sum_{i}\sum_{j \in \mathcal{N}(i)}
        \left[y_{ij} \log r_{ij} + (1 - y_{ij}) \log(1 - r_{ij})\right]

    Computed from the logits with
    :func:`torch.nn.functional.binary_cross_entropy_with_logits` (numerically
    stable).

    Args:
        logits (torch.Tensor): Edge logits ``[E]``.
        same_type (torch.Tensor): Targets :math:`y_{ij}` ``[E]`` (bool or 0/1).
        reduction (str, optional): ``"sum"`` (paper), ``"mean"`` or ``"none"``.
            (default: ``"sum"``)
    """
    return F.binary_cross_entropy_with_logits(
        logits, same_type.to(logits.dtype), reduction=reduction
    )


class RelationClassifier(torch.nn.Module):
    r"""The selective auxiliary classifier producing the edge weights of the
    document graph, from Wang et al., "Exploiting Global Contextual
    Information for Document-level Named Entity Recognition"
    (Eq. edge_weight):

    .. math::
        r_{ij} = \sigma\left(\mathbf{W}_c [\mathbf{h}_i ; \mathbf{h}_j] + b_c\right)

    for every edge :math:`j \rightarrow i` of ``edge_index`` (PyG convention:
    ``edge_index[0]`` = source :math:`j`, ``edge_index[1]`` = target
    :math:`i`). :math:`\mathbf{W}_c \in \mathbb{R}^{1 \times 2d}` is split
    into its :math:`i` and :math:`j` halves, the two per-node scores are
    computed once per node (:math:`O(Nd)`) and then gathered per edge
    (:math:`O(E)`). The score is not symmetric in :math:`(i, j)`, as in the
    paper. Glorot weight, zero bias.

    Args:
        channels (int): Size :math:`d` of each node feature.

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, d)`,
          edge indices :math:`(2, |\mathcal{E}|)`
        - **output:** edge probabilities (or logits) :math:`(|\mathcal{E}|)`
    """

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.channels = channels
        self.lin = torch.nn.Linear(2 * channels, 1)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot weight, zero bias."""
        torch.nn.init.xavier_uniform_(self.lin.weight)
        torch.nn.init.zeros_(self.lin.bias)

    def logits(self, h: Tensor, edge_index: Tensor) -> Tensor:
        r"""Edge logits :math:`\mathbf{W}_c [\mathbf{h}_i ; \mathbf{h}_j] + b_c` ``[E]``."""
        d = self.channels
        w = self.lin.weight.view(-1)
        score_i = h @ w[:d]  # target half
        score_j = h @ w[d:]  # source half
        return score_i[edge_index[1]] + score_j[edge_index[0]] + self.lin.bias

    def forward(self, h: Tensor, edge_index: Tensor, return_logits: bool = False) -> Tensor:
        """Relation scores of every edge.

        Args:
            h (torch.Tensor): Node features ``[N, channels]``.
            edge_index (torch.Tensor): Edges ``[2, E]`` (source, target).
            return_logits (bool, optional): Return the logits instead of the
                probabilities. (default: ``False``)

        Returns:
            ``r [E]`` in ``(0, 1)`` (or the logits).
        """
        out = self.logits(h, edge_index)
        return out if return_logits else torch.sigmoid(out)

    @staticmethod
    def relation_loss(logits: Tensor, same_type: Tensor, reduction: str = "sum") -> Tensor:
        """See :func:`relation_loss` (Eq. loss_aui, summed over edges by default)."""
        return relation_loss(logits, same_type, reduction)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.channels})"
