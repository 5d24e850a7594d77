"""Where tagging time goes: each stage of ``predict.py``'s work on raw text, timed in one
process.

The stages run as ``predict.py`` runs them for one process (:mod:`docgraph.tagging.pipeline`):
reading and tokenising the text, building the document graphs, then per batch the batching,
each network module (forward hooks) with the Monte-Carlo passes of the uncertainty tagger and
the CRF decoding apart, and writing the JSON lines. A stage's time is its own: a stage that
runs inside another (the Monte-Carlo passes inside the document-graph module) is taken out of
the outer one's. ``other network work`` is what :meth:`GCDoc.predict
<docgraph.model.GCDoc.predict>` spends outside the timed modules (word embeddings, gathers,
concatenations, the host-side plan).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from docgraph_dev.flops import linear_flops, lstm_flops, matmul_gflops

#: The network modules timed by forward hooks: attribute of the model -> stage name.
MODULE_STAGES = {
    "char_encoder": "character encoder",
    "cross_sentence": "cross-sentence module",
    "context_encoder": "context Bi-LSTM",
    "document_graph": "document-graph module (without the MC passes)",
    "emission": "emission layer",
}

#: Every stage, in the order of the work.
STAGES = ("reading and tokenising", "graph building", "language-model features", "batching",
          *MODULE_STAGES.values(),
          "Monte-Carlo passes", "CRF decoding", "other network work", "writing")


class StageClock:
    """Wall time per stage, each stage's own: the time of a stage entered inside another is
    not counted in the outer one."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._stack: list[list[Any]] = []  # [name, start, time of the stages inside]

    def enter(self, name: str) -> None:
        """Start timing ``name`` (inside the stage running now, if any)."""
        self._stack.append([name, time.perf_counter(), 0.0])

    def exit(self) -> None:
        """Stop timing the innermost stage."""
        name, start, inner = self._stack.pop()
        spent = time.perf_counter() - start
        self.seconds[name] = self.seconds.get(name, 0.0) + spent - inner
        if self._stack:
            self._stack[-1][2] += spent

    def current(self) -> str | None:
        """The innermost stage running now (``None``: none)."""
        return self._stack[-1][0] if self._stack else None

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage ``name``."""
        self.enter(name)
        try:
            yield
        finally:
            self.exit()

    def wrap(self, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        """``fn`` timed as stage ``name`` at every call."""
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.stage(name):
                return fn(*args, **kwargs)

        return timed

    def wrap_iterator(self, fn: Callable[..., Iterator[Any]], name: str
                      ) -> Callable[..., Iterator[Any]]:
        """``fn`` (a generator function) with each step of its iterator timed as ``name``."""
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Iterator[Any]:
            it = iter(fn(*args, **kwargs))
            while True:
                with self.stage(name):
                    try:
                        item = next(it)
                    except StopIteration:
                        return
                yield item

        return timed


def _rnn_layer_flops(args: tuple[Any, ...]) -> int:
    """``mkldnn_rnn_layer(input, weight_ih, weight_hh, ...)``: one direction over every step of
    every sequence of the (padded) input."""
    x, weight_ih, weight_hh = args[0], args[1], args[2]
    return lstm_flops(weight_ih.shape[1], weight_hh.shape[1], x.shape[0] * x.shape[1],
                      directions=1)


def _cpu_attention_flops(args: tuple[Any, ...]) -> int:
    """``_scaled_dot_product_flash_attention_for_cpu(query, key, value, ...)``: the query-key
    scores and their weighted sum of the values."""
    query, key, value = args[0], args[1], args[2]
    *batch, length, width = query.shape
    return 2 * math.prod(batch) * length * key.shape[-2] * (width + value.shape[-1])


def _linear_flops(args: tuple[Any, ...]) -> int:
    """``linear(input, weight, ...)`` (whole, as it arrives under :func:`torch.inference_mode`):
    every row of the input times the weight."""
    x, weight = args[0], args[1]
    return linear_flops(weight.shape[1], weight.shape[0], math.prod(x.shape[:-1]))


def operation_flops(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> int:
    """Floating-point operations of one ATen call: matrix products only (PyTorch's
    :mod:`torch.utils.flop_counter` formulas, the CPU LSTM layer, linear layers and attention
    as they arrive whole under :func:`torch.inference_mode`), ``0`` for everything else."""
    from torch.utils.flop_counter import flop_registry

    packet = func._overloadpacket
    aten = torch.ops.aten
    if packet is aten.mkldnn_rnn_layer:
        return _rnn_layer_flops(args)
    if packet is aten.linear:
        return _linear_flops(args)
    if packet in (aten._scaled_dot_product_flash_attention_for_cpu,
                  aten.scaled_dot_product_attention):
        return _cpu_attention_flops(args)
    if packet is aten.mv:
        return 2 * args[0].shape[0] * args[0].shape[1]
    formula = flop_registry.get(packet)
    return int(formula(*args, **kwargs, out_val=out)) if formula is not None else 0


class FlopTally(TorchDispatchMode):
    """Counts the floating-point operations of the matrix products run inside it, per stage of
    ``clock`` (the innermost one running; ``outside`` when none)."""

    def __init__(self, clock: StageClock, outside: str = "other network work") -> None:
        super().__init__()
        self.clock = clock
        self.outside = outside
        self.flops: dict[str, int] = {}

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        count = operation_flops(func, args, kwargs, out)
        if count:
            stage = self.clock.current() or self.outside
            self.flops[stage] = self.flops.get(stage, 0) + count
        return out


@contextmanager
def _instrumented(tagger: Any, clock: StageClock) -> Iterator[None]:
    """``tagger``'s modules, Monte-Carlo passes, CRF decoding, batching and language-model
    features timed as stages of ``clock``; everything restored afterwards."""
    from docgraph.tagging import inference

    gcdoc = tagger.model
    hooks = []
    for attribute, name in MODULE_STAGES.items():
        module = getattr(gcdoc, attribute, None)
        if module is not None:
            hooks.append(module.register_forward_pre_hook(
                lambda *_, name=name: clock.enter(name)))
            hooks.append(module.register_forward_hook(lambda *_: clock.exit()))
    graph = getattr(gcdoc, "document_graph", None)
    tagger_module = getattr(graph, "uncertainty", None)
    saved_batches = inference._tagging_batches
    try:
        if tagger_module is not None:
            tagger_module.uncertainty = clock.wrap(tagger_module.uncertainty,
                                                   "Monte-Carlo passes")
        gcdoc.crf.decode = clock.wrap(gcdoc.crf.decode, "CRF decoding")
        inference._tagging_batches = clock.wrap_iterator(saved_batches, "batching")
        if tagger.lm_encoder is not None:
            tagger.lm_encoder.encode = clock.wrap(tagger.lm_encoder.encode,
                                                  "language-model features")
        yield
    finally:
        for hook in hooks:
            hook.remove()
        inference._tagging_batches = saved_batches
        if tagger_module is not None:
            del tagger_module.uncertainty
        del gcdoc.crf.decode
        if tagger.lm_encoder is not None:
            del tagger.lm_encoder.encode


def _tag_text(tagger: Any, path: Path, clock: StageClock, output_format: str, mc_seed: int
              ) -> tuple[list[Any], str]:
    """``predict.py``'s one-process work on ``path``, stage by stage: the documents read and
    the text written."""
    from docgraph.tagging import inference, pipeline
    from docgraph.tagging.prediction_io import (
        ReadOptions,
        chunk_document,
        format_chunk,
        read_chunks,
    )

    with torch.no_grad():
        with clock.stage("reading and tokenising"):
            options = ReadOptions("text", False, "paragraphs", tagger.max_doc_tokens or 10**9)
            chunks = list(read_chunks(path, options))
            documents = [chunk_document(c) for c in chunks]
        with clock.stage("graph building"):
            graphs = pipeline._graphs([d for d in documents if d.sentences], tagger)
        with clock.stage("other network work"):
            tags = inference.predict_graphs(tagger.model, graphs, tagger.vocabs,
                                            tagger.batch_tokens, tagger.device, mc_seed)
        with clock.stage("writing"):
            it = iter(tags)
            text = "".join(format_chunk(output_format, c, next(it) if d.sentences else [])
                           for c, d in zip(chunks, documents))
    return documents, text


def profile_tagging(model: str | Path, path: Path, output_format: str = "jsonl",
                    mc_seed: int = 0, count_flops: bool = True, precision: str | None = None
                    ) -> dict[str, Any]:
    """Tag the raw text file ``path`` with ``model`` in this process, stage by stage, in
    ``precision`` (:meth:`Tagger.load <docgraph.tagging.tagger.Tagger.load>`'s).

    Returns:
        ``tokens``, ``seconds`` (total), ``tokens_per_second`` and ``stages``: stage ->
        ``{"seconds", "share"}`` (share of the total, %), in the order of :data:`STAGES`.
        With ``count_flops``, each stage also has ``gflop`` (its matrix products, counted on a
        second pass), ``flops_per_token``, ``gflops_per_second`` (on the timed pass) and
        ``of_matmul_rate`` (%, of this machine's rate for a large matrix product, measured here
        in the precision the stage ran in: ``matmul_gflops_per_second_by_precision``);
        ``network`` sums the network's stages (a language model's features apart).
    """
    from docgraph.tagging.tagger import Tagger

    tagger = Tagger.load(model, precision=precision)
    clock = StageClock()
    with _instrumented(tagger, clock):
        start = time.perf_counter()
        documents, text = _tag_text(tagger, path, clock, output_format, mc_seed)
        total = time.perf_counter() - start
    tokens = sum(d.num_tokens for d in documents)
    record: dict[str, Any] = {
        "model": str(model), "precision": tagger.model.config.precision, "tokens": tokens,
        "documents": len(documents),
        "output_characters": len(text), "seconds": total,
        "tokens_per_second": tokens / total if total else 0.0,
        "stages": {name: {"seconds": clock.seconds.get(name, 0.0),
                          "share": 100.0 * clock.seconds.get(name, 0.0) / total if total else 0.0}
                   for name in STAGES},
    }
    if count_flops:
        counting = StageClock()
        tally = FlopTally(counting)
        with _instrumented(tagger, counting), tally:
            _tag_text(tagger, path, counting, output_format, mc_seed)
        lm_stage = "language-model features"
        record["lm_precision"] = lm = (tagger.lm_encoder.precision if tagger.lm_encoder
                                       is not None else None)
        rates = {p: matmul_gflops(dtype=torch.bfloat16 if p == "bf16" else torch.float32)
                 for p in {record["precision"], lm or "fp32"}}
        record["matmul_gflops_per_second"] = rates[record["precision"]]
        record["matmul_gflops_per_second_by_precision"] = rates
        network = {"seconds": 0.0, "gflop": 0.0}
        for name, values in record["stages"].items():
            flops = tally.flops.get(name, 0)
            rate = rates[lm] if name == lm_stage and lm else rates[record["precision"]]
            _add_arithmetic(values, flops, tokens, rate)
            if flops and name != lm_stage:
                network["seconds"] += values["seconds"]
                network["gflop"] += flops / 1e9
        record["network"] = _add_arithmetic(network, int(network["gflop"] * 1e9), tokens,
                                            rates[record["precision"]])
    return record


def _add_arithmetic(values: dict[str, Any], flops: int, tokens: int, rate: float
                    ) -> dict[str, Any]:
    """``values`` (a stage with its ``seconds``) with its arithmetic figures added."""
    seconds = values["seconds"]
    achieved = flops / seconds / 1e9 if seconds and flops else 0.0
    values.update(gflop=flops / 1e9, flops_per_token=flops / tokens if tokens else 0.0,
                  gflops_per_second=achieved, of_matmul_rate=100.0 * achieved / rate)
    return values


def format_profile(record: dict[str, Any]) -> str:
    """A table of one :func:`profile_tagging` record: stage, seconds, share."""
    flops = "network" in record
    lines = [f"{record['model']} ({record.get('precision', 'fp32')}): {record['tokens']:,} "
             f"tokens in {record['seconds']:.1f} s ({record['tokens_per_second']:,.0f} tokens/s, "
             "one process)",
             f"{'stage':<48}{'seconds':>9}{'share':>8}"
             + (f"{'MFLOP/token':>13}{'GFLOP/s':>9}{'of matmul':>11}" if flops else "")]
    rows = list(record["stages"].items())
    if flops:
        network = record["network"]
        rows.append(("network (its stages with products)",
                     {**network, "share": 100.0 * network["seconds"] / record["seconds"]}))
    for name, values in rows:
        line = f"{name:<48}{values['seconds']:>9.2f}{values['share']:>7.1f}%"
        if flops:
            line += (f"{values['flops_per_token'] / 1e6:>13.2f}{values['gflops_per_second']:>9.2f}"
                     f"{values['of_matmul_rate']:>10.1f}%")
        lines.append(line)
    if flops:
        rates = record.get("matmul_gflops_per_second_by_precision",
                           {"fp32": record["matmul_gflops_per_second"]})
        lines.append("matrix product rate of this machine (1024 x 1024): " + ", ".join(
            f"{rate:.1f} GFLOP/s in {'bfloat16' if p == 'bf16' else 'float32'}"
            for p, rate in sorted(rates.items())))
        if record.get("lm_precision"):
            lines.append(f"network in {record['precision']}, language model in "
                         f"{record['lm_precision']}")
    return "\n".join(lines)


__all__ = ["MODULE_STAGES", "STAGES", "FlopTally", "StageClock", "format_profile",
           "operation_flops", "profile_tagging"]
