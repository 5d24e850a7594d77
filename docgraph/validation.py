"""What every configuration field accepts, checked before any work (no torch import here).

One table, :data:`RULES`, says for each field of the configuration (top level of
:class:`~docgraph.config.ExperimentConfig`, and its ``[model]``, ``[graph]`` and ``[train]``
tables) its type and its allowed range or values. It is applied

* by the command-line tools right after parsing, before torch and PyG are imported, so a
  bad flag or TOML value fails in a fraction of a second (naming the flag or the key);
* by :func:`~docgraph.config.apply_overrides` (TOML presets, ``config.json`` of saved runs,
  the Python API) and by the configuration dataclasses themselves.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RULES", "ConfigError", "Rule", "available_cores", "check_field", "check_processes",
           "check_values"]


class ConfigError(ValueError):
    """A configuration value that its field does not accept."""


@dataclass(frozen=True)
class Rule:
    """What one field accepts.

    Attributes:
        kind: ``int``, ``float``, ``bool``, ``str`` or ``"strings"`` (a list of strings).
        low: Smallest allowed value (numbers).
        high: Largest allowed value (numbers).
        high_open: Whether ``high`` itself is excluded.
        low_open: Whether ``low`` itself is excluded.
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


def _int(low: int | None = None, **kw: Any) -> Rule:
    return Rule(int, low=low, **kw)


def _float(low: float | None = None, **kw: Any) -> Rule:
    return Rule(float, low=low, **kw)


def _choice(*choices: str) -> Rule:
    return Rule(str, choices=choices)


FLAG = Rule(bool)
TEXT = Rule(str)

#: section ("" = top level) -> field -> rule
RULES: dict[str, dict[str, Rule]] = {
    "": {
        "dataset": _choice("sample", "conll03", "ontonotes", "column"),
        "data_dir": Rule(str, optional=True), "embeddings": TEXT, "output_dir": TEXT,
        "seed": _int(0), "device": _choice("auto", "cpu", "cuda"),
        "lm": Rule(str, optional=True), "lm_context": _int(0),
        "lm_pooling": _choice("mean", "first"), "lm_layers": _int(1), "lm_pack": FLAG,
        "lm_cache_dir": Rule(str, optional=True),
    },
    "model": {
        "word_dim": _int(1), "freeze_embeddings": FLAG, "char_dim": _int(1),
        "precision": _choice("fp32", "bf16"),
        "char_hidden": _int(1), "hidden": _int(1), "sent_dim": _int(2, even=True),
        "window": _int(0), "use_previous": FLAG, "use_next": FLAG, "cross_sentence": FLAG,
        "graph": FLAG, "pruning": FLAG, "edge_weights": FLAG, "num_samples": _int(1),
        "threshold": _float(0.0), "uncertainty_hidden": _int(1),
        "detach_uncertainty_input": FLAG, "theta": _float(0.0),
        "dropout": _float(0.0, high=1.0, high_open=True),
        "isolated": _choice("identity", "gate"), "constrained_decoding": FLAG,
        "window_encoding": _choice("concat", "per_sentence"),
        "mc_dropout": _choice("full", "output"), "relation_labels": _choice("type", "entity"),
        "unpruned_epochs": _int(0), "lm_dim": _int(0),
    },
    "graph": {
        "max_neighbours": _int(0, optional=True), "seed": _int(0, optional=True),
        "lowercase": FLAG, "skip_tokens": Rule("strings"), "max_word_len": _int(1),
        "max_doc_tokens": _int(1, optional=True),
    },
    "train": {
        "epochs": _int(1), "patience": _int(1), "optimizer": _choice("sgd", "adam"),
        "lr": _float(0.0, low_open=True), "momentum": _float(0.0, high=1.0, high_open=True),
        "weight_decay": _float(0.0), "clip_norm": _float(0.0),
        "lr_schedule": _choice("none", "inverse", "cosine"), "lr_decay": _float(0.0),
        "batch_tokens": _int(1), "eval_batch_tokens": _int(1),
        "loss_reduction": _choice("sum", "sentence_mean"), "threads": _int(0),
        "processes": _int(0), "max_minutes": _float(0.0), "deterministic": FLAG,
    },
}


def check_field(section: str, key: str, value: Any, name: str | None = None) -> None:
    """Raise :class:`ConfigError` unless ``RULES[section][key]`` accepts ``value``.

    Args:
        section: ``""``, ``"model"``, ``"graph"`` or ``"train"``.
        key: The field.
        value: Its value.
        name: How to name the field in the message (a flag such as ``--window``, or
            ``file.toml [train] epochs``); default ``[section] key``.
    """
    rule = RULES[section].get(key)
    if rule is None or rule.accepts(value):
        return
    where = name or (f"[{section}] {key}" if section else key)
    raise ConfigError(f"{where} = {value!r}: expected {rule.describe()}")


def check_values(values: Mapping[str, Any], where: str = "config") -> None:
    """Check a nested mapping of configuration values (as in a TOML preset).

    Unknown keys are left to the caller (which names the keys it knows); a section that is not
    a table is an error here.

    Raises:
        ConfigError: Naming ``where``, the section, the key, the value and what is allowed.
    """
    for key, value in values.items():
        if key in RULES and key:
            if not isinstance(value, Mapping):
                raise ConfigError(f"{where}: [{key}] must be a table, not {value!r}")
            for inner, inner_value in value.items():
                check_field(key, inner, inner_value, f"{where} [{key}] {inner}")
        else:
            check_field("", key, value, f"{where} {key}")


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
