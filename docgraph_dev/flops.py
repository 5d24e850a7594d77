"""Analytic FLOPs of GCDoc and the BiLSTM-CRF baseline, and the machine's matmul GFLOP/s.

The counter is analytic: multiply-add = 2 FLOPs, element-wise arithmetic is not counted, and
backward costs :data:`BACKWARD_FACTOR` times the forward. The matmul GFLOP/s of
:func:`matmul_gflops` is the hardware reference a training step's achieved GFLOP/s is
compared with.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor
from torch_geometric.data import Batch

from docgraph.model import GCDoc
from docgraph.nn.cross_sentence import sentence_windows
from docgraph_dev.timing import median_seconds

#: FLOPs of a backward pass per FLOP of its forward pass.
BACKWARD_FACTOR = 2.0
#: GCDoc's training GFLOP/s at one thread over the machine's one-thread matmul GFLOP/s
MATMUL_FRACTION_TARGET = 0.5
#: The components of :func:`model_flops` that run without gradient (no backward).
NO_GRAD_COMPONENTS = ("uncertainty_mc",)
#: How the FLOPs of a speed record are counted (its ``flops_note``).
FLOPS_NOTE = (
    "analytic forward FLOPs (multiply-add = 2); LSTMs 2 dirs x 4 gates x (in + hidden)"
    " x hidden x 2 per real token step; the graph gate only on nodes that receive an"
    " edge; a training step counts a backward of 2x the forward for every component"
    " except the Monte-Carlo passes, which run without gradient"
)


def lstm_flops(in_dim: int, hidden: int, steps: int, directions: int = 2) -> int:
    """Forward FLOPs of an LSTM layer: ``directions * 4 gates * (in + hidden) * hidden * 2``
    per token step (multiply-add = 2 FLOPs; element-wise gate arithmetic is not counted).

    Args:
        in_dim: Input size.
        hidden: Hidden size per direction.
        steps: Total number of token steps (sum of sequence lengths).
        directions: 2 for a BiLSTM.
    """
    return directions * 4 * (in_dim + hidden) * hidden * 2 * steps


def linear_flops(in_dim: int, out_dim: int, rows: int) -> int:
    """Forward FLOPs of a linear layer applied to ``rows`` vectors (``2 * in * out`` each)."""
    return 2 * in_dim * out_dim * rows


def _unique_char_steps(batch: Batch) -> int:
    """Character steps the :class:`~docgraph.nn.CharEncoder` runs (once per distinct word)."""
    chars = batch.chars
    char_len = batch.char_len.clamp(min=1, max=chars.size(1))
    key = torch.cat([chars, char_len.view(-1, 1).to(chars.dtype)], dim=1)
    uniq = torch.unique(key, dim=0)
    return int(uniq[:, -1].sum())


def _sentence_doc(batch: Batch) -> Tensor:
    """The document of every sentence of ``batch``."""
    starts = torch.cumsum(batch.sent_len, 0) - batch.sent_len
    doc_of_token = getattr(batch, "batch", None)
    return torch.zeros_like(batch.sent_len) if doc_of_token is None else doc_of_token[starts]


def model_flops(model: GCDoc, batch: Batch, training: bool = True) -> dict[str, int]:
    """Analytic forward FLOPs of ``model`` on ``batch``, per component.

    BiLSTMs count their real number of token steps on the batch (the cross-sentence windows
    by their total length, the character LSTM once per distinct word as the encoder runs it);
    linear layers ``2 * in * out`` per row; the graph layer per node (its 7 ``d x d`` blocks)
    and per edge (``2 d`` for scaling and summing a message); the CRF ``3 C^2`` per token.

    Args:
        model: The model.
        batch: A batch of document graphs.
        training: Count the uncertainty tagger's training pass (only run with a loss).

    Returns:
        Component name -> FLOPs; ``"total"`` is their sum.
    """
    cfg = model.config
    n = int(batch.num_nodes)
    sent_len = batch.sent_len
    num_sents = int(sent_len.numel())
    num_edges = int(batch.edge_index.size(1))
    C = model.num_labels
    token_dim = cfg.word_dim + 2 * cfg.char_hidden
    out: dict[str, int] = {
        "char_encoder": lstm_flops(cfg.char_dim, cfg.char_hidden, _unique_char_steps(batch))
    }
    context_in = token_dim
    if model.cross_sentence is not None:
        cs = model.cross_sentence
        _, prev_len, _, next_len = sentence_windows(sent_len, _sentence_doc(batch), cs.window)
        steps = n
        if cs.window_encoding == "per_sentence":  # every sentence once per enabled side
            steps += n * ((cs.enc_previous is not None) + (cs.enc_next is not None))
        else:
            steps += int(prev_len.sum()) if cs.enc_previous is not None else 0
            steps += int(next_len.sum()) if cs.enc_next is not None else 0
        d = cfg.sent_dim
        fuse = 2 * (2 * linear_flops(d, d, 1) + linear_flops(d, 1, 1)) + 3 * linear_flops(d, d, 1)
        out["cross_sentence"] = lstm_flops(token_dim, d // 2, steps) + fuse * num_sents
        context_in += d
    out["context_bilstm"] = lstm_flops(context_in, cfg.hidden, n)
    d = 2 * cfg.hidden
    graph_module = model.document_graph
    if graph_module is not None and graph_module.uncertainty is not None:
        u = graph_module.uncertainty
        bilstm = lstm_flops(token_dim, u.hidden_channels, n)
        classifier = linear_flops(2 * u.hidden_channels, C, n)
        one_pass = bilstm + classifier
        if u.mc_dropout == "output":  # one BiLSTM pass, T dropout masks on its output
            out["uncertainty_mc"] = bilstm + u.num_samples * classifier
        else:
            out["uncertainty_mc"] = u.num_samples * one_pass
        if training:
            out["uncertainty_train"] = one_pass
    if graph_module is not None:
        # lin_a transforms every node; the gate's six d x d blocks run only on the nodes that
        # receive an edge unless isolated nodes are gated too
        gated = n if graph_module.graph_conv.isolated == "gate" else int(
            torch.unique(batch.edge_index[1]).numel())
        graph = linear_flops(d, d, n) + 6 * linear_flops(d, d, gated) + 2 * d * num_edges
        if graph_module.relation is not None:
            graph += 2 * linear_flops(d, 1, n) + 2 * num_edges
        out["relation_graph"] = graph
    out["emission_crf"] = linear_flops(d, C, n) + 3 * C * C * n
    out["total"] = sum(out.values())
    return out


def train_step_flops(model: GCDoc, batch: Batch) -> int:
    """FLOPs of one training step: forward, plus a backward of twice the forward for every
    component that takes gradients (the Monte-Carlo passes run under ``no_grad``)."""
    parts = model_flops(model, batch, training=True)
    no_grad = sum(parts.get(name, 0) for name in NO_GRAD_COMPONENTS)
    return int((1 + BACKWARD_FACTOR) * (parts["total"] - no_grad) + no_grad)


def flops_per_token_by_component(model: GCDoc, batches: Sequence[Batch]) -> dict[str, float]:
    """Training forward FLOPs of :func:`model_flops` summed over ``batches``, per token."""
    tokens = sum(int(b.num_nodes) for b in batches)
    summed: dict[str, int] = {}
    for batch in batches:
        for name, flops in model_flops(model, batch).items():
            summed[name] = summed.get(name, 0) + flops
    return {name: flops / tokens for name, flops in summed.items()}


def matmul_gflops(size: int = 1024, repeats: int = 5, dtype: torch.dtype = torch.float32
                  ) -> float:
    """Measured dense ``size x size`` matmul GFLOP/s of ``dtype`` (float32 unless given) on the
    current thread count."""
    a = torch.randn(size, size, dtype=dtype)
    b = torch.randn(size, size, dtype=dtype)
    torch.mm(a, b)
    seconds = median_seconds(lambda: torch.mm(a, b), repeats)
    return 2 * size**3 / seconds / 1e9
