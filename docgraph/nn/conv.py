"""The gated document-graph convolution of GCDoc.

Note: this module deliberately has no ``from __future__ import annotations``
and no ``__all__``: PyG generates the TorchScript-able ``propagate`` from a
template that star-imports this module and needs the real annotation objects
(e.g. ``OptTensor``).
"""

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.nn.conv import MessagePassing
from torch_geometric.typing import OptTensor

from docgraph.nn.gather import gather_rows, segment_sum
from docgraph.nn.templates import templates_in_memory


def _describe(value: object) -> str:
    """``dtype tensor of shape [...]`` for a tensor, the type's name for anything else."""
    if isinstance(value, Tensor):
        return f"{str(value.dtype).removeprefix('torch.')} tensor of shape {list(value.shape)}"
    return f"a {type(value).__name__}"


def _reads_values(t: Tensor) -> bool:
    """Whether a check may read ``t``'s values: on the CPU (no device sync), not compiling."""
    compiling = getattr(torch.compiler, "is_compiling", None)  # torch >= 2.3
    return t.device.type == "cpu" and not (compiling is not None and compiling())


def _check_features(name: str, x: Tensor, channels: int, num_nodes: int | None = None,
                    owner: str = "channels") -> None:
    """Check that ``x`` is a ``[N, channels]`` tensor (``N = num_nodes`` when given); ``owner``
    names the constructor argument that fixed ``channels``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a tensor of shape [N, {channels}] (got {_describe(x)})")
    rows = "N" if num_nodes is None else f"N={num_nodes}"
    rows_fit = num_nodes is None or (x.dim() > 0 and x.size(0) == num_nodes)
    if x.dim() != 2 or x.size(1) != channels or not rows_fit:
        raise ValueError(f"{name} must have shape [{rows}, {channels}] ({owner}={channels}), "
                         f"got {list(x.shape)}")


def _integer_dtype(t: Tensor) -> bool:
    """Whether ``t`` holds integers (not floats, complex numbers or booleans)."""
    return not (t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool)


def _check_edge_index(edge_index: Tensor, num_nodes: int, read_values: bool = True) -> None:
    """Check that ``edge_index`` is a ``[2, E]`` integer tensor of indices in ``[0, N)`` (the
    range only with ``read_values``: inputs planned on the host are not read again)."""
    if not isinstance(edge_index, Tensor):
        raise TypeError(f"edge_index must be a tensor of shape [2, E] "
                        f"(got {_describe(edge_index)})")
    if not _integer_dtype(edge_index):
        raise TypeError(f"edge_index must hold integer node indices "
                        f"(got {_describe(edge_index)})")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must have shape [2, E], got {list(edge_index.shape)}")
    if read_values and edge_index.numel() and _reads_values(edge_index):
        low, high = (int(v) for v in torch.aminmax(edge_index))
        if low < 0 or high >= num_nodes:
            raise ValueError(f"edge_index must hold node indices in [0, {num_nodes}) for "
                             f"N={num_nodes} nodes, got indices from {low} to {high}")


def _check_node_vector(name: str, value: Tensor, num_nodes: int, mask: bool = False) -> None:
    """Check that ``value`` is a ``[N]`` tensor; with ``mask``, a boolean one."""
    kind = "a boolean mask" if mask else "a tensor"
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be {kind} of shape [N={num_nodes}] "
                        f"(got {_describe(value)})")
    if mask and value.dtype != torch.bool:
        raise TypeError(f"{name} must be a boolean mask of shape [N={num_nodes}], one entry "
                        f"per node, not node indices (got {_describe(value)})")
    if value.dim() != 1 or value.size(0) != num_nodes:
        raise ValueError(f"{name} must have shape [N={num_nodes}] (one entry per node), "
                         f"got {list(value.shape)}")


def _check_conv_inputs(x: Tensor, edge_index: Tensor, channels: int,
                       edge_weight: OptTensor = None, source_mask: OptTensor = None,
                       gated_nodes: OptTensor = None, ptr: OptTensor = None) -> None:
    """Check the inputs of :meth:`DocGraphConv.forward`; raise one clear error naming the
    first argument that does not fit."""
    _check_features("x", x, channels)
    num_nodes = x.size(0)
    # edges planned on the host (gated_nodes, ptr) came from checked graphs: no read-back
    _check_edge_index(edge_index, num_nodes, read_values=gated_nodes is None)
    num_edges = edge_index.size(1)
    if edge_weight is not None:
        if not isinstance(edge_weight, Tensor):
            raise TypeError(f"edge_weight must be a tensor of shape [E={num_edges}] "
                            f"(got {_describe(edge_weight)})")
        if edge_weight.dim() != 1 or edge_weight.size(0) != num_edges:
            raise ValueError(f"edge_weight must have shape [E={num_edges}] (one weight per "
                             f"edge of edge_index), got {list(edge_weight.shape)}")
    if source_mask is not None:
        _check_node_vector("source_mask", source_mask, num_nodes, mask=True)
    if (gated_nodes is None) != (ptr is None):
        raise ValueError("gated_nodes and ptr go together: give both or neither")
    if gated_nodes is not None:
        if not isinstance(gated_nodes, Tensor) or not isinstance(ptr, Tensor):
            raise TypeError(f"gated_nodes and ptr must be tensors (got "
                            f"{_describe(gated_nodes)} and {_describe(ptr)})")
        if gated_nodes.dim() != 1 or ptr.dim() != 1 or ptr.numel() != gated_nodes.numel() + 1:
            raise ValueError(f"ptr must have shape [G + 1] for gated_nodes of shape [G], got "
                             f"{list(ptr.shape)} and {list(gated_nodes.shape)}")


class DocGraphConv(MessagePassing):
    r"""The gated graph layer of the document graph module of GCDoc from the
    paper Wang et al., `"Exploiting Global Contextual Information for
    Document-level Named Entity Recognition"
    <https://arxiv.org/abs/2106.00887>`_ (Section IV-C, Eqs. (18),
    (23) and (28) for the aggregation, Eqs. (19)--(22) for the gate).

    Neighbours are aggregated with an edge-weighted *mean* over the neighbours
    that are allowed to send messages, then fused with the node's own state by
    a GRU-like gate:

    .. math::
        \mathbf{a}_i &= \mathrm{ReLU}\Big( \frac{1}{Num(i)}
        \sum_{j \in \mathcal{N}(i),\, j \notin Drop} r_{ij}
        \left(\mathbf{W}_a \mathbf{h}_j + \mathbf{b}_a\right) \Big)

        \mathbf{z}_i &= \sigma(\mathbf{W}_z \mathbf{a}_i + \mathbf{U}_z \mathbf{h}_i)

        \mathbf{r}_i &= \sigma(\mathbf{W}_r \mathbf{a}_i + \mathbf{U}_r \mathbf{h}_i)

        \tilde{\mathbf{h}}_i &= \tanh(\mathbf{W}_o \mathbf{a}_i +
        \mathbf{U}_o (\mathbf{r}_i \odot \mathbf{h}_i))

        \hat{\mathbf{h}}_i &= (1 - \mathbf{z}_i) \odot \mathbf{h}_i +
        \mathbf{z}_i \odot \tilde{\mathbf{h}}_i

    where :math:`\mathcal{N}(i)` are the sources :math:`j` of the edges
    :math:`j \rightarrow i` (``edge_index[0]`` = source, ``edge_index[1]`` =
    target), :math:`r_{ij}` is the edge weight (relation score, ``1`` when
    ``edge_weight`` is ``None``), :math:`Drop` is the set of nodes with
    ``source_mask == False`` (graph pruning by model uncertainty) and
    :math:`Num(i)` is the *number* of edges into :math:`i` that take part in
    the sum (not the sum of their weights). Without ``edge_weight`` and
    ``source_mask`` the layer is the plain mean aggregation ("+Doc Graph" in
    the paper's ablation). :math:`\mathbf{W}_a \mathbf{h}_j + \mathbf{b}_a` is
    computed once per node before propagation. Multi-edges count once per
    edge.

    Choices where the paper is silent:

    * ``isolated="identity"`` (default): a node that receives no edge at all
      (in-degree ``0``) is passed through unchanged,
      :math:`\hat{\mathbf{h}}_i = \mathbf{h}_i` -- in the paper's graph such a
      token is not a node. With ``isolated="gate"`` it goes through the gate
      with :math:`\mathbf{a}_i = \mathbf{0}`.
    * A node that has incoming edges, all of them pruned (:math:`Num(i) = 0`),
      always gets :math:`\mathbf{a}_i = \mathbf{0}` and goes through the gate.
    * The gate equations of the paper carry no biases; ``gate_bias=True`` adds
      biases to :math:`\mathbf{W}_z, \mathbf{W}_r, \mathbf{W}_o` as in a
      standard GRU. (default: ``False``)

    All weight matrices are Glorot-initialised (each :math:`d \times d` block
    on its own), biases are zero (paper, "Initialization").

    :meth:`forward` checks its inputs (widths, lengths, index range, mask
    type) and raises a :class:`ValueError` or :class:`TypeError` naming the
    argument. Checks that read tensor values (the index range) run only on
    tensors on the CPU, outside :func:`torch.compile`, so that they never wait
    for an accelerator; TorchScript skips all of them.

    The layer can be compiled with :func:`torch.jit.script` and traced by
    :func:`torch.compile` with ``fullgraph=True`` (both tested; the tests use
    the ``aot_eager`` backend, the same graph is what inductor compiles).

    Args:
        channels (int): Size :math:`d` of each node feature (input = output; the
            layer has one channel size, so ``DocGraphConv(16, 8)`` is a
            :class:`TypeError`: the options below are keyword-only).
        bias (bool, optional): If set to :obj:`False`, the layer will not learn
            the bias :math:`\mathbf{b}_a`. (default: :obj:`True`)
        isolated (str, optional): Treatment of nodes without incoming edges,
            :obj:`"identity"` or :obj:`"gate"`. (default: :obj:`"identity"`)
        gate_bias (bool, optional): Learn biases in the gate (not in the
            paper). (default: :obj:`False`)
        **kwargs (optional): Additional arguments of
            :class:`torch_geometric.nn.conv.MessagePassing` (``aggr`` is fixed
            to :obj:`"add"`; the count normalisation is done by the layer).

    Shapes:
        - **input:**
          node features :math:`(|\mathcal{V}|, d)`,
          edge indices :math:`(2, |\mathcal{E}|)`,
          edge weights :math:`(|\mathcal{E}|)` *(optional)*,
          source mask :math:`(|\mathcal{V}|)` boolean, ``True`` = may send
          messages *(optional)*
        - **output:** node features :math:`(|\mathcal{V}|, d)`
    """

    def __init__(
        self,
        channels: int,
        *,
        bias: bool = True,
        isolated: str = "identity",
        gate_bias: bool = False,
        **kwargs,
    ) -> None:
        if isolated not in ("identity", "gate"):
            raise ValueError(f"isolated must be 'identity' or 'gate' (got {isolated!r})")
        if kwargs.get("aggr", "add") != "add":
            raise ValueError("DocGraphConv fixes aggr='add' (mean over Num(i) done internally)")
        kwargs["aggr"] = "add"
        super().__init__(**kwargs)

        self.channels = channels
        self.isolated = isolated
        self.gate_bias = gate_bias

        self.lin_a = torch.nn.Linear(channels, channels, bias=bias)
        # [W_z; W_r; W_o] applied to a, [U_z; U_r] applied to h, U_o to r * h.
        self.lin_w = torch.nn.Linear(channels, 3 * channels, bias=gate_bias)
        self.lin_u = torch.nn.Linear(channels, 2 * channels, bias=False)
        self.lin_uo = torch.nn.Linear(channels, channels, bias=False)

        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot initialisation of every ``d x d`` weight matrix, zero biases."""
        super().reset_parameters()
        d = self.channels
        for lin in (self.lin_a, self.lin_w, self.lin_u, self.lin_uo):
            for k in range(lin.weight.size(0) // d):
                torch.nn.init.xavier_uniform_(lin.weight.data[k * d : (k + 1) * d])
            if lin.bias is not None:
                torch.nn.init.zeros_(lin.bias)

    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_weight: OptTensor = None,
        source_mask: OptTensor = None,
        gated_nodes: OptTensor = None,
        ptr: OptTensor = None,
    ) -> Tensor:
        """Run one round of gated document-graph message passing.

        Args:
            x (torch.Tensor): Node features ``[N, channels]``.
            edge_index (torch.Tensor): Edges ``[2, E]`` (source, target), in any order.
            edge_weight (torch.Tensor, optional): Relation scores ``[E]``.
            source_mask (torch.Tensor, optional): Boolean ``[N]``, ``True`` for
                nodes allowed to send messages (``False`` = in :math:`Drop`).
            gated_nodes (torch.Tensor, optional): With ``ptr``: the ``G`` nodes that receive
                edges, ascending, when ``edge_index`` is sorted by target (as
                :func:`~docgraph.graph.recurrence_edges` makes it) and planned on the host
                (``docgraph.batching.plan``): only they go through the gate.
            ptr (torch.Tensor, optional): With ``gated_nodes``: ``[G + 1]`` offsets of each
                gated node's incoming edges in ``edge_index`` (CSR).

        Without ``gated_nodes`` and ``ptr`` the edges are sorted by target here (stable) and
        every node is a segment; the result is the same. Either way the aggregation is an
        ordered segment sum and every gather has a gather-free backward, so the layer has no
        atomic or data-dependent operation (deterministic on CUDA; static shapes for
        :func:`torch.compile`).

        Returns:
            Updated node features ``[N, channels]``.

        Raises:
            TypeError: An argument is not a tensor, or of the wrong kind of dtype (e.g. a
                ``source_mask`` of node indices instead of booleans).
            ValueError: An argument's shape does not fit ``channels``, ``N`` or ``E``, or
                ``edge_index`` holds an index outside ``[0, N)`` (checked on the CPU).
        """
        if not torch.jit.is_scripting():
            _check_conv_inputs(x, edge_index, self.channels, edge_weight, source_mask,
                               gated_nodes, ptr)
        num_nodes = x.size(0)
        nodes = torch.arange(num_nodes, device=x.device)
        if gated_nodes is None or ptr is None:
            order = torch.sort(edge_index[1], stable=True)[1]
            edge_index = edge_index[:, order]
            if edge_weight is not None:
                edge_weight = gather_rows(edge_weight, order)
            targets = nodes
            ptr = torch.searchsorted(edge_index[1], torch.arange(
                num_nodes + 1, device=x.device))
        else:
            targets = gated_nodes
        src = edge_index[0]

        weight = edge_weight
        degree = (ptr[1:] - ptr[:-1]).to(x.dtype)
        if source_mask is None:
            count = degree
        else:
            keep = source_mask[src].to(x.dtype)
            count = segment_sum(keep, ptr)
            weight = keep if weight is None else weight * keep

        m = self.lin_a(x)
        # propagate_type: (edge_messages: Tensor, edge_weight: OptTensor, segment_ptr: Tensor)
        agg = self.propagate(edge_index, edge_messages=gather_rows(m, src), edge_weight=weight,
                             segment_ptr=ptr)
        a = F.relu(agg / count.clamp(min=1.0).view(-1, 1))

        # slot[i]: node i's row among the targets (len(targets) when it is not one)
        num_targets = targets.numel()
        slot = torch.searchsorted(targets, nodes)
        is_target = torch.cat([targets, targets.new_full((1,), -1)])[slot] == nodes
        slot = torch.where(is_target, slot, num_targets)
        zero = x.new_zeros(1, x.size(1))
        if self.isolated == "gate":
            return self._gate(gather_rows(torch.cat([a, zero]), slot), x)
        # Only nodes with incoming edges go through the gate; the rest pass unchanged.
        gated = self._gate(a, gather_rows(x, targets))
        has_edges = torch.cat([degree > 0, degree.new_zeros(1, dtype=torch.bool)])[slot]
        return torch.where(has_edges.unsqueeze(1), gather_rows(torch.cat([gated, zero]), slot),
                           x)

    def _gate(self, a: Tensor, x: Tensor) -> Tensor:
        wz, wr, wo = self.lin_w(a).chunk(3, dim=-1)
        uz, ur = self.lin_u(x).chunk(2, dim=-1)
        z = torch.sigmoid(wz + uz)
        r = torch.sigmoid(wr + ur)
        h_tilde = torch.tanh(wo + self.lin_uo(r * x))
        return (1.0 - z) * x + z * h_tilde

    def message(self, edge_messages: Tensor, edge_weight: OptTensor) -> Tensor:
        r"""Scale the transformed source features :math:`\mathbf{W}_a \mathbf{h}_j +
        \mathbf{b}_a` (gathered per edge by :func:`~docgraph.nn.gather.gather_rows`, whose
        backward is deterministic, instead of PyG's ``index_select``) by the edge weight."""
        return edge_messages if edge_weight is None \
            else edge_weight.view(-1, 1) * edge_messages

    def aggregate(self, inputs: Tensor, segment_ptr: Tensor) -> Tensor:
        """Sum the messages of each target: an ordered segment sum over the edges sorted by
        target (``segment_ptr`` in CSR form), not a scatter (atomic on CUDA)."""
        return segment_sum(inputs, segment_ptr)

    def _set_jittable_templates(self, raise_on_error: bool = False) -> None:
        # PyG writes the rendered templates to $TMPDIR and never removes them; in memory here
        with templates_in_memory():
            super()._set_jittable_templates(raise_on_error)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.channels}, isolated={self.isolated})"
