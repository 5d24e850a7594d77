"""The configuration of a run that starts from a trained model (``train.py --init-from MODEL``),
torch-free.

The run takes the model's ``[model]`` section, its pretrained vectors (``embeddings``) and its
language-model settings; the rest (corpus, ``[train]``, ``[graph]``, seed, output directory)
is the run's own, as for any run. Of the model settings, those that decide the shapes of the
weights (:data:`ARCHITECTURE`: the sizes and the module switches) must stay the model's: a
preset or a flag that sets one to another value is an error naming it. The others
(:data:`TUNABLE`: dropout, the threshold, the loss weight, decoding, ...) are the model's unless
the preset or a flag sets them -- but for :data:`RUN_OWN`, chosen on a model's own dev once it
is trained, which the new model does not inherit.

One architecture change is allowed: a model trained without a language model may be given one
(``--lm PATH``, with its :data:`LM_SETTINGS`). The features are appended to the context
encoder's input, whose new weight columns start at zero
(:func:`docgraph.training.init_from.initial_state`), so the run's first forward pass is still
the model's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from docgraph.config.fields import SIZE, VARIANT, ConfigError, fields_marked, settings_of
from docgraph.config.model import GCDocConfig
from docgraph.config.train import TrainConfig, flags_of

if TYPE_CHECKING:
    from docgraph.config.experiment import ExperimentConfig

__all__ = ["ARCHITECTURE", "FINE_TUNING", "FROM_MODEL", "LM_SETTINGS", "RUN_OWN", "TUNABLE",
           "adds_language_model", "architecture_conflicts",
           "fine_tune_line", "fine_tune_settings", "init_from_config"]

#: The ``[train]`` settings of a run that starts from a trained model (``--init-from``), where
#: no preset or flag sets them (in place of the small-corpus settings, which are for training
#: from nothing): Adam at the rate the shipped models were trained with (0.002, below the
#: small corpus's 0.005), without weight decay (Adam's step on the L2 term alone moves every
#: word row that the data never reads), small batches, a shorter epoch cap and no minimum of
#: steps. Measurement: ``docs/training.md``.
FINE_TUNING: Mapping[str, Any] = MappingProxyType({
    "optimizer": "adam", "lr": 0.002, "weight_decay": 0.0, "loss_reduction": "sentence_mean",
    "batch_tokens": 500, "epochs": 40, "patience": 10, "min_steps": 0, "processes": 1,
})


def fine_tune_settings(config: TrainConfig, given: Collection[str] = ()) -> dict[str, Any]:
    """The values of :data:`FINE_TUNING` that a run starting from a model takes: every one
    whose key (``"lr"``) is not in ``given`` (the ``[train]`` settings a preset or a flag
    sets)."""
    return {key: value for key, value in FINE_TUNING.items() if key not in given}


def fine_tune_line(name: str, config: TrainConfig) -> str:
    """The line a run starting from the model ``name`` logs: its values of the keys of
    :data:`FINE_TUNING`, and those of them that differ from it (set by a preset or a flag)."""
    current = {key: getattr(config, key) for key in FINE_TUNING}
    line = f"fine-tuning from {name}: {flags_of(current)}"
    other = {key: value for key, value in FINE_TUNING.items() if current[key] != value}
    if not other:
        return line + (" (the fine-tuning settings: a trained model takes smaller steps and a "
                       "shorter run than training from nothing; a flag changes any of them)")
    return (line + f" (the fine-tuning settings would be {flags_of(other)}: train.py takes "
            "them where no preset or flag sets them; the small-corpus settings are for "
            "training from nothing)")


#: The ``[model]`` settings that decide the shapes and the parts of the weights.
ARCHITECTURE: tuple[str, ...] = tuple(dict.fromkeys(
    (*fields_marked(GCDocConfig, SIZE), *fields_marked(GCDocConfig, VARIANT))))

#: The ``[model]`` settings a fine-tuning run may change (the model's unless set).
TUNABLE: tuple[str, ...] = tuple(name for name, _ in settings_of(GCDocConfig)
                                 if name not in ARCHITECTURE)

#: The ``[model]`` settings that are always the run's own: a trained model's choices made on its
#: dev, not the new model's.
RUN_OWN: tuple[str, ...] = ("label_consistency",)

#: The top-level settings of the language model whose features a model reads.
LM_SETTINGS: tuple[str, ...] = ("lm", "lm_context", "lm_pooling", "lm_layers", "lm_pack")

#: The top-level settings that come from the model: the vectors of its word rows and the
#: language model whose features it reads.
FROM_MODEL: tuple[str, ...] = ("embeddings", *LM_SETTINGS)


def _value(config: ExperimentConfig, key: str) -> Any:
    section, _, name = key.rpartition(".")
    return getattr(getattr(config, section) if section else config, name)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def init_from_config(config: ExperimentConfig, model: ExperimentConfig,
                     given: Mapping[str, str], name: str) -> ExperimentConfig:
    """The configuration of a run that starts from the model whose configuration is ``model``.

    Args:
        config: The run's configuration as its command line makes it (defaults < preset <
            flags).
        model: The model's saved configuration.
        given: The settings the preset or the command line set: ``"model.hidden"``,
            ``"embeddings"``, ... -> how to name where (``"--hidden"``,
            ``"my.toml [model] hidden"``).
        name: The model as ``--init-from`` names it (for messages).

    Returns:
        ``config`` with the model's ``[model]`` section (its :data:`TUNABLE` settings replaced
        where ``given`` sets them) and the model's :data:`FROM_MODEL` settings -- except the
        run's :data:`LM_SETTINGS` where it gives a language model to a model without one
        (:func:`adds_language_model`).

    Raises:
        ConfigError: A setting of :data:`ARCHITECTURE` or :data:`FROM_MODEL` is given a value
            other than the model's; the message names where it was set.
    """
    adding = adds_language_model(config, model)
    kept = tuple(k for k in FROM_MODEL if not (adding and k in LM_SETTINGS))
    for key in (*kept, *(f"model.{n}" for n in ARCHITECTURE)):
        if key in given and _value(config, key) != _value(model, key):
            shown = key.replace("model.", "[model] ")
            raise ConfigError(
                f"{given[key]} = {_toml(_value(config, key))}: --init-from {name} was trained "
                f"with {shown} = {_toml(_value(model, key))}, and a fine-tuning run keeps the "
                "model's architecture, vectors and language model; drop the setting")
    tuned = {n: getattr(config.model, n) for n in TUNABLE
             if f"model.{n}" in given or n in RUN_OWN}
    return replace(config, model=replace(model.model, **tuned),
                   **{key: getattr(model, key) for key in kept})


def adds_language_model(config: ExperimentConfig, model: ExperimentConfig) -> bool:
    """Whether the run ``config`` gives a language model to the model ``model``, trained
    without one."""
    return config.lm is not None and model.lm is None and not model.model.lm_dim


def architecture_conflicts(config: GCDocConfig, model: GCDocConfig) -> list[str]:
    """The :data:`ARCHITECTURE` settings in which ``config`` differs from ``model``, as
    ``"[model] hidden = 100 (the model's: 200)"``; empty when none does. Features of a language
    model given to a model without them (``lm_dim`` from 0) are no conflict."""
    return [f"[model] {n} = {_toml(getattr(config, n))} (the model's: "
            f"{_toml(getattr(model, n))})"
            for n in ARCHITECTURE if getattr(config, n) != getattr(model, n)
            and not (n == "lm_dim" and model.lm_dim == 0)]
