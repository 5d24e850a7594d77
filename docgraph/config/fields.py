"""Configuration fields that carry their own rule: type, range or choices, help and flag.

A setting is declared once, as a dataclass field made by one of :func:`integer`,
:func:`number`, :func:`choice`, :func:`switch`, :func:`text` or :func:`strings`::

    window: int = integer(2, low=0, flag="--window", help="cross-sentence window k")

A field may carry marks (``marks=(SIZE,)``) naming a role it plays elsewhere; the lists of the
fields in a role are read from the marks (:func:`fields_marked`), never kept by hand.

Everything else is generated from that declaration: the check of every value
(:func:`check_config`, :func:`check_field`), the TOML keys (the field names), the command-line
flags and their ``--help`` (:mod:`docgraph.cli.arguments`), and the names by which an error
message points at a value (the flag, or ``file.toml [section] key``). Nothing here imports torch,
so a command line is checked in a fraction of a second.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

from docgraph.config.errors import DocgraphError

__all__ = ["CAP", "MACHINE", "PLAN", "SHARDING", "SIZE", "VARIANT", "ConfigError", "Rule",
           "Setting",
           "UsageError", "available_cores", "check_config", "check_field", "check_processes",
           "choice", "fields_marked", "integer", "number", "setting_of", "settings_of",
           "strings", "switch", "text"]

#: Mark of a dimension of the model: together they decide its size in memory.
SIZE = "size"
#: Mark of a model setting that decides a batch's host-side plan (:mod:`docgraph.batching.plan`).
PLAN = "plan"
#: Mark of a model switch that makes a variant of the paper's ablations (a row of a table).
VARIANT = "variant"
#: Mark of a setting that says where and how fast a run goes, not what it trains.
MACHINE = "machine"
#: Mark of a cap on how long a training run may go.
CAP = "cap"
#: Mark of a setting that shares a run's work out differently: the model differs only in its
#: random draws and the make-up of the batches, not in what is trained.
SHARDING = "sharding"


class ConfigError(DocgraphError, ValueError):
    """A configuration value that its field does not accept."""


class UsageError(DocgraphError, ValueError):
    """A command-line argument or a path that cannot work, as data: which argument (``flag``,
    ``None`` for a positional input or a combination of flags), its ``value`` (``None`` when
    there is none to show) and what is wrong (``reason``); ``str()`` is the one-line message
    ``"FLAG VALUE: REASON"`` (``"FLAG REASON"`` without a value).

    Args:
        reason: What is wrong, and what was expected.
        flag: The flag, e.g. ``"--output"``.
        value: The value given, e.g. a path.
    """

    def __init__(self, reason: str, flag: str | None = None, value: object = None) -> None:
        self.reason, self.flag, self.value = reason, flag, value
        if value is not None:
            message = f"{flag} {value}: {reason}" if flag else f"{value}: {reason}"
        else:
            message = f"{flag} {reason}" if flag else reason
        super().__init__(message)

    def __reduce__(self) -> tuple:
        return type(self), (self.reason, self.flag, self.value)


@dataclass(frozen=True)
class Rule:
    """What one field accepts.

    Attributes:
        kind: ``int``, ``float``, ``bool``, ``str`` or ``"strings"`` (a list of strings).
        low: Smallest allowed value (numbers).
        high: Largest allowed value (numbers).
        low_open: Whether ``low`` itself is excluded.
        high_open: Whether ``high`` itself is excluded.
        choices: Allowed values (strings).
        optional: Whether ``None`` is allowed.
        even: Whether an integer must be even.
    """

    kind: Any
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    optional: bool = False
    even: bool = False

    def describe(self) -> str:
        """``"an integer >= 1"``, ``"one of 'sgd', 'adam'"``, ..."""
        if self.choices:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind == "strings":
            text = "a list of strings"
        else:
            text = {int: "an integer", float: "a number", bool: "true or false",
                    str: "a string"}[self.kind]
            if self.even:
                text = "an even integer"
            bounds = []
            if self.low is not None:
                bounds.append(f"{'>' if self.low_open else '>='} {_number(self.low)}")
            if self.high is not None:
                bounds.append(f"{'<' if self.high_open else '<='} {_number(self.high)}")
            if bounds:
                text += " " + " and ".join(bounds)
        return text + (" (or none)" if self.optional else "")

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` is allowed."""
        if value is None:
            return self.optional
        if self.kind == "strings":
            return (isinstance(value, (list, tuple, set, frozenset))
                    and all(isinstance(v, str) for v in value))
        if self.kind is bool:
            return isinstance(value, bool)
        if isinstance(value, bool):
            return False
        if self.kind is int and not isinstance(value, int):
            return False
        if self.kind is float and not isinstance(value, (int, float)):
            return False
        if self.kind is str:
            return isinstance(value, str) and (not self.choices or value in self.choices)
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        if self.high is not None and (value > self.high
                                      or (self.high_open and value == self.high)):
            return False
        return not (self.even and value % 2)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclass(frozen=True)
class Setting:
    """A field's declaration: its rule, what it means, and how a command line sets it.

    Attributes:
        rule: What the field accepts.
        help: One line on what it does (the flag's ``--help``).
        flag: The value flag of ``train.py`` that sets it (``None``: TOML and Python only).
        switches: Switches of ``train.py`` that set it to a fixed value: flag -> value.
        metavar: How ``--help`` names the flag's value.
        marks: The roles the field plays elsewhere (:data:`SIZE`, :data:`PLAN`, ...).
    """

    rule: Rule
    help: str
    flag: str | None = None
    switches: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    metavar: str | None = None
    marks: frozenset[str] = frozenset()

    @property
    def parse(self) -> Any:
        """The function that turns a flag's text into a value of the field (``int``, ``float``
        or ``str``); the value is then checked against :attr:`rule`."""
        return self.rule.kind if self.rule.kind in (int, float) else str


