"""The parsers of the scripts' commands: ``<name>_parser()`` for ``scripts/<name>.py`` and
``docgraph <name>``.

A command is registered by one line in :data:`docgraph.cli.console.COMMANDS` (its name, the
``main(argv)`` it runs, its help). Its parser is a
:class:`~docgraph.cli.arguments.flags.OneLineParser` (no abbreviation of a flag is taken; an
error is one line), built here or in the command's own module (``cli/serve.py``); its checks run
before torch loads, beside :mod:`~docgraph.cli.arguments.train_checks` and
:mod:`~docgraph.cli.arguments.tagging_checks`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from docgraph.cli.arguments.flags import (
    MODEL_HELP,
    SWITCHES,
    OneLineParser,
    _default_of,
    flag_help,
    flag_metavar,
    non_negative_float,
    non_negative_int,
    positive_int,
    rule_type,
    switch_help,
    value_flags,
)
from docgraph.config.fields import Setting
from docgraph.config.graph import GraphConfig
from docgraph.config.tagging import (
    EVALUATE,
    PREDICT,
    VISUALIZE,
    TaggingConfig,
    tagging_settings,
)
from docgraph.data.registry import (
    DATASETS,
)
from docgraph.tagging.prediction_io import OUTPUT_FORMATS


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """``--dataset`` and ``--data-dir``."""
    parser.add_argument("--dataset", choices=tuple(DATASETS), default=None,
                        help="corpus (default: sample, the bundled corpus)")
    parser.add_argument("--data-dir", default=None,
                        help="corpus directory (default: $DOCGRAPH_DATA_DIR/<dataset>)")


def train_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/train.py``."""
    p = OneLineParser(
        prog="train.py", description="Train GCDoc (or an ablation / the BiLSTM-CRF baseline).")
    add_data_arguments(p)
    p.add_argument("--output-dir", default=None, help="run directory (default: runs/<dataset>)")
    p.add_argument("--config", default=None, help="TOML preset (default: configs/<dataset>.toml)")
    p.add_argument("--seeds", type=int, nargs="+", default=None,
                   help="run once per seed and summarise test F1 as mean ± std")
    p.add_argument("--resume", metavar="DIR", default=None,
                   help="continue the interrupted run in DIR from its last checkpoint")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the run that --output-dir holds (without it, such a run is "
                        "refused)")
    add_progress_arguments(p)
    settings = p.add_argument_group(
        "settings", "each sets one field of the configuration (TOML key in brackets); the "
        "defaults shown are the built-in ones, which a preset may change")
    for flag, value_flag in value_flags().items():
        section, key, setting = value_flag.section, value_flag.key, value_flag.setting
        key_name = f"[{section}] {key}" if section else key
        settings.add_argument(flag, type=setting.parse, default=None, metavar=flag_metavar(setting),
                              help=f"{key_name}: {flag_help(setting, _default_of(section, key))}")
    for flag, values in SWITCHES.items():
        settings.add_argument(flag, action="store_true", help=switch_help(values))
    return p


def evaluate_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/evaluate.py``."""
    p = OneLineParser(
        prog="evaluate.py",
        description="Score a trained model (conlleval P/R/F1 overall and per type).")
    p.add_argument("--model", required=True, help=MODEL_HELP)
    add_data_arguments(p)
    p.add_argument("--split", choices=("dev", "test"), default="test",
                   help="split to score (default: test)")
    p.add_argument("--data", default=None,
                   help="a labelled file to score instead of a dataset split: CoNLL columns, "
                        "span JSON lines (.jsonl) or a spaCy DocBin (.spacy)")
    p.add_argument("--output-dir", default=None,
                   help="where to write <name>_metrics.json and <name>_predictions.conll "
                        "(default: the model directory; for a shipped model, <name>-evaluation)")
    add_tagging_arguments(p, EVALUATE)
    return p


def add_progress_arguments(p: argparse.ArgumentParser) -> None:
    """``--quiet`` and ``--progress-interval`` (:mod:`docgraph.runtime.progress`)."""
    p.add_argument("--quiet", action="store_true",
                   help="no progress and no log lines on the terminal, warnings only")
    p.add_argument("--progress-interval", type=non_negative_float, default=30.0,
                   metavar="SECONDS",
                   help="when stderr is not a terminal (a log file): seconds between two "
                        "progress lines (default: %(default)g; on a terminal progress is a bar)")


def add_setting_flag(p: argparse.ArgumentParser, name: str, setting: Setting, default: Any,
                     required: bool = False, parse: Callable[[str], Any] | None = None) -> None:
    """The flag (or switches) of one declared setting, made from its declaration: its type
    and check (an ``argparse`` error naming the flag; ``parse`` in place of the check, for a
    value checked later), choices, metavar, default and ``--help`` (the default shown unless
    ``None`` or ``required``)."""
    if setting.switches:
        for flag, value in setting.switches.items():
            p.add_argument(flag, dest=name, action="store_const", const=value,
                           default=default, help=setting.help)
        return
    choices = setting.rule.choices or None
    shown = f" (default: {default})" if default is not None and not required else ""
    p.add_argument(setting.flag, dest=name, default=default, choices=choices, required=required,
                   type=parse or rule_type(setting),
                   metavar=None if choices else setting.metavar, help=setting.help + shown)


def add_tagging_flags(p: argparse.ArgumentParser, tool: str) -> None:
    """The flags of :class:`~docgraph.config.tagging.TaggingConfig` that ``tool`` takes
    (:func:`~docgraph.config.tagging.tagging_settings`), each made from its declaration: its
    type and check (an ``argparse`` error naming the flag; ``--threshold`` is checked by
    :func:`check_tagging_arguments`, after the model it overrides), choices, metavar, default
    and ``--help``."""
    defaults = TaggingConfig()
    for name, setting in tagging_settings(tool):
        add_setting_flag(p, name, setting, getattr(defaults, name),
                         parse=setting.parse if name == "threshold" else None)


def add_tagging_arguments(p: argparse.ArgumentParser, tool: str) -> None:
    """What the tagging tools share: the flags of
    :class:`~docgraph.config.tagging.TaggingConfig` that ``tool`` takes and the progress
    flags."""
    add_tagging_flags(p, tool)
    add_progress_arguments(p)


def predict_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/predict.py``."""
    p = OneLineParser(
        prog="predict.py",
        description="Tag documents with a trained model. Inputs are CoNLL column files "
                    "(documents split at -DOCSTART-), span JSON lines (one document per "
                    "line's \"text\"), spaCy DocBin files (.spacy, one document per Doc) or "
                    "plain-text files (one file = one "
                    "document, or see --documents). Output is written as the input is "
                    "tagged, a few thousand tokens at a time.")
    p.add_argument("--model", required=True, help=MODEL_HELP)
    p.add_argument("inputs", nargs="+",
                   help="input files; a folder: its *.txt, *.jsonl and *.spacy files, sorted; "
                        "-: standard input (text, or as --input-format says)")
    formats = list(OUTPUT_FORMATS)
    p.add_argument("--format", choices=formats, default=formats[0],
                   help="output: " + "; ".join(f"{name}: {fmt.help}"
                                               for name, fmt in OUTPUT_FORMATS.items())
                        + f" (default: {formats[0]})")
    p.add_argument("--output", default=None, help="output file (default: stdout)")
    add_tagging_arguments(p, PREDICT)
    return p


