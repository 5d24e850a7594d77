"""The flags of the scripts, made from the configuration's declarations: value flags and
switches of ``train.py`` (:data:`VALUE_FLAGS`, :data:`SWITCHES`), their ``--help``, the value
types of ``argparse`` and the one-line errors (:func:`fail`, :class:`OneLineParser`)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields, replace
from typing import Any, NoReturn

from docgraph.config.experiment import (
    SECTIONS,
    ExperimentConfig,
    section_settings,
)
from docgraph.config.fields import Setting
from docgraph.persistence.shipped import shipped_models

#: Switches of ``train.py`` that set several fields at once (the others are declared with
#: their field, :func:`docgraph.config.fields.switch`).
COMBINED_SWITCHES: dict[str, dict[str, dict[str, Any]]] = {
    "--current-sentence-only": {"model": {"use_previous": False, "use_next": False}},
    "--baseline": {"model": {"cross_sentence": False, "graph": False}},
    "--fast": {"model": {"window_encoding": "per_sentence", "mc_dropout": "output"}},
}


@dataclass(frozen=True)
class ValueFlag:
    """A value flag of ``train.py``: the field it sets and that field's declaration."""

    section: str
    key: str
    setting: Setting

    @property
    def dest(self) -> str:
        """The ``argparse`` attribute of the flag."""
        return flag_dest(self.setting.flag or "")


#: ``--model`` of the tagging tools.
MODEL_HELP = ("model directory written by train.py, or the name of a shipped model "
              f"({', '.join(shipped_models()) or 'none installed'})")


def flag_dest(flag: str) -> str:
    """``"--lm-context"`` -> ``"lm_context"``."""
    return flag.lstrip("-").replace("-", "_")


def value_flags() -> dict[str, ValueFlag]:
    """Every value flag declared by a configuration field: flag -> :class:`ValueFlag`."""
    return {setting.flag: ValueFlag(section, key, setting)
            for section in ("", *SECTIONS)
            for key, setting in section_settings(section).items() if setting.flag}


def switches() -> dict[str, dict[str, dict[str, Any]]]:
    """Every switch of ``train.py``: flag -> the values it sets, nested like a preset."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for section in ("", *SECTIONS):
        for key, setting in section_settings(section).items():
            for flag, value in setting.switches.items():
                found[flag] = {section: {key: value}}
    return {**found, **COMBINED_SWITCHES}


#: The value flags of ``train.py``: flag -> (config section, ``""`` for the top level, key,
#: type, help); generated from the fields' declarations.
VALUE_FLAGS: dict[str, tuple[str, str, Callable[[str], Any], str]] = {
    flag: (f.section, f.key, f.setting.parse, f.setting.help) for flag, f in value_flags().items()}


#: The switches of ``train.py``: flag -> the configuration values it sets.
SWITCHES: dict[str, dict[str, dict[str, Any]]] = switches()


def flag_help(setting: Setting, default: Any) -> str:
    """``--help`` of a flag: what it does, what it accepts and its built-in default."""
    parts = [] if setting.rule.kind is str and not setting.rule.choices else [
        setting.rule.describe()]
    if default is not None:
        parts.append(f"default {_toml(default)}")
    return f"{setting.help} ({'; '.join(parts)})" if parts else setting.help


def flag_metavar(setting: Setting) -> str:
    """How ``--help`` names a flag's value: the declared metavar, the choices, ``N`` or ``X``."""
    if setting.metavar:
        return setting.metavar
    if setting.rule.choices:
        return "{" + ",".join(setting.rule.choices) + "}"
    return {int: "N", float: "X"}.get(setting.rule.kind, "TEXT")


def switch_help(values: dict[str, dict[str, Any]]) -> str:
    """``--help`` of a switch: the field's help when it sets one (said as turned off for a
    switch that sets it false), and what it sets."""
    settings = [(section, key, value) for section, kv in values.items()
                for key, value in kv.items()]
    where = ", ".join(f"{f'[{s}] ' if s else ''}{k} = {_toml(v)}" for s, k, v in settings)
    if len(settings) == 1:
        section, key, value = settings[0]
        help_text = section_settings(section)[key].help
        if value is False:  # the field's help says what True does
            return f"turns off: {help_text} (sets {where})"
        return f"{help_text} (sets {where})"
    return f"sets {where}"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) else str(value)


def _default_of(section: str, key: str) -> Any:
    cls = {"": ExperimentConfig, **SECTIONS}[section]
    found = next(f for f in fields(cls) if f.name == key)
    return found.default if found.default is not MISSING else None


def fail(message: str) -> NoReturn:
    """Print one line to stderr and exit with status 2 (no traceback)."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def setup_logging(quiet: bool = False) -> None:
    """Log ``docgraph`` messages to stderr, one line each."""
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO,
                        format="%(message)s", stream=sys.stderr)


def is_tty() -> bool:
    """Whether stderr is an interactive terminal (progress bars only then)."""
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


def _int_at_least(value: str, low: int, expected: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = low - 1
    if number < low:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value!r}")
    return number


def non_negative_int(value: str) -> int:
    """An ``argparse`` type: an integer of at least 0."""
    return _int_at_least(value, 0, "an integer >= 0")


def non_negative_float(value: str) -> float:
    """An ``argparse`` type: a finite number of at least 0."""
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0 <= number < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value!r}")
    return number


def rule_type(setting: Setting) -> Callable[[str], Any]:
    """An ``argparse`` type that reads a flag's text as ``setting`` declares it and checks it
    by the setting's rule (``expected an integer >= 0, got '-1'``)."""
    expected = replace(setting.rule, optional=False).describe()

    def read(value: str) -> Any:
        try:
            parsed = setting.parse(value)
        except ValueError:
            parsed = None
        if parsed is None or not setting.rule.accepts(parsed):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value!r}")
        return parsed

    return read


def positive_int(value: str) -> int:
    """An ``argparse`` type: an integer of at least 1."""
    return _int_at_least(value, 1, "a positive integer")


class OneLineParser(argparse.ArgumentParser):
    """A parser whose errors are one ``error: ...`` line on stderr (exit status 2) and that takes
    no abbreviation of a flag (``--epoch`` is not ``--epochs``: a later flag could change what
    an abbreviation means); the parser of every command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print ``error: message`` and exit with status 2."""
        fail(message)


__all__ = ["COMBINED_SWITCHES", "MODEL_HELP", "SWITCHES", "VALUE_FLAGS", "OneLineParser",
           "ValueFlag", "fail", "flag_dest", "flag_help", "flag_metavar", "is_tty",
           "non_negative_float", "non_negative_int", "positive_int", "rule_type", "setup_logging",
           "switch_help", "switches", "value_flags"]
