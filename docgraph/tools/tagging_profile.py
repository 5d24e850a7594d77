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
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


def profile_tagging(model: str | Path, path: Path, output_format: str = "jsonl",
                    mc_seed: int = 0) -> dict[str, Any]:
    """Tag the raw text file ``path`` with ``model`` in this process, stage by stage.

    Returns:
        ``tokens``, ``seconds`` (total), ``tokens_per_second`` and ``stages``: stage ->
        ``{"seconds", "share"}`` (share of the total, %), in the order of :data:`STAGES`.
    """
    import torch

    from docgraph.tagging import inference, pipeline
    from docgraph.tagging.prediction_io import (
        ReadOptions,
        chunk_document,
        format_chunk,
        read_chunks,
    )
    from docgraph.tagging.tagger import Tagger

    tagger = Tagger.load(model)
    clock = StageClock()
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
        start = time.perf_counter()
        if tagger.lm_encoder is not None:
            tagger.lm_encoder.encode = clock.wrap(tagger.lm_encoder.encode,
                                                  "language-model features")
        with torch.no_grad():
            with clock.stage("reading and tokenising"):
                options = ReadOptions("text", False, "paragraphs",
                                      tagger.max_doc_tokens or 10**9)
                chunks = list(read_chunks(path, options))
                documents = [chunk_document(c) for c in chunks]
            with clock.stage("graph building"):
                graphs = pipeline._graphs([d for d in documents if d.sentences], tagger)
            with clock.stage("other network work"):
                tags = inference.predict_graphs(gcdoc, graphs, tagger.vocabs,
                                                tagger.batch_tokens, tagger.device, mc_seed)
            with clock.stage("writing"):
                it = iter(tags)
                text = "".join(format_chunk(output_format, c, next(it) if d.sentences else [])
                               for c, d in zip(chunks, documents))
        total = time.perf_counter() - start
    finally:
        for hook in hooks:
            hook.remove()
        inference._tagging_batches = saved_batches
        if tagger_module is not None:
            del tagger_module.uncertainty
        del gcdoc.crf.decode
        if tagger.lm_encoder is not None:
            del tagger.lm_encoder.encode
    tokens = sum(d.num_tokens for d in documents)
    return {
        "model": str(model), "tokens": tokens, "documents": len(documents),
        "output_characters": len(text), "seconds": total,
        "tokens_per_second": tokens / total if total else 0.0,
        "stages": {name: {"seconds": clock.seconds.get(name, 0.0),
                          "share": 100.0 * clock.seconds.get(name, 0.0) / total if total else 0.0}
                   for name in STAGES},
    }


def format_profile(record: dict[str, Any]) -> str:
    """A table of one :func:`profile_tagging` record: stage, seconds, share."""
    lines = [f"{record['model']}: {record['tokens']:,} tokens in {record['seconds']:.1f} s "
             f"({record['tokens_per_second']:,.0f} tokens/s, one process)",
             f"{'stage':<48}{'seconds':>9}{'share':>8}"]
    for name, values in record["stages"].items():
        lines.append(f"{name:<48}{values['seconds']:>9.2f}{values['share']:>7.1f}%")
    return "\n".join(lines)


__all__ = ["MODULE_STAGES", "STAGES", "StageClock", "format_profile", "profile_tagging"]
