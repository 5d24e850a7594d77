"""Where a GCDoc training step's time goes: each component's forward + backward, timed alone.

The components are those of :func:`~docgraph_dev.flops.model_flops` (character encoder,
cross-sentence encoder, context BiLSTM, uncertainty tagger, relation graph, emissions + CRF),
each run on a batch's real inputs.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

import torch
from torch import Tensor
from torch_geometric.data import Batch

from docgraph.model import GCDoc
from docgraph.nn.gather import gather_rows
from docgraph.nn.relation import relation_loss
from docgraph_dev.timing import median_seconds


def _fwd_bwd(fn: Callable[[], Tensor]) -> Callable[[], None]:
    def run() -> None:
        fn().sum().backward()

    return run


def component_parts(model: GCDoc, batch: Batch) -> dict[str, Callable[[], None]]:
    """Closures running each GCDoc submodule's forward (+ backward) on ``batch``'s real inputs.

    The inputs of each submodule are computed once with the full model and detached (with
    ``requires_grad``), so every closure times its submodule alone. The uncertainty MC passes
    run without gradient, as in the model.
    """
    model.train()
    sent_len = batch.sent_len
    plan = model.plan(batch)
    sentences = plan.sentences
    windows = (plan.previous, plan.next)
    with torch.no_grad():
        token_x = model._token_features(batch, plan)
        x = token_x
        if model.cross_sentence is not None:
            s_prime = model.cross_sentence(x, sent_len, plan.sentence_doc, layout=sentences,
                                           windows=windows)
            x = torch.cat([x, gather_rows(s_prime, batch.token_sentence)], dim=-1)
        h = model.context_encoder(x, sent_len, sentences)

    def leaf(t: Tensor) -> Tensor:
        return t.detach().clone().requires_grad_(True)

    parts: dict[str, Callable[[], None]] = {
        "char_encoder": _fwd_bwd(lambda: model.char_encoder(batch.chars, batch.char_len,
                                                            plan.chars)),
    }
    if model.cross_sentence is not None:
        cs, tx, doc = model.cross_sentence, leaf(token_x), plan.sentence_doc
        parts["cross_sentence"] = _fwd_bwd(
            lambda: cs(tx, sent_len, doc, layout=sentences, windows=windows))
    cx = leaf(x)
    parts["context_bilstm"] = _fwd_bwd(lambda: model.context_encoder(cx, sent_len, sentences))
    graph_module = model.document_graph
    unc = None if graph_module is None else graph_module.uncertainty
    if unc is not None:
        ux = token_x.detach()
        mc = plan.monte_carlo
        parts["uncertainty_mc"] = lambda: unc.uncertainty(ux, sent_len, sentences, mc)
        parts["uncertainty_train"] = lambda: unc.loss(
            unc(ux, sent_len, sentences), batch.y, "sum").backward()
    hh = leaf(h)
    if graph_module is not None:
        graph_conv, relation = graph_module.graph_conv, graph_module.relation
        edge_index = batch.edge_index
        source_mask = None
        if unc is not None:
            source_mask = ~unc.drop_mask(
                unc.uncertainty(token_x.detach(), sent_len, sentences, plan.monte_carlo)[0])
        types = model.label_to_type[batch.y]
        same = (types[edge_index[0]] == types[edge_index[1]]).to(h.dtype)

        def relation_graph() -> None:
            loss = hh.new_zeros(())
            weight = None
            if relation is not None:
                logits = relation(hh, edge_index, return_logits=True)
                weight = torch.sigmoid(logits)
                loss = loss + relation_loss(logits, same)
            out = graph_conv(hh, edge_index, edge_weight=weight, source_mask=source_mask,
                             gated_nodes=plan.gated_nodes, ptr=plan.edge_ptr)
            (loss + out.sum()).backward()

        parts["relation_graph"] = relation_graph
    parts["emission_crf"] = lambda: model.crf.nll(
        model.emission(hh), sent_len, batch.y, reduction="sum", layout=sentences
    ).backward()
    return parts


def time_components(model: GCDoc, batches: Sequence[Batch], repeats: int) -> dict[str, float]:
    """Median ms per batch of each component's forward + backward (see :func:`component_parts`)."""
    totals: dict[str, list[float]] = {}
    for batch in batches:
        for name, fn in component_parts(model, batch).items():
            fn()  # warm-up
            totals.setdefault(name, []).append(median_seconds(fn, repeats))
            model.zero_grad(set_to_none=True)
    return {name: 1000 * statistics.fmean(values) for name, values in totals.items()}
