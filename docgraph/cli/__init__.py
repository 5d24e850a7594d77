"""The scripts' entry points: parse and check the arguments, then run the command.

``scripts/train.py``, ``evaluate.py``, ``predict.py``, ``visualize.py`` and ``stats.py`` (and
``docgraph <command>``, :mod:`docgraph.cli.console`) call :func:`train_main`,
:func:`evaluate_main`, :func:`predict_main`, :func:`visualize_main` and :func:`stats_main`. The
arguments are parsed and checked by :mod:`docgraph.cli.arguments`, which does not import torch;
:mod:`docgraph.cli.commands`, which does, is imported only then, so a bad flag is answered in a
fraction of a second.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TypeVar

from docgraph.cli.arguments import (
    check_arguments,
    check_stats_arguments,
    check_tagging_arguments,
    check_visualize_arguments,
    evaluate_parser,
    fail,
    predict_parser,
    stats_parser,
    train_parser,
    visualize_parser,
)
from docgraph.config.errors import DocgraphError

T = TypeVar("T")


def _commands() -> ModuleType:
    """:mod:`docgraph.cli.commands`, imported only once the arguments passed (it loads torch and
    PyG): the one import inside a function here, and why it is there."""
    from docgraph.cli import commands

    return commands


def train_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/train.py``: every argument is checked before torch is imported
    (:func:`check_arguments`), then :func:`docgraph.cli.commands.train` runs with the
    configuration the check built."""
    args = train_parser().parse_args(argv)
    config = _check(check_arguments, args)
    return _commands().train(args, config)


def evaluate_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/evaluate.py`` (:func:`docgraph.cli.commands.evaluate`); its paths
    are checked before torch is imported (:func:`check_tagging_arguments`)."""
    args = evaluate_parser().parse_args(argv)
    checked = _check(check_tagging_arguments, args)  # before torch is imported
    return _commands().evaluate(args, checked)


def predict_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/predict.py`` (:func:`docgraph.cli.commands.predict`); its paths
    are checked before torch is imported (:func:`check_tagging_arguments`)."""
    args = predict_parser().parse_args(argv)
    checked = _check(check_tagging_arguments, args)  # before torch is imported
    return _commands().predict(args, checked)


def visualize_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/visualize.py`` (:func:`docgraph.cli.commands.visualize`); what
    it is asked to do, its paths and ``--threshold`` are checked before torch is imported
    (:func:`check_visualize_arguments`)."""
    args = visualize_parser().parse_args(argv)
    checked = _check(check_visualize_arguments, args)  # before torch is imported
    return _commands().visualize(args, checked)


def stats_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/stats.py`` (:func:`docgraph.cli.commands.stats`)."""
    args = stats_parser().parse_args(argv)
    _check(check_stats_arguments, args)
    return _commands().stats(args)


def _check(check: Callable[[argparse.Namespace], T], args: argparse.Namespace) -> T:
    """``check(args)``; a bad argument ends the script with its one-line error."""
    try:
        return check(args)
    except (DocgraphError, ValueError) as err:  # ValueError: of the libraries underneath
        fail(str(err))


__all__ = ["evaluate_main", "predict_main", "stats_main", "train_main", "visualize_main"]
