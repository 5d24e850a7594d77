"""How a trained model tags: the settings of the tagging tools and their defaults (torch-free).

Each flag of ``evaluate.py``, ``predict.py`` and ``visualize.py`` that says how to tag is a field
of :class:`TaggingConfig`, declared once like the training settings
(:mod:`docgraph.config.fields`); the marks :data:`EVALUATE`, :data:`PREDICT` and
:data:`VISUALIZE` say which tools take it. The parsers, their ``--help`` and the checks of the
values are generated from these declarations (:func:`docgraph.cli.arguments.add_tagging_flags`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from docgraph.config.fields import (
    Setting,
    choice,
    integer,
    number,
    setting_of,
    settings_of,
    switch,
    text,
)
from docgraph.config.model import GCDocConfig
from docgraph.config.train import TrainConfig

__all__ = [
    "BASELINE_MIN_TOKENS_PER_TAGGING_PROCESS",
    "DEFAULT_BATCH_TOKENS",
    "DEFAULT_MAX_DOC_TOKENS",
    "DEFAULT_TAGGING_PRECISION",
    "DOCUMENT_SPLITS",
    "EVALUATE",
    "INPUT_FORMATS",
    "MAX_AUTO_TAGGING_PROCESSES",
    "MIN_TOKENS_PER_TAGGING_PROCESS",
    "PRECISION_ENV",
    "PREDICT",
    "TAGGING_PRECISIONS",
    "VISUALIZE",
    "TaggingConfig",
    "tagging_settings",
]

DEFAULT_BATCH_TOKENS: int = TrainConfig().eval_batch_tokens
"""Token budget of a tagging batch when none is given: the declared default of
``[train] eval_batch_tokens``, by which a run evaluates."""

DEFAULT_MAX_DOC_TOKENS = 2000
"""``predict.py --max-doc-tokens`` for a model trained without a limit: the OntoNotes preset's,
longer than any CoNLL-2003 document, so those are tagged whole (see docs/experiments.md,
'Tagging configuration')."""

DOCUMENT_SPLITS = ("file", "paragraphs", "lines")
"""The values of ``predict.py --documents``: what a document of raw text is."""

INPUT_FORMATS = ("auto", "conll", "text", "jsonl", "spacy")
"""The values of ``predict.py --input-format``."""

TAGGING_PRECISIONS = ("auto", "fp32", "bf16")
"""The values of a tagging precision (:mod:`docgraph.runtime.precision`)."""

DEFAULT_TAGGING_PRECISION = "auto"
"""The tagging precision unless told otherwise."""

PRECISION_ENV = "DOCGRAPH_TAGGING_PRECISION"
"""The environment variable that sets the tagging precision."""

MAX_AUTO_TAGGING_PROCESSES = 2
"""Most processes that automatic tagging (``--processes 0``) starts on a CPU."""

MIN_TOKENS_PER_TAGGING_PROCESS = 20_000
"""Automatic tagging shares a GCDoc model's input out over several processes only when each
gets at least this many tokens, the share that repays starting a process (importing torch,
loading the model; ``docs/experiments.md``, "Tagging on both cores")."""

BASELINE_MIN_TOKENS_PER_TAGGING_PROCESS = 160_000
"""The same for a model without graph and cross-sentence module (the BiLSTM-CRF), whose
cheaper tokens need a larger share to repay a process (``docs/experiments.md``, "Tagging on
both cores")."""

#: Mark of a setting that ``evaluate.py`` takes.
EVALUATE = "evaluate"
#: Mark of a setting that ``predict.py`` takes.
PREDICT = "predict"
#: Mark of a setting that ``visualize.py`` takes.
VISUALIZE = "visualize"

_ALL_TOOLS = (EVALUATE, PREDICT, VISUALIZE)
_THRESHOLD = next(setting_of(f) for f in fields(GCDocConfig) if f.name == "threshold")


@dataclass(frozen=True)
class TaggingConfig:
    """How a trained model tags, as the tagging tools' flags set it.

    Attributes:
        device: Where to tag; ``auto`` takes a GPU when there is one.
        threshold: Uncertainty threshold of the graph's pruning for this run, by the rule of
            ``[model] threshold``; ``None`` keeps the model's.
        mc_seed: Seed of the Monte-Carlo dropout masks that prune the document graph.
        lm: The directory a model's language model was moved to (``None``: where it was).
        precision: The arithmetic of tagging (:mod:`docgraph.runtime.precision`; ``None``:
            ``$DOCGRAPH_TAGGING_PRECISION``, else its default).
        processes: Tagging processes on a CPU; ``0`` chooses from the input's size.
        max_doc_tokens: Longest chunk of a document tagged at once; ``None`` takes the
            model's, else :data:`DEFAULT_MAX_DOC_TOKENS`.
        documents: What a document of raw text is (:data:`DOCUMENT_SPLITS`).
        input_format: How an input file is read (:data:`INPUT_FORMATS`).
        tokenized: Raw text is one sentence per line, tokens split on whitespace.
        allow_empty: Inputs without a token are not an error.
        scores: Give every entity its score (:mod:`docgraph.tagging.result`).
        min_score: Keep only the entities scored at least this (implies ``scores``).
    """

    device: str = choice("auto", ("auto", "cpu", "cuda"), flag="--device",
                         help="where to tag (auto: a GPU when there is one)", marks=_ALL_TOOLS)
    threshold: float | None = number(
        None, optional=True, low=_THRESHOLD.rule.low, high=_THRESHOLD.rule.high,
        flag="--threshold", metavar="X", marks=_ALL_TOOLS,
        help="uncertainty threshold to prune the document graph with, instead of the one the "
             "model was trained with (a value above ln(#labels), e.g. 100, prunes nothing)")
    mc_seed: int = integer(
        0, low=0, flag="--mc-seed", metavar="S", marks=_ALL_TOOLS,
        help="tagging seed of the Monte-Carlo dropout masks that prune the document graph "
             "(each document's masks come from it and the document, so its tags do not depend "
             "on the batch or the processes; other seeds show the model's Monte-Carlo noise)")
    lm: str | None = text(
        None, optional=True, flag="--lm", metavar="PATH", marks=_ALL_TOOLS,
        help="for a model trained with --lm whose language model was moved: its new directory "
             "(its files must be the same)")
    precision: str | None = choice(
        None, TAGGING_PRECISIONS, optional=True, flag="--precision", marks=_ALL_TOOLS,
        help="arithmetic of tagging: fp32, bf16 (the matrix products in bfloat16: faster on a "
             "CPU with bf16 instructions; a few tags may change) or auto (bf16 on "
             f"such a CPU, else as trained); default ${PRECISION_ENV}, else "
             f"{DEFAULT_TAGGING_PRECISION}")
    processes: int = integer(
        0, low=0, flag="--processes", metavar="N", marks=(EVALUATE, PREDICT),
        help=f"tagging processes on a CPU, at most one per core (0: one per core, at most "
             f"{MAX_AUTO_TAGGING_PROCESSES}, when each gets at least "
             f"{MIN_TOKENS_PER_TAGGING_PROCESS} tokens, "
             f"{BASELINE_MIN_TOKENS_PER_TAGGING_PROCESS} for a BiLSTM-CRF; 1: one process)")
    max_doc_tokens: int | None = integer(
        None, low=1, optional=True, flag="--max-doc-tokens", metavar="N", marks=(PREDICT,),
        help="tag longer documents in chunks of whole sentences of at most N tokens, as "
             "train.py --max-doc-tokens does (longer sentences in pieces of N tokens); memory "
             "grows with N, not with the input (default: the model's, else "
             f"{DEFAULT_MAX_DOC_TOKENS})")
    documents: str = choice(
        "file", DOCUMENT_SPLITS, flag="--documents", marks=(PREDICT,),
        help="what a document of raw text is: the whole file, each paragraph (blank lines "
             "between them) or each line; CoNLL input keeps its -DOCSTART- documents")
    input_format: str = choice(
        "auto", INPUT_FORMATS, flag="--input-format", marks=(PREDICT,),
        help="auto: a spaCy DocBin for a .spacy file, span JSON lines when the first line is "
             "a JSON object with a \"text\", CoNLL when the file has -DOCSTART- or a tag (O, "
             "B-X, I-X, E-X, S-X) in the last column of nearly every non-blank line, else text")
    tokenized: bool = switch(
        False, switches={"--tokenized": True}, marks=(PREDICT,),
        help="text input is pre-tokenised: one sentence per line, tokens split on whitespace")
    allow_empty: bool = switch(
        False, switches={"--allow-empty": True}, marks=(PREDICT,),
        help="inputs without a token give an empty output and status 0 (else an error, "
             "status 2)")
    scores: bool = switch(
        False, switches={"--scores": True}, marks=(PREDICT, VISUALIZE),
        help="give every entity its probability under the model (JSON lines: a \"score\"; "
             "HTML: colour strength and a tooltip)")
    min_score: float | None = number(
        None, optional=True, low=0.0, high=1.0, flag="--min-score", metavar="P",
        marks=(PREDICT,),
        help="keep only the entities whose score is at least P (implies --scores; their "
             "tokens are O in CoNLL and token output; the HTML page shows every entity)")


def tagging_settings(tool: str) -> list[tuple[str, Setting]]:
    """``(field, setting)`` of every :class:`TaggingConfig` field that ``tool`` (one of
    :data:`EVALUATE`, :data:`PREDICT`, :data:`VISUALIZE`) takes, in declaration order."""
    if tool not in _ALL_TOOLS:
        raise ValueError(f"tool must be one of {', '.join(_ALL_TOOLS)}, got {tool!r}")
    return [(name, setting) for name, setting in settings_of(TaggingConfig)
            if tool in setting.marks]
