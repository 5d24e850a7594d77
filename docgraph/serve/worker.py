"""A model worker of the tagging service: one process with the model loaded, tagging the
passes the batcher sends it through the one tagging core.

The front process (:mod:`docgraph.serve.pool`) starts it with
:func:`~docgraph.runtime.lifetime.run_child` (it ends with the front, ``kill -9`` included) and
talks to it over a pipe: the worker sends ``("ready", model card)`` once the model is loaded
and warmed (or ``("failed", message)``), then answers each pass (a list of
:class:`~docgraph.serve.batcher.PassDocument`) with ``("ok", [(entity records, tokens),
...])`` in the same order, or ``("error",
message)``; ``None`` ends it.
"""

from __future__ import annotations

import logging
import signal
import traceback
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from docgraph.config.serve import ServeConfig
from docgraph.persistence.manifest import read_manifest, read_test_scores
from docgraph.runtime.integrity import read_json_file
from docgraph.runtime.lifetime import leave_now
from docgraph.serve.batcher import PassDocument
from docgraph.tagging import entity_records
from docgraph.tagging.tagger import Tagger

__all__ = ["DocResult", "main", "model_card", "tag_pass"]

log = logging.getLogger(__name__)

DocResult = tuple[list[dict], int]
"""What a document becomes: its entity records (as ``predict.py`` writes them) and its
number of tokens."""

_WARM_UP = "Warm-up text for the tagging service . It is tagged once at start ."


def tag_pass(tagger: Tagger, documents: Sequence[PassDocument]) -> list[DocResult]:
    """Tag one pass of documents through the tagging core (:meth:`Tagger.pipe`), in order:
    those that need scores in one call, the others in another; each document's records made
    by the one serialiser (:func:`~docgraph.tagging.entity_records`). A document's entities
    do not depend on the others of its pass (its Monte-Carlo masks are its own)."""
    results: list[DocResult] = [([], 0)] * len(documents)
    for scored in (False, True):
        places = [k for k, d in enumerate(documents) if d.needs_scores is scored]
        if not places:
            continue
        tagged = tagger.pipe([documents[k].content for k in places], scores=scored,
                             doc_ids=[documents[k].doc_id for k in places])
        for k, doc in zip(places, tagged):
            wanted = documents[k]
            records = entity_records(doc, scores=wanted.scores, min_score=wanted.min_score,
                                     types=wanted.types)
            results[k] = (records, sum(len(s.tokens) for s in doc.sentences))
    return results


def model_card(tagger: Tagger, name: str) -> dict[str, Any]:
    """What ``GET /v1/model`` says of the model: its name, types and settings (the
    approximations it tags with: ``"faithful"`` for none; whether it decodes with label
    consistency), what its manifest records, and its scores: dev and test when its directory
    has a ``metrics.json`` (a ``train.py`` run), test when it has a ``scores.json`` (a shipped
    model's evaluation by name)."""
    directory = tagger.path
    manifest = read_manifest(directory) if directory is not None else None
    figures = None
    if directory is not None and (Path(directory) / "metrics.json").is_file():
        try:
            metrics = read_json_file(Path(directory) / "metrics.json", sealed=False)
            figures = {split: {key: metrics[split][key] for key in ("precision", "recall", "f1")}
                       for split in ("dev", "test") if isinstance(metrics.get(split), dict)}
        except (OSError, ValueError, KeyError, AttributeError) as err:
            log.warning("%s/metrics.json not read: %s", directory, err)
    elif directory is not None:  # a shipped model: its evaluation by name, if recorded
        scores = read_test_scores(directory)
        if scores is not None:
            test = scores["test"]
            figures = {"test": {key: test[key] for key in ("precision", "recall", "f1")}}
    return {
        "name": name,
        "types": tagger.entity_types,
        "graph": tagger.has_graph,
        "threshold": tagger.threshold,
        "language_model": tagger.config.lm is not None,
        "max_doc_tokens": tagger.max_doc_tokens,
        "approximation": tagger.overrides.approximation.describe(),
        "label_consistency": tagger.consistency is not None,
        "run": manifest.get("run") if manifest else None,
        "dtype": manifest.get("dtype") if manifest else None,
        "embeddings": manifest.get("embeddings") if manifest else None,
        "figures": figures,
    }


def main(conn: Connection, config: ServeConfig) -> None:
    """The life of a worker: load and warm the model, then tag what the pipe brings."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the front stops the workers itself
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        tagger = Tagger.load(config.model, threads=config.threads, precision=config.precision,
                             batch_tokens=config.max_batch_tokens, speed=config.speed,
                             consistency=config.consistency)
        tag_pass(tagger, [PassDocument("warm-up", _WARM_UP, scores=True),
                          PassDocument("warm-up", _WARM_UP)])
        conn.send(("ready", model_card(tagger, config.model)))
    except Exception as err:
        conn.send(("failed", str(err).splitlines()[0] if str(err) else type(err).__name__))
        leave_now(1)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        if message is None:
            break
        try:
            conn.send(("ok", tag_pass(tagger, message)))
        except Exception:
            log.error("tagging a pass failed:\n%s", traceback.format_exc())
            conn.send(("error", "tagging failed"))
    leave_now(0)
