"""The selective auxiliary (relation) classifier of GCDoc."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from docgraph.nn.gather import gather_rows

__all__ = ["RELATION_LABELS", "RelationClassifier", "relation_loss", "relation_targets"]

RELATION_LABELS = ("type", "entity")
"""How the targets :math:`y_{ij}` of the auxiliary classifier are defined (see
:func:`relation_targets`)."""


def relation_targets(
    node_type: Tensor, edge_index: Tensor, labels: str = "type", outside: int = 0
) -> tuple[Tensor, Tensor | None]:
    r"""Targets :math:`y_{ij}` of the selective auxiliary classifier and the edges they cover.

    The paper sets :math:`y_{ij} = 1` "when nodes :math:`v_i` and :math:`v_j` belong to the same
    entity category" without saying what a non-entity token is. ``labels`` chooses:

    * ``"type"`` (default, earlier behaviour): ``O`` is a type like the others, so
      :math:`y_{ij} = [t_i = t_j]` on every edge and O--O edges are positives.
    * ``"entity"``: only entities have a category. O--O edges carry no target and are left
      out of :math:`\mathcal{L}_a` (``mask`` is ``False`` there); an edge between two entity
      tokens of the same type is a positive, an entity--O edge or two different types a
      negative:

      .. math::
          y_{ij} = [t_i = t_j \neq O], \qquad
          \text{mask}_{ij} = [t_i \neq O \lor t_j \neq O]

    Args:
        node_type (torch.Tensor): Entity-type id :math:`t_i` of every node ``[N]``.
        edge_index (torch.Tensor): Edges ``[2, E]`` (source :math:`j`, target :math:`i`).
        labels (str, optional): ``"type"`` or ``"entity"``. (default: ``"type"``)
        outside (int, optional): The type id of ``O``. (default: ``0``)

    Returns:
        ``(same [E] bool, mask [E] bool or None)``; ``mask`` is ``None`` for ``"type"``.
    """
    if labels not in RELATION_LABELS:
        raise ValueError(f"labels must be one of {RELATION_LABELS}, not {labels!r}")
    t_j, t_i = node_type[edge_index[0]], node_type[edge_index[1]]
    same = t_i == t_j
    if labels == "type":
        return same, None
    entity_i, entity_j = t_i != outside, t_j != outside
    return same & entity_i, entity_i | entity_j


def relation_loss(
    logits: Tensor, same_type: Tensor, reduction: str = "sum", mask: Tensor | None = None
) -> Tensor:
    r"""Binary cross-entropy of the relation classifier (Eq. (27)).

    .. math::
        \mathcal{L}_a = -\sum_{i}\sum_{j \in \mathcal{N}(i)}
        \left[y_{ij} \log r_{ij} + (1 - y_{ij}) \log(1 - r_{ij})\right]

    Computed from the logits with
    :func:`torch.nn.functional.binary_cross_entropy_with_logits` (numerically
    stable). With a ``mask`` (see :func:`relation_targets`) the sum runs over the
    edges where it is ``True`` only.

    Args:
        logits (torch.Tensor): Edge logits ``[E]``.
        same_type (torch.Tensor): Targets :math:`y_{ij}` ``[E]`` (bool or 0/1).
        reduction (str, optional): ``"sum"`` (paper), ``"mean"`` (over the
            edges kept by ``mask``; ``0`` when none is) or ``"none"`` (``[E]``,
            ``0`` at masked-out edges). (default: ``"sum"``)
        mask (torch.Tensor, optional): Edges ``[E]`` (bool) that have a target.
            (default: ``None``, all of them)
    """
    if mask is None:
        return F.binary_cross_entropy_with_logits(
            logits, same_type.to(logits.dtype), reduction=reduction
        )
    if reduction not in ("sum", "mean", "none"):
        raise ValueError(f"reduction must be 'sum', 'mean' or 'none', not {reduction!r}")
    loss = F.binary_cross_entropy_with_logits(
        logits, same_type.to(logits.dtype), reduction="none"
    )
    loss = torch.where(mask, loss, torch.zeros_like(loss))
    if reduction == "none":
        return loss
    total = loss.sum()
    return total if reduction == "sum" else total / mask.sum().clamp(min=1)


class RelationClassifier(torch.nn.Module):
    r"""The selective auxiliary classifier producing the edge weights of the
    document graph, from Wang et al., `"Exploiting Global Contextual
    Information for Document-level Named Entity Recognition" <https://arxiv.org/abs/2106.00887>`_
    (Eq. (26)):

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
        return gather_rows(score_i, edge_index[1]) + gather_rows(score_j, edge_index[0]) \
            + self.lin.bias

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
    def relation_loss(
        logits: Tensor, same_type: Tensor, reduction: str = "sum", mask: Tensor | None = None
    ) -> Tensor:
        """See :func:`relation_loss` (Eq. (27), summed over edges by default)."""
        return relation_loss(logits, same_type, reduction, mask)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.channels})"