def stats_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/stats.py`` (``docgraph stats``)."""
    p = OneLineParser(prog="stats.py",
                      description="Corpus and document-graph statistics, split by "
                                  "split.")
    p.add_argument("--dataset", required=True, choices=tuple(DATASETS), help="corpus")
    p.add_argument("--data-dir", default=None,
                   help="corpus directory (default: $DOCGRAPH_DATA_DIR/<dataset>)")
    p.add_argument("--json", action="store_true", help="print one JSON object by split")
    p.add_argument("--neighbours", type=positive_int, default=GraphConfig().max_neighbours,
                   metavar="P", help="sampled neighbours p per token (default: %(default)s, "
                                     "the [graph] max_neighbours of training)")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="sampling seed (default: %(default)s)")
    return p


def visualize_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/visualize.py`` (``docgraph visualize``)."""
    p = OneLineParser(prog="visualize.py",
                description="Draw the document graph of a trained GCDoc model (uncertainty, "
                            "pruning, relation scores r_ij) or print its noisiest edges.")
    p.add_argument("--model", required=True, help=MODEL_HELP)
    p.add_argument("--dataset", choices=tuple(DATASETS), default=None,
                   help="corpus (default: the model's)")
    p.add_argument("--data-dir", default=None,
                   help="corpus directory (default: the model's, or $DOCGRAPH_DATA_DIR/<dataset>)")
    p.add_argument("--split", choices=("train", "dev", "test"), default="dev",
                   help="split of the corpus (default: dev)")
    p.add_argument("--data", default=None, metavar="FILE",
                   help="a labelled file to show instead of a dataset split (CoNLL columns, "
                        ".jsonl spans or a .spacy DocBin)")
    p.add_argument("--doc", type=int, default=None,
                   help="index of the document (chunk) in the split; --out needs it")
    p.add_argument("--word", default=None,
                   help="draw only the tokens of this word (case-insensitive) and their edges")
    p.add_argument("--max-words", type=int, default=6, metavar="K",
                   help="without --word, draw only K repeated words when the document has "
                        "more: entities and predicted mentions, the most inconsistently tagged "
                        "first (default: %(default)s; 0 draws every word)")
    p.add_argument("--layout", choices=("sentence", "word"), default="sentence",
                   help="nodes by sentence and position, or one column per word "
                        "(default: sentence)")
    p.add_argument("--out", default=None,
                   help="figure of document --doc N to write (.png or .svg)")
    p.add_argument("--html", default=None, metavar="FILE",
                   help="write an interactive page of the split's documents (or of --doc N): "
                        "predicted entities, errors, and each token's repeats with their edge "
                        "weights and pruning; opens from disk, no network")
    p.add_argument("--noisy", type=int, default=None, metavar="K",
                   help="print the K noisiest edges (of --doc, else of the whole split)")
    add_tagging_flags(p, VISUALIZE)
    return p



__all__ = ["add_data_arguments", "add_progress_arguments", "add_setting_flag",
           "add_tagging_arguments", "add_tagging_flags", "evaluate_parser", "predict_parser",
           "stats_parser", "train_parser", "visualize_parser"]
