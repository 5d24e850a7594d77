"""How a trained model tags: the settings of the tagging tools and their defaults (torch-free).

Each flag of ``evaluate.py``, ``predict.py`` and ``visualize.py`` that says how to tag is a field
of :class:`TaggingConfig`, declared once like the training settings
(:mod:`docgraph.config.fields`); the marks :data:`EVALUATE`, :data:`PREDICT` and
:data:`VISUALIZE` say which tools take it. The parsers, their ``--help`` and the checks of the
values are generated from these declarations (:func:`docgraph.cli.arguments.add_tagging_flags`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

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
    "DEFAULT_SPEED",
    "DEFAULT_TAGGING_PRECISION",
    "DOCUMENT_SPLITS",
    "EVALUATE",
    "FAITHFUL",
    "FAST",
    "INPUT_FORMATS",
    "LABEL_CONSISTENCY",
    "MAX_AUTO_TAGGING_PROCESSES",
    "MIN_TOKENS_PER_TAGGING_PROCESS",
    "PRECISION_ENV",
    "PREDICT",
    "SPEEDS",
    "TAGGING_PRECISIONS",
    "VISUALIZE",
    "Approximation",
    "LabelConsistency",
    "ModelSpeeds",
    "TaggingConfig",
    "approximation_of",
    "consistency_switch",
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



@dataclass(frozen=True)
class Approximation:
    """What a model computes differently from its trained computation when it tags: each
    field selects an approximate computation inside the same modules, with the same weights
    (``None`` / ``False``: as trained). Only what the model has is changed: the Monte-Carlo
    settings reach a model that prunes its document graph, the window encoding one with the
    cross-sentence module.

    Attributes:
        mc_dropout: What the Monte-Carlo passes re-sample (``[model] mc_dropout``): ``"output"``
            runs the uncertainty tagger's Bi-LSTM once.
        window_encoding: How the cross-sentence windows are encoded
            (``[model] window_encoding``): ``"per_sentence"`` reads each sentence once.
        mc_samples: Monte-Carlo passes :math:`T` (``[model] num_samples``).
        int8: The LSTM and linear layers in int8 (dynamic quantisation; CPU only).
    """

    mc_dropout: str | None = None
    window_encoding: str | None = None
    mc_samples: int | None = None
    int8: bool = False

    @property
    def faithful(self) -> bool:
        """Whether nothing is approximated."""
        return self == FAITHFUL

    def describe(self) -> str:
        """The changed settings, ``"faithful"`` when none."""
        parts = [f"mc_dropout={self.mc_dropout}" if self.mc_dropout else "",
                 f"window_encoding={self.window_encoding}" if self.window_encoding else "",
                 f"mc_samples={self.mc_samples}" if self.mc_samples else "",
                 "int8" if self.int8 else ""]
        return ", ".join(p for p in parts if p) or "faithful"


FAITHFUL = Approximation()
"""The trained computation (the paper's, for a model trained with the defaults)."""

FAST = Approximation(window_encoding="per_sentence", mc_samples=1)
"""The fast mode of a model whose directory declares none of its own
(:mod:`docgraph.persistence.speeds`): the cross-sentence windows read one sentence at a time
and one Monte-Carlo pass; its F1 cost per row of the out-of-domain benchmark is on each shipped
model's card (``docs/experiments.md``, "Fast tagging")."""

@dataclass(frozen=True)
class LabelConsistency:
    """The thresholds of label consistency in decoding
    (:func:`~docgraph.tagging.consistency.consistent_tagging`): one type for each name of what
    the model tags at once, the name's untagged repeats tagged.

    Attributes:
        min_votes: The summed entity score a name needs before its untagged repeats are tagged.
        relabel_below: A mention of another type than its name's keeps its type when scored
            at least this.
    """

    min_votes: float = 0.5
    relabel_below: float = 0.7


LABEL_CONSISTENCY = LabelConsistency()
"""The thresholds of ``--consistency``, chosen on CoNLL-2003 dev (cased, lowercased, invented
names; ``docs/experiments.md``, "Names never seen")."""


def consistency_switch(marks: tuple[str, ...] = ()) -> Any:
    """The field of a door's label consistency in decoding: ``--consistency`` on,
    ``--no-consistency`` off, ``None`` (neither) the model's own default
    (``[model] label_consistency``)."""
    return switch(None, optional=True, marks=marks,
                  switches={"--consistency": True, "--no-consistency": False},
                  help="label consistency in decoding: each name of a document gets one type "
                       "(its mentions' scores vote) and its untagged repeats are tagged "
                       "(--no-consistency: each sentence decoded alone; default: the model's)")


SPEEDS: dict[str, Approximation] = {"faithful": FAITHFUL, "fast": FAST}
"""The values of ``--speed`` and what each computes (``"fast"``: unless the model directory
declares its own, :class:`ModelSpeeds`)."""

DEFAULT_SPEED = "faithful"
"""The speed a model tags at unless told otherwise or its directory declares another."""


@dataclass(frozen=True)
class ModelSpeeds:
    """What a model directory declares about its speeds (``speed.json``:
    :mod:`docgraph.persistence.speeds`): its fast mode, chosen by its measured F1 cost, and
    the speed it tags at unless told otherwise.

    Attributes:
        fast: What ``--speed fast`` computes for the model.
        default: The name of the speed (:data:`SPEEDS`) it tags at unless told otherwise.
    """

    fast: Approximation = FAST
    default: str = DEFAULT_SPEED

    def __post_init__(self) -> None:
        if self.default not in SPEEDS:
            raise ValueError(f"default must be one of {', '.join(SPEEDS)}, got "
                             f"{self.default!r}")

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
_MODEL_SETTINGS = {f.name: setting_of(f) for f in fields(GCDocConfig)}
_THRESHOLD = _MODEL_SETTINGS["threshold"]


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
        speed: A named :class:`Approximation` (:data:`SPEEDS`; ``None``: :data:`DEFAULT_SPEED`).
        mc_dropout: Overrides :attr:`Approximation.mc_dropout` of ``speed``.
        window_encoding: Overrides :attr:`Approximation.window_encoding` of ``speed``.
        mc_samples: Overrides :attr:`Approximation.mc_samples` of ``speed``.
        int8: ``"on"`` / ``"off"``: overrides :attr:`Approximation.int8` of ``speed``.
        consistency: Label consistency in decoding (:data:`LABEL_CONSISTENCY`).
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
    speed: str | None = choice(
        None, tuple(SPEEDS), optional=True, flag="--speed", marks=_ALL_TOOLS,
        help="faithful: the trained computation; fast: the model's approximations of it for "
             "speed (unless its directory declares others, the cross-sentence windows per "
             "sentence and one Monte-Carlo pass; docs/models.md gives each model's and its F1 "
             f"cost); default: the model's ({DEFAULT_SPEED} unless its directory declares "
             f"fast; evaluate.py: faithful)")
    mc_dropout: str | None = choice(
        None, _MODEL_SETTINGS["mc_dropout"].rule.choices, optional=True, flag="--mc-dropout",
        marks=_ALL_TOOLS,
        help="approximation: what the Monte-Carlo passes re-sample (output: the uncertainty "
             "Bi-LSTM runs once); default: as --speed says")
    window_encoding: str | None = choice(
        None, _MODEL_SETTINGS["window_encoding"].rule.choices, optional=True,
        flag="--window-encoding", marks=_ALL_TOOLS,
        help="approximation: how the cross-sentence windows are encoded (per_sentence: each "
             "sentence read once); default: as --speed says")
    mc_samples: int | None = integer(
        None, low=1, optional=True, flag="--mc-samples", metavar="T", marks=_ALL_TOOLS,
        help="approximation: Monte-Carlo passes T of the graph's pruning (the model's: 8); "
             "default: as --speed says")
    int8: bool | None = choice(
        None, ("on", "off"), optional=True, flag="--int8", marks=_ALL_TOOLS,
        help="approximation: the LSTM and linear layers in int8 (CPU only); default: as "
             "--speed says")
    consistency: bool | None = consistency_switch(marks=_ALL_TOOLS)
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


    def approximation(self) -> Approximation:
        """What this run computes: :attr:`speed`'s approximation with the single settings
        given over it."""
        return approximation_of(self.speed, mc_dropout=self.mc_dropout,
                                window_encoding=self.window_encoding,
                                mc_samples=self.mc_samples,
                                int8=None if self.int8 is None else self.int8 == "on")


def approximation_of(speed: str | Approximation | None = None, *, mc_dropout: str | None = None,
                     window_encoding: str | None = None, mc_samples: int | None = None,
                     int8: bool | None = None, device: str = "cpu",
                     model: ModelSpeeds = ModelSpeeds()) -> Approximation:
    """The :class:`Approximation` of ``speed`` (a name of :data:`SPEEDS`, an approximation,
    or ``None`` for the ``model``'s default speed) with the given settings replacing its own;
    ``"fast"`` is the ``model``'s fast mode
    (:func:`~docgraph.persistence.speeds.model_speeds`). On a ``device`` other than the CPU a
    named speed leaves int8 out (it runs on the CPU only); ``int8=True`` given there stays,
    for the model's loading to refuse.

    Raises:
        ValueError: ``speed`` is not a name of :data:`SPEEDS`, or a setting is out of range.
    """
    if speed is None:
        speed = model.default
    if isinstance(speed, str):
        if speed not in SPEEDS:
            raise ValueError(f"speed must be one of {', '.join(SPEEDS)}, got {speed!r}")
        speed = model.fast if speed == "fast" else SPEEDS[speed]
        if device != "cpu" and speed.int8:
            speed = replace(speed, int8=False)
    changes: dict[str, object] = {}
    for name, value in (("mc_dropout", mc_dropout), ("window_encoding", window_encoding)):
        if value is not None:
            if value not in _MODEL_SETTINGS[name].rule.choices:
                raise ValueError(f"{name} must be one of "
                                 f"{', '.join(_MODEL_SETTINGS[name].rule.choices)}, got {value!r}")
            changes[name] = value
    if mc_samples is not None:
        if isinstance(mc_samples, bool) or not isinstance(mc_samples, int) or mc_samples < 1:
            raise ValueError(f"mc_samples must be an integer >= 1, got {mc_samples!r}")
        changes["mc_samples"] = mc_samples
    if int8 is not None:
        changes["int8"] = bool(int8)
    return replace(speed, **changes) if changes else speed


def tagging_settings(tool: str) -> list[tuple[str, Setting]]:
    """``(field, setting)`` of every :class:`TaggingConfig` field that ``tool`` (one of
    :data:`EVALUATE`, :data:`PREDICT`, :data:`VISUALIZE`) takes, in declaration order."""
    if tool not in _ALL_TOOLS:
        raise ValueError(f"tool must be one of {', '.join(_ALL_TOOLS)}, got {tool!r}")
    return [(name, setting) for name, setting in settings_of(TaggingConfig)
            if tool in setting.marks]
