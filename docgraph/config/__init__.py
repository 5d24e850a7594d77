"""Configuration: one dataclass per section, each field declared once with its rule, help and
flag (:mod:`docgraph.config.fields`); no torch here.

* :class:`ExperimentConfig` -- a training run (top-level keys of a preset), with the sections
  :class:`GCDocConfig` (``[model]``), :class:`GraphConfig` (``[graph]``) and
  :class:`TrainConfig` (``[train]``);
* :func:`apply_overrides` -- a copy with nested values applied, every one checked first;
* :func:`load_toml`, :func:`preset_path` -- the TOML presets ``configs/<dataset>.toml``.

The command-line flags of :mod:`docgraph.cli.arguments`, the TOML keys, the checks and their
messages, and ``--help`` all come from these declarations.
"""

from docgraph.config.experiment import (
    SECTIONS,
    ExperimentConfig,
    apply_overrides,
    check_values,
    section_settings,
)
from docgraph.config.fields import ConfigError, UsageError, check_processes
from docgraph.config.graph import GraphConfig
from docgraph.config.model import GCDocConfig
from docgraph.config.presets import load_toml, preset_path
from docgraph.config.train import TrainConfig

__all__ = ["SECTIONS", "ConfigError", "ExperimentConfig", "GCDocConfig", "GraphConfig",
           "TrainConfig", "UsageError", "apply_overrides", "check_processes", "check_values",
           "load_toml", "preset_path", "section_settings"]
