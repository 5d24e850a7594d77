"""The document graph module of GCDoc: uncertainty pruning, edge weights and the gated graph layer.

From Zanbo Wang, Wei Wei, Xianling Mao, Shanshan Feng, Pan Zhou, Zhiyong He and Sheng Jiang,
`"Exploiting Global Contextual Information for Document-level Named Entity Recognition"
<https://arxiv.org/abs/2106.00887>`_,
Section IV-C "Gated Graph Neural Networks based Context Encoder" with its two strategies
against noise, "(1) Document Graph Pruning" and "(2) Edge Weights Calculation".
:class:`DocumentGraphModule` composes the three building blocks of that section
(:class:`~docgraph.nn.UncertaintyTagger`, :class:`~docgraph.nn.RelationClassifier` and
:class:`~docgraph.nn.DocGraphConv`) and computes their auxiliary losses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from docgraph.nn.conv import (
    DocGraphConv,
    _check_edge_index,
    _check_features,
    _check_node_vector,
    _describe,
    _integer_dtype,
    _reads_values,
)
from docgraph.nn.gather import csr_segments
from docgraph.nn.layout import DEFAULT_BUCKETS, SequenceLayout
from docgraph.nn.relation import (
    RELATION_LABELS,
    RelationClassifier,
    relation_loss,
    relation_targets,
)
from docgraph.nn.uncertainty import UncertaintyTagger

__all__ = ["DocumentGraphModule", "DocumentGraphOutput", "DocumentGraphPlan"]


@dataclass
class DocumentGraphPlan:
    r"""The shapes a batch asks of :class:`DocumentGraphModule`, planned on the host.

    Everything here follows from the graph structure alone (sentence lengths, edges, the
    documents of the nodes). :meth:`DocumentGraphModule.forward` makes it with :meth:`build`
    when it is not given; planning it beforehand (GCDoc does, when it collates a batch,
    ``docgraph.batching.plan``) keeps data-dependent shapes and read-backs out of the step.

    Args:
        sentences: The sentences of the flat nodes (:class:`~docgraph.nn.SequenceLayout`).
        monte_carlo: The :math:`T` copies of the sentences for ``mc_dropout="full"``.
        gated_nodes: Nodes that receive edges, ascending (with ``edge_ptr``).
        edge_ptr: ``[G + 1]`` CSR offsets of their incoming edges; only when ``edge_index``
            is sorted by target.
        segment_sizes: Nodes per segment (document) whose Monte-Carlo masks come from a
            generator of its own, with ``segment_seeds``.
        segment_seeds: One seed per segment (``None``: torch's global random stream).
    """

    sentences: SequenceLayout | None = None
    monte_carlo: SequenceLayout | None = None
    gated_nodes: Tensor | None = None
    edge_ptr: Tensor | None = None
    segment_sizes: Sequence[int] | None = None
    segment_seeds: Sequence[int] | None = None

    @classmethod
    def build(cls, edge_index: Tensor, sent_len: Tensor | None = None, *,
              num_samples: int = 0, batch: Tensor | None = None,
              segment_seeds: Sequence[int] | None = None,
              buckets: int = DEFAULT_BUCKETS,
              dtype: torch.dtype | None = None) -> DocumentGraphPlan:
        """Plan a batch from what a PyG model has.

        Args:
            edge_index: ``[2, E]`` edges (source, target).
            sent_len: ``[S]`` sentence lengths of the flat nodes (needed with pruning).
            num_samples: :math:`T` copies of the sentences to lay out (0: none).
            batch: ``[N]`` the graph (document) of every node, ascending, as PyG's
                ``Batch.batch``: one Monte-Carlo segment per graph, with ``segment_seeds``.
            segment_seeds: One seed per graph of ``batch``.
            buckets: Most length buckets of the recurrent layers (1 suits a GPU).
            dtype: The model's floating dtype, that of the layouts' mean weights (default:
                torch's default dtype).
        """
        device = edge_index.device
        plan = cls()
        if sent_len is not None:
            lengths = sent_len.detach().cpu().numpy().astype(np.int64)
            plan.sentences = SequenceLayout.from_lengths(lengths, buckets=buckets,
                                                         dtype=dtype).to(device)
            if num_samples > 0:
                plan.monte_carlo = SequenceLayout.tiled(lengths, num_samples, buckets,
                                                        dtype).to(device)
        segments = csr_segments(edge_index[1].detach().cpu().numpy())
        if segments is not None:
            plan.gated_nodes, plan.edge_ptr = (t.to(device) for t in segments)
        if segment_seeds is not None:
            if batch is None:
                raise ValueError("segment_seeds needs batch (the graph of every node)")
            sizes = np.bincount(batch.detach().cpu().numpy(), minlength=len(segment_seeds))
            if sizes.size != len(segment_seeds):
                raise ValueError(f"{len(segment_seeds)} segment_seeds for {sizes.size} graphs")
            plan.segment_sizes = [int(n) for n in sizes]
            plan.segment_seeds = list(segment_seeds)
        return plan


def _as_lengths(sent_len: Tensor | Sequence[int], device: torch.device) -> Tensor:
    """``sent_len`` as a 1-D integer tensor (a list or tuple of ints goes to ``device``)."""
    if isinstance(sent_len, (list, tuple)):
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool)
                   for n in sent_len):
            raise TypeError(f"sent_len must hold ints (sentence lengths), got "
                            f"{[type(n).__name__ for n in sent_len]}")
        return torch.tensor(sent_len, dtype=torch.long, device=device)
    if not isinstance(sent_len, Tensor):
        raise TypeError(f"sent_len must be a 1-D integer tensor or a list of ints "
                        f"(got {_describe(sent_len)})")
    if not _integer_dtype(sent_len):
        raise TypeError(f"sent_len must hold integer sentence lengths "
                        f"(got {_describe(sent_len)})")
    if sent_len.dim() != 1:
        raise ValueError(f"sent_len must have shape [S] (one length per sentence), "
                         f"got {list(sent_len.shape)}")
    return sent_len


def _check_total(total: int, num_sentences: int, num_nodes: int) -> None:
    """Check that the ``num_sentences`` lengths of ``sent_len`` sum to the ``num_nodes``."""
    if total != num_nodes:
        raise ValueError(f"sent_len must sum to N={num_nodes} (the number of nodes), got "
                         f"{num_sentences} lengths summing to {total}")


def _check_planned_lengths(sent_len: Tensor, layout: SequenceLayout | None,
                           num_nodes: int) -> None:
    """Check the sum of ``sent_len`` on an accelerator from ``layout``'s host copy of the
    lengths (no read-back), or by reading it back when there is no layout."""
    if layout is None:
        _check_total(int(sent_len.sum()), sent_len.numel(), num_nodes)
        return
    if layout.num_sequences != sent_len.numel():
        raise ValueError(f"plan.sentences has {layout.num_sequences} sentences for the "
                         f"{sent_len.numel()} lengths of sent_len")
    _check_total(int(layout.host_lengths.sum()), sent_len.numel(), num_nodes)


class DocumentGraphOutput(NamedTuple):
    r"""What one forward pass of :class:`DocumentGraphModule` computes.

    The optional fields are ``None`` when their part of the module is off, when the pass runs
    unpruned (``uncertainty``, ``drop``) or when the targets of a loss are not given.

    Args:
        x (torch.Tensor): Updated node features :math:`\hat{\mathbf{h}}_i` ``[N, d]``.
        uncertainty (torch.Tensor, optional): Monte-Carlo uncertainty :math:`u_i` ``[N]``.
        drop (torch.Tensor, optional): Boolean ``[N]``, ``True`` for the tokens in
            :math:`Drop` (:math:`u_i > \mathcal{T}`).
        edge_weight (torch.Tensor, optional): Relation scores :math:`r_{ij}` ``[E]``.
        uncertainty_loss (torch.Tensor, optional): Token cross-entropy of the uncertainty
            tagger, summed over the tokens.
        relation_loss (torch.Tensor, optional): :math:`\mathcal{L}_a`, summed over the edges
            that have a target.
    """

    x: Tensor
    uncertainty: Tensor | None = None
    drop: Tensor | None = None
    edge_weight: Tensor | None = None
    uncertainty_loss: Tensor | None = None
    relation_loss: Tensor | None = None


class DocumentGraphModule(torch.nn.Module):
    r"""The document graph module of GCDoc from the `"Exploiting Global
    Contextual Information for Document-level Named Entity Recognition"
    <https://arxiv.org/abs/2106.00887>`_ paper
    (Wang et al.), Section IV-C "Gated Graph Neural Networks based Context
    Encoder": :math:`\hat{\mathbf{h}}_i = GGNN(\mathbf{h}_i)` (Eq. (10)) on the
    graph of re-occurring tokens of a document, with the section's two
    strategies against noisy neighbours.

    **(1) Document Graph Pruning** (Eqs. (24) and (25), Monte-Carlo dropout of
    Section III-C "Representing Model Uncertainty", Eq. (8)). An independent
    tagger (:class:`~docgraph.nn.UncertaintyTagger`: a Bi-LSTM over the token
    features :math:`\mathbf{x}^u_i`, then a dense layer) is run :math:`T` times
    with dropout masks :math:`\mathbf{w}_t \sim q_\theta(\mathbf{w})`; the
    entropy of its averaged prediction is the uncertainty of token :math:`i`,
    and the tokens above the threshold :math:`\mathcal{T}` form the set
    :math:`Drop`:

    .. math::
        \mathbf{p}_i = \frac{1}{T} \sum_{t=1}^{T}
        \mathrm{softmax}(\mathbf{W}^{\top} \mathbf{h}^u_i \mid \mathbf{w}_t),
        \qquad
        u_i = -\sum_{c=1}^{\mathcal{C}} p_c \log p_c,
        \qquad
        Drop = \{\, i : u_i > \mathcal{T} \,\}

    **(2) Edge Weights Calculation** (Eqs. (26) and (27)). The selective
    auxiliary classifier (:class:`~docgraph.nn.RelationClassifier`) scores
    every edge :math:`j \rightarrow i` and is trained to tell whether its two
    tokens belong to the same entity category, :math:`y_{ij}`:

    .. math::
        r_{ij} = \sigma\left(\mathbf{W}_c [\mathbf{h}_i ; \mathbf{h}_j] + b_c\right),
        \qquad
        \mathcal{L}_a = -\sum_{i} \sum_{j \in \mathcal{N}(i)}
        \left[y_{ij} \log r_{ij} + (1 - y_{ij}) \log(1 - r_{ij})\right]

    **Node Representation Learning** (Eq. (28), then the gate of
    Eqs. (19)--(22); :class:`~docgraph.nn.DocGraphConv`). The neighbours outside
    :math:`Drop` send their transformed states weighted by :math:`r_{ij}`,
    averaged over their number :math:`Num(i)`, and a GRU-like gate fuses the
    result with the token's own state:

    .. math::
        \mathbf{a}_i &= \mathrm{ReLU}\Big( \frac{1}{Num(i)}
        \sum_{j \in \mathcal{N}(i),\, j \notin Drop} r_{ij}
        \left(\mathbf{W}_a \mathbf{h}_j + \mathbf{b}_a\right) \Big)

        \mathbf{z}_i &= \sigma(\mathbf{W}_z \mathbf{a}_i + \mathbf{U}_z \mathbf{h}_i),
        \qquad
        \mathbf{r}_i = \sigma(\mathbf{W}_r \mathbf{a}_i + \mathbf{U}_r \mathbf{h}_i)

        \tilde{\mathbf{h}}_i &= \tanh(\mathbf{W}_o \mathbf{a}_i +
        \mathbf{U}_o (\mathbf{r}_i \odot \mathbf{h}_i))

        \hat{\mathbf{h}}_i &= (1 - \mathbf{z}_i) \odot \mathbf{h}_i +
        \mathbf{z}_i \odot \tilde{\mathbf{h}}_i

    Both strategies are optional (the rows of the paper's Table VI,
    "Comparison of different strategies of Document Graph Module"): without
    ``pruning``, :math:`Drop = \emptyset` (no uncertainty tagger is built);
    without ``edge_weights``, :math:`r_{ij} = 1` (no classifier is built) and
    Eq. (28) becomes Eq. (23) ("+Pruning"); without both it is the plain mean
    of Eq. (18) ("+Doc Graph").

    The module returns the auxiliary losses and leaves their weighting to the
    caller: GCDoc minimises :math:`\mathcal{L}_m + \theta \mathcal{L}_a`
    (Eq. (29)) plus the tagger's loss. Choices where the paper is silent
    (*ours*):

    * The :math:`1/T` in :math:`\mathbf{p}_i` (the paper's Eq. (24) sums), so
      that :math:`\mathbf{p}_i` is a distribution.
    * The uncertainty tagger is trained with its own token-level
      cross-entropy, summed over the tokens (``uncertainty_loss``); with
      ``detach_uncertainty_input`` it reads a detached copy of its input, so
      that this loss does not steer the shared token features.
    * ``prune=False`` in :meth:`forward` skips the Monte-Carlo passes and lets
      every neighbour send its message (a warm-up before pruning starts); the
      tagger's loss is still computed.
    * ``relation_labels`` defines :math:`y_{ij}` for non-entity tokens (see
      :func:`~docgraph.nn.relation.relation_targets`), ``isolated`` what the
      gate does with a token without neighbours (see
      :class:`~docgraph.nn.DocGraphConv`).

    Args:
        channels (int): Size :math:`d` of the node features :math:`\mathbf{h}_i`
            (the context Bi-LSTM's states; input = output).
        token_channels (int, optional): Size of the token features
            :math:`\mathbf{x}^u_i` the uncertainty tagger reads (GCDoc:
            :math:`[\mathbf{w}_i; \mathbf{c}_i]`); needed with ``pruning``.
            (default: :obj:`None`)
        num_labels (int, optional): Number of labels :math:`\mathcal{C}` of the
            uncertainty tagger; needed with ``pruning``. (default: :obj:`None`)
        pruning (bool, optional): Build the uncertainty tagger and prune with
            :math:`Drop`. (default: :obj:`True`)
        edge_weights (bool, optional): Build the selective auxiliary classifier
            and weight the messages by :math:`r_{ij}`. (default: :obj:`True`)
        uncertainty_hidden (int, optional): Hidden size per direction of the
            tagger's Bi-LSTM. (default: :obj:`100`)
        dropout (float, optional): Dropout rate of the tagger, the
            Monte-Carlo masks included. (default: :obj:`0.5`)
        num_samples (int, optional): Number :math:`T` of Monte-Carlo passes.
            (default: :obj:`8`)
        threshold (float, optional): Uncertainty threshold :math:`\mathcal{T}`
            (nats). (default: :obj:`0.5`)
        mc_dropout (str, optional): What the Monte-Carlo passes re-sample,
            :obj:`"full"` or :obj:`"output"` (see
            :class:`~docgraph.nn.UncertaintyTagger`). (default: :obj:`"full"`)
        detach_uncertainty_input (bool, optional): Feed the tagger a detached
            copy of its input. (default: :obj:`True`)
        relation_labels (str, optional): Targets :math:`y_{ij}`,
            :obj:`"entity"` or :obj:`"type"` (see
            :func:`~docgraph.nn.relation.relation_targets`).
            (default: :obj:`"entity"`)
        outside_type (int, optional): Entity-type id of ``O`` in ``node_type``.
            (default: :obj:`0`)
        isolated (str, optional): Treatment of tokens without neighbours,
            :obj:`"identity"` or :obj:`"gate"`. (default: :obj:`"identity"`)

    Shapes:
        - **input:**
          node features :math:`(|\mathcal{V}|, d)`,
          edge indices :math:`(2, |\mathcal{E}|)`,
          token features :math:`(|\mathcal{V}|, F_{u})` and sentence lengths
          :math:`(S)` *(with pruning)*,
          labels :math:`(|\mathcal{V}|)` and entity types
          :math:`(|\mathcal{V}|)` *(optional)*
        - **output:** :class:`DocumentGraphOutput`: node features
          :math:`(|\mathcal{V}|, d)`, uncertainty and drop mask
          :math:`(|\mathcal{V}|)`, edge weights :math:`(|\mathcal{E}|)`, two
          scalar losses
    """

    def __init__(
        self,
        channels: int,
        token_channels: int | None = None,
        num_labels: int | None = None,
        *,
        pruning: bool = True,
        edge_weights: bool = True,
        uncertainty_hidden: int = 100,
        dropout: float = 0.5,
        num_samples: int = 8,
        threshold: float = 0.5,
        mc_dropout: str = "full",
        detach_uncertainty_input: bool = True,
        relation_labels: str = "entity",
        outside_type: int = 0,
        isolated: str = "identity",
    ) -> None:
        super().__init__()
        if pruning and (token_channels is None or num_labels is None):
            raise ValueError("pruning needs token_channels and num_labels (the uncertainty "
                             "tagger's input size and number of labels)")
        if relation_labels not in RELATION_LABELS:
            raise ValueError(f"relation_labels must be one of {RELATION_LABELS} "
                             f"(got {relation_labels!r})")
        self.channels = channels
        self.detach_uncertainty_input = detach_uncertainty_input
        self.relation_labels = relation_labels
        self.outside_type = int(outside_type)

        # Built in this order (uncertainty, relation, graph layer): each child draws its
        # parameters when it is built, so the order fixes the model a seed gives.
        self.uncertainty: UncertaintyTagger | None = None
        if pruning:
            self.uncertainty = UncertaintyTagger(
                token_channels,
                uncertainty_hidden,
                num_labels=num_labels,
                dropout=dropout,
                num_samples=num_samples,
                threshold=threshold,
                mc_dropout=mc_dropout,
            )
        self.relation: RelationClassifier | None = None
        if edge_weights:
            self.relation = RelationClassifier(channels)
        self.graph_conv = DocGraphConv(channels, isolated=isolated)
        # No self.reset_parameters() here: the module has no parameters of its own, and every
        # child's constructor already ends in its own reset_parameters(). Drawing the children
        # a second time would consume the random stream again and change the model a seed
        # gives (the models saved and checked in tests/test_reference_step.py).

    def reset_parameters(self) -> None:
        r"""Re-draw every parameter: each child's ``reset_parameters`` (Glorot weights, zero
        biases, the paper's "Initialization"), in the order they were built."""
        for module in (self.uncertainty, self.relation, self.graph_conv):
            if module is not None:
                module.reset_parameters()

    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        token_x: Tensor | None = None,
        sent_len: Tensor | Sequence[int] | None = None,
        y: Tensor | None = None,
        node_type: Tensor | None = None,
        *,
        prune: bool = True,
        plan: DocumentGraphPlan | None = None,
    ) -> DocumentGraphOutput:
        r"""Run the document graph module.

        Args:
            x (torch.Tensor): Node features :math:`\mathbf{h}_i` ``[N, channels]``.
            edge_index (torch.Tensor): Edges ``[2, E]`` (source :math:`j`, target :math:`i`).
            token_x (torch.Tensor, optional): Token features :math:`\mathbf{x}^u_i`
                ``[N, token_channels]`` of the uncertainty tagger (needed with pruning).
            sent_len (torch.Tensor or list of int, optional): Sentence lengths ``[S]`` of the
                flat nodes, summing to ``N`` (needed with pruning: the tagger's Bi-LSTM reads
                sentence by sentence). A list or tuple is made a tensor on ``x``'s device.
            y (torch.Tensor, optional): Gold labels ``[N]``: computes the tagger's loss.
            node_type (torch.Tensor, optional): Gold entity-type id of every node ``[N]``
                (``outside_type`` for ``O``): computes :math:`\mathcal{L}_a`.
            prune (bool, optional): Prune with :math:`Drop`; :obj:`False` skips the
                Monte-Carlo passes and every neighbour sends its message. No effect without
                ``pruning``. (default: :obj:`True`)
            plan (DocumentGraphPlan, optional): The batch's shapes planned beforehand;
                :meth:`DocumentGraphPlan.build` of ``edge_index`` and ``sent_len`` when not
                given (the same results; the Monte-Carlo masks then come from torch's global
                random stream, or per graph with :meth:`DocumentGraphPlan.build`'s ``batch``
                and ``segment_seeds``).

        Returns:
            :class:`DocumentGraphOutput`.

        Raises:
            TypeError: An argument is not a tensor (``sent_len``: nor a list of ints), or of
                the wrong kind of dtype.
            ValueError: An argument's shape does not fit the constructor's ``channels`` or
                ``token_channels``, ``N`` or ``E``; ``sent_len`` does not sum to ``N``; or
                ``edge_index`` holds an index outside ``[0, N)`` (checked on the CPU).
        """
        sent_len = self._check_inputs(x, edge_index, token_x, sent_len, y, node_type,
                                      planned=plan is not None)
        if plan is None:
            num_samples = 0
            if self.uncertainty is not None and self.uncertainty.mc_dropout == "full":
                num_samples = self.uncertainty.num_samples
            plan = DocumentGraphPlan.build(edge_index, sent_len, num_samples=num_samples,
                                           dtype=x.dtype)
        if sent_len is not None and sent_len.device.type != "cpu":
            _check_planned_lengths(sent_len, plan.sentences, x.size(0))
        layout, mc_layout = plan.sentences, plan.monte_carlo
        uncertainty = drop = source_mask = uncertainty_loss = None
        if self.uncertainty is not None:
            if token_x is None or sent_len is None:
                raise ValueError("the uncertainty tagger needs token_x and sent_len")
            unc_in = token_x.detach() if self.detach_uncertainty_input else token_x
            if prune:
                uncertainty, _ = self.uncertainty.uncertainty(
                    unc_in, sent_len, layout, mc_layout, plan.segment_sizes,
                    plan.segment_seeds)
                drop = self.uncertainty.drop_mask(uncertainty)
                source_mask = ~drop
            if y is not None:
                logits = self.uncertainty(unc_in, sent_len, layout)
                uncertainty_loss = self.uncertainty.loss(logits, y, reduction="sum")

        edge_weight = rel_loss = None
        if self.relation is not None:
            rel_logits = self.relation(x, edge_index, return_logits=True)
            edge_weight = torch.sigmoid(rel_logits)
            if node_type is not None:
                same, mask = relation_targets(node_type, edge_index, self.relation_labels,
                                              outside=self.outside_type)
                rel_loss = relation_loss(rel_logits, same, "sum", mask)

        out = self.graph_conv(x, edge_index, edge_weight=edge_weight, source_mask=source_mask,
                              gated_nodes=plan.gated_nodes, ptr=plan.edge_ptr)
        return DocumentGraphOutput(out, uncertainty, drop, edge_weight, uncertainty_loss,
                                   rel_loss)

    def _check_inputs(self, x: Tensor, edge_index: Tensor, token_x: Tensor | None,
                      sent_len: Tensor | Sequence[int] | None, y: Tensor | None,
                      node_type: Tensor | None, planned: bool = False) -> Tensor | None:
        """Check the inputs of :meth:`forward` like a PyG layer (one error naming the first
        argument that does not fit); return ``sent_len`` as a tensor. ``sent_len`` on an
        accelerator is summed later, from the plan's host copy; with a ``planned`` batch (a
        plan given) no value is read back (the plan checked them on the host)."""
        _check_features("x", x, self.channels)
        num_nodes = x.size(0)
        _check_edge_index(edge_index, num_nodes, read_values=not planned)
        if token_x is not None and self.uncertainty is not None:  # unread without it
            _check_features("token_x", token_x, self.uncertainty.in_channels, num_nodes,
                            owner="token_channels")
        for name, value in (("y", y), ("node_type", node_type)):
            if value is not None:
                _check_node_vector(name, value, num_nodes)
        if sent_len is None:
            return None
        sent_len = _as_lengths(sent_len, x.device)
        if not planned and _reads_values(sent_len):
            _check_total(int(sent_len.sum()), sent_len.numel(), num_nodes)
        return sent_len

    def extra_repr(self) -> str:
        parts = [f"{self.channels}", f"pruning={self.uncertainty is not None}",
                 f"edge_weights={self.relation is not None}"]
        if self.uncertainty is not None:
            parts.append(f"detach_uncertainty_input={self.detach_uncertainty_input}")
        if self.relation is not None:
            parts.append(f"relation_labels={self.relation_labels!r}, "
                         f"outside_type={self.outside_type}")
        return ", ".join(parts)
