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


def _commands() -> ModuleType:
    """:mod:`docgraph.cli.commands`, imported only once the arguments passed (it loads torch and
    PyG): the one import inside a function here, and why it is there."""
    from docgraph.cli import commands

    return commands


def train_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/train.py``: every argument is checked before torch is imported
    (:func:`check_arguments`), then :func:`docgraph.cli.commands.train` runs."""
    args = train_parser().parse_args(argv)
    try:
        check_arguments(args)
    except ValueError as err:  # ConfigError, UsageError, unreadable TOML
        fail(str(err))
    return _commands().train(args)


def evaluate_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/evaluate.py`` (:func:`docgraph.cli.commands.evaluate`); its paths
    are checked before torch is imported (:func:`check_tagging_arguments`)."""
    args = evaluate_parser().parse_args(argv)
    _check(check_tagging_arguments, args)
    return _commands().evaluate(args)


def predict_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/predict.py`` (:func:`docgraph.cli.commands.predict`); its paths
    are checked before torch is imported (:func:`check_tagging_arguments`)."""
    args = predict_parser().parse_args(argv)
    _check(check_tagging_arguments, args)
    return _commands().predict(args)


def visualize_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/visualize.py`` (:func:`docgraph.cli.commands.visualize`); what
    it is asked to do, its paths and ``--threshold`` are checked before torch is imported
    (:func:`check_visualize_arguments`)."""
    args = visualize_parser().parse_args(argv)
    _check(check_visualize_arguments, args)
    return _commands().visualize(args)


def stats_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/stats.py`` (:func:`docgraph.cli.commands.stats`)."""
    args = stats_parser().parse_args(argv)
    _check(check_stats_arguments, args)
    return _commands().stats(args)


def _check(check: Callable[[argparse.Namespace], None], args: argparse.Namespace) -> None:
    """Run ``check(args)``; a bad argument ends the script with its one-line error."""
    try:
        check(args)
    except ValueError as err:  # ConfigError, UsageError
        fail(str(err))