def _declare(default: Any, rule: Rule, help: str, flag: str | None,
             switches: Mapping[str, Any] | None, metavar: str | None,
             factory: Any = None, marks: Iterable[str] = ()) -> Any:
    metadata = {"setting": Setting(rule, help, flag, dict(switches or {}), metavar,
                                   frozenset(marks))}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def integer(default: int | None, *, help: str, low: int | None = None,
            high: int | None = None, optional: bool = False, even: bool = False,
            flag: str | None = None, metavar: str | None = None,
            marks: Iterable[str] = ()) -> Any:
    """A field holding an integer in ``[low, high]`` (``None`` too when ``optional``)."""
    return _declare(default, Rule(int, low=low, high=high, optional=optional, even=even),
                    help, flag, None, metavar, marks=marks)


def number(default: float | None, *, help: str, low: float | None = None,
           high: float | None = None, low_open: bool = False, high_open: bool = False,
           optional: bool = False, flag: str | None = None, metavar: str | None = None,
           marks: Iterable[str] = ()) -> Any:
    """A field holding a finite number in the given range (an open end excludes itself;
    ``None`` too when ``optional``)."""
    return _declare(default, Rule(float, low=low, high=high, low_open=low_open,
                                  high_open=high_open, optional=optional), help, flag, None,
                    metavar, marks=marks)


def choice(default: str | None, choices: tuple[str, ...], *, help: str,
           flag: str | None = None, switches: Mapping[str, str] | None = None,
           marks: Iterable[str] = (), optional: bool = False) -> Any:
    """A field holding one of ``choices`` (or ``None`` when ``optional``)."""
    return _declare(default, Rule(str, choices=tuple(choices), optional=optional), help, flag,
                    switches, None, marks=marks)


def switch(default: bool | None, *, help: str, switches: Mapping[str, bool] | None = None,
           marks: Iterable[str] = (), optional: bool = False) -> Any:
    """A field holding ``True`` or ``False`` (or ``None`` when ``optional``); ``switches`` are
    the flags that set it."""
    return _declare(default, Rule(bool, optional=optional), help, None, switches, None,
                    marks=marks)


def text(default: str | None, *, help: str, optional: bool = False, flag: str | None = None,
         metavar: str | None = None, marks: Iterable[str] = ()) -> Any:
    """A field holding a string (a path, a name), or ``None`` when ``optional``."""
    return _declare(default, Rule(str, optional=optional), help, flag, None, metavar,
                    marks=marks)


def strings(*, help: str) -> Any:
    """A field holding a set of strings (empty by default; TOML: a list)."""
    return _declare(None, Rule("strings"), help, None, None, None, factory=frozenset)


def setting_of(field: dataclasses.Field) -> Setting | None:
    """The :class:`Setting` a field was declared with (``None`` for a nested section)."""
    return field.metadata.get("setting")


def fields_marked(cls: type, mark: str) -> tuple[str, ...]:
    """The names of the fields of a configuration dataclass that carry ``mark``, in order."""
    return tuple(name for name, setting in settings_of(cls) if mark in setting.marks)


def settings_of(cls: type) -> Iterator[tuple[str, Setting]]:
    """``(name, setting)`` of every declared field of a configuration dataclass, in order."""
    for f in fields(cls):
        setting = setting_of(f)
        if setting is not None:
            yield f.name, setting


def check_field(setting: Setting, value: Any, name: str) -> None:
    """Raise :class:`ConfigError` unless ``setting`` accepts ``value``.

    Args:
        setting: The field's declaration.
        value: Its value.
        name: How to name the field in the message: a flag such as ``--window``, or
            ``file.toml [train] epochs``.
    """
    if not setting.rule.accepts(value):
        raise ConfigError(f"{name} = {value!r}: expected {setting.rule.describe()}")


def check_config(config: Any, section: str) -> None:
    """Check every declared field of a configuration dataclass instance (its
    ``__post_init__``), naming a bad one ``[section] field`` (``field`` at the top level)."""
    for name, setting in settings_of(type(config)):
        check_field(setting, getattr(config, name), f"[{section}] {name}" if section else name)


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask, else ``os.cpu_count()``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def check_processes(value: int, name: str = "--processes", cores: int | None = None) -> None:
    """Raise :class:`ConfigError` when ``value`` CPU processes are more than the cores.

    Each process of a CPU run is single-threaded and meant to have a core of its own; more
    processes than cores only compete for them (and each holds a whole copy of the model). The
    count is not lowered silently: in training it is part of the experiment (each process
    takes its share of every batch and draws its own random numbers).

    Args:
        value: The requested number of processes (0: automatic, always accepted).
        name: How to name it in the message (a flag, or a key of a file).
        cores: Cores available (default: :func:`available_cores`).
    """
    cores = available_cores() if cores is None else cores
    if value > cores:
        raise ConfigError(f"{name} {value}: this machine has {cores} CPU core"
                          f"{'s' if cores != 1 else ''} available; expected at most {cores} "
                          "(one single-threaded process per core; 0 chooses automatically)")
