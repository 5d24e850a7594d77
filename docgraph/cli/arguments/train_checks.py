"""The checks of ``train.py``'s arguments and the configuration they make.

Precedence: built-in defaults < the TOML preset (``--config FILE``, or ``configs/<dataset>.toml``
when it exists; without one, the small-corpus settings of a small training split:
:func:`small_corpus_config`) < command-line flags."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docgraph.cli.arguments.flags import SWITCHES, flag_dest, value_flags
from docgraph.cli.arguments.tagging_checks import check_model_argument
from docgraph.config.experiment import (
    SECTIONS,
    ExperimentConfig,
    apply_overrides,
    check_values,
    run_dirs,
    section_settings,
)
from docgraph.config.fields import UsageError, check_field, check_processes
from docgraph.config.init_from import fine_tune_settings, init_from_config
from docgraph.config.presets import load_toml, preset_path
from docgraph.config.size import ModelSizeError, host_available_memory, memory_problem
from docgraph.config.train import small_corpus_settings
from docgraph.data.registry import (
    check_corpus,
    check_labelled_file,
    dataset_files,
    load_corpus,
    read_labelled,
    split_off_dev,
)
from docgraph.persistence.archive import damage_message
from docgraph.persistence.run_lock import busy_message
from docgraph.runtime.integrity import DamagedFileError, read_json_file


def check_arguments(args: argparse.Namespace) -> ExperimentConfig:
    """Check every configuration value of the command line and of its TOML preset before
    any work (and before torch is imported), naming the flag or the file and key; then the
    model's size against the host's memory (:func:`check_model_size`) and, with ``--resume``,
    that the checkpoint is whole. The configuration built on the way is the run's: the
    command is given it (:func:`docgraph.cli.commands.train`) and builds none of its own.

    Returns:
        The run's configuration: defaults < preset < flags (without a preset, a small
        corpus's settings in place of the preset: :func:`small_corpus_config`), or, with
        ``--resume``, the run's saved configuration < flags.

    Raises:
        ConfigError: For the first value its field does not accept, or more ``--processes``
            than cores.
        UsageError: For a ``--config`` file that does not exist, or a damaged ``last.pt``
            or ``config.json``.
        DataNotFoundError: ``--data-dir`` (with ``--dataset``) holds no corpus.
        ModelSizeError: The model cannot fit in memory (the message names the size flag).
    """
    for flag, value_flag in value_flags().items():
        value = getattr(args, value_flag.dest, None)
        if value is not None:
            check_field(value_flag.setting, value, flag)
    for seed in getattr(args, "seeds", None) or ():
        check_field(section_settings("")["seed"], seed, "--seeds")
    if getattr(args, "processes", None):
        check_processes(args.processes, "--processes")
    if getattr(args, "resume", None):
        config = config_from_args(args, check_resumable(args))
    else:
        config = config_from_args(args)
    if getattr(args, "train", None) is not None:
        for flag in ("--dataset", "--data-dir"):
            if getattr(args, flag_dest(flag), None) is not None:
                raise UsageError("cannot be combined with --train: --train, --dev and --test "
                                 "name the corpus's files", flag)
    if any(f is not None for f in (config.train_file, config.dev_file, config.test_file)):
        check_corpus(config)  # every file read whole: a bad line or span, before torch loads
    elif getattr(args, "data_dir", None) is not None and getattr(args, "dataset", None):
        # no corpus there: said before torch loads
        dataset_files(config.dataset, config.data_dir, config.file_splits)
    if config.fine_tune.rehearse is not None:
        if config.init_from is None:
            raise UsageError("rehearses the model a run starts from: give --init-from MODEL",
                             "--rehearse", config.fine_tune.rehearse)
        check_labelled_file(config.fine_tune.rehearse, "--rehearse")
        read_labelled(config.fine_tune.rehearse)  # read whole: a bad line before torch loads
    elif config.fine_tune.rehearse_partial:
        raise UsageError("says what the --rehearse documents do not annotate: give --rehearse "
                         "FILE", "--rehearse-partial")
    elif config.fine_tune.own_repeats > 1:
        raise UsageError("weighs the run's documents against the --rehearse documents: give "
                         "--rehearse FILE", "--own-repeats", config.fine_tune.own_repeats)
    config = small_corpus_config(config, args)
    if config.fine_tune.anchor > 0:
        if config.init_from is None:
            raise UsageError("anchors the model a run starts from: give --init-from MODEL",
                             "--anchor", config.fine_tune.anchor)
        if config.train.lr * config.fine_tune.anchor >= 1:
            raise UsageError(f"with --lr {config.train.lr:g}, each step would move a weight "
                             "past its start: lr * STRENGTH must be below 1", "--anchor",
                             config.fine_tune.anchor)
    if config.fine_tune.distil > 0 and config.init_from is None:
        raise UsageError("distils the model a run starts from: give --init-from MODEL",
                         "--distil", config.fine_tune.distil)
    if config.fine_tune.distil_on != "all" and not (config.fine_tune.distil > 0
                                                    and config.fine_tune.rehearse is not None):
        raise UsageError("says which tokens --distil covers: give --distil WEIGHT and "
                         "--rehearse FILE", "--distil-on", config.fine_tune.distil_on)
    if config.fine_tune.tune != "all" and config.init_from is None:
        raise UsageError("tunes part of the model a run starts from: give --init-from MODEL",
                         "--tune", config.fine_tune.tune)
    if not getattr(args, "resume", None):
        check_output_dir(config.output_dir, getattr(args, "seeds", None),
                         getattr(args, "overwrite", False))
    check_model_size(config)
    return config


def check_resumable(args: argparse.Namespace) -> ExperimentConfig | None:
    """``--resume DIR``: a directory with a whole ``last.pt`` that no run holds, and no
    ``--seeds`` or ``--overwrite`` beside it; the run's saved configuration (``None`` when
    the directory has no ``config.json``).

    Raises:
        UsageError: Naming ``--resume``, the directory and what is wrong.
    """
    if getattr(args, "seeds", None):
        raise UsageError("--resume and --seeds cannot be combined")
    if getattr(args, "overwrite", False):
        raise UsageError("--resume and --overwrite cannot be combined")
    directory = Path(args.resume)
    if not directory.is_dir():
        raise UsageError("no such run directory", "--resume", args.resume)
    last = directory / "last.pt"
    if not last.is_file():
        raise UsageError("no checkpoint last.pt in that directory (nothing to resume)",
                         "--resume", args.resume)
    busy = busy_message(directory)
    if busy is not None:
        raise UsageError(busy, "--resume")
    damage = damage_message(last)
    if damage is not None:
        raise UsageError(damage, "--resume", args.resume)
    saved = directory / "config.json"
    if not saved.is_file():
        return None
    try:
        return ExperimentConfig.from_saved(read_json_file(saved))
    except DamagedFileError as err:
        raise UsageError(str(err), "--resume") from None


#: Files of a run directory that hold a run (trained or under way).
RUN_RECORDS = ("last.pt", "model.pt", "metrics.json", "summary.json")


def check_output_dir(output_dir: str, seeds: Sequence[int] | None = None,
                     overwrite: bool = False) -> None:
    """The output directory of a new run: not held by another run, and holding no run of
    its own (or its seeds') unless ``overwrite``.

    Raises:
        UsageError: Naming ``--output-dir`` and, for a directory with a run, ``--resume``
            and ``--overwrite``.
    """
    busy = busy_message(output_dir)
    if busy is not None:
        raise UsageError(busy, "--output-dir")
    if overwrite:
        return
    found = [p / name for p in run_dirs(output_dir, seeds) for name in RUN_RECORDS
             if (p / name).is_file()]
    if found:
        raise UsageError(f"holds a run already ({found[0].name} is there); --resume "
                         f"{found[0].parent} continues it, --overwrite replaces it",
                         "--output-dir", output_dir)


def check_model_size(config: ExperimentConfig, available: int | None = None) -> None:
    """Refuse, before torch loads, a model whose float32 parameters cannot fit in the host's
    memory (``available`` bytes; default :func:`~docgraph.config.size.host_available_memory`),
    counted in closed form (:func:`~docgraph.config.size.estimate_parameters`, the smallest
    vocabularies: a lower bound).

    On ``--device cpu`` the weights, gradients and optimizer state of each of the run's
    ``--processes`` (at least one) must fit; on another device the weights alone, which are
    built in host memory before they move. The run checks again once it knows its device
    and processes (:func:`~docgraph.persistence.model_dir.check_model_memory`).

    Raises:
        ModelSizeError: One line naming the size flag and the memory needed and available.
    """
    available = host_available_memory() if available is None else available
    if available is None:
        return
    cpu = config.device == "cpu"
    processes = max(1, config.train.processes) if cpu else 1
    problem = memory_problem(config.model, available, config.train.optimizer,
                             config.train.momentum, processes, sharing=processes,
                             weights_only=not cpu)
    if problem is not None:
        raise ModelSizeError(problem)


def config_from_args(args: argparse.Namespace, base: ExperimentConfig | None = None
                     ) -> ExperimentConfig:
    """The configuration of a ``train.py`` command line: defaults < preset < flags; with
    ``base`` (a resumed run's saved config), base < flags."""
    config = preset_config(args) if base is None else base
    overrides: dict[str, Any] = {}
    for key in ("data_dir", "output_dir"):
        value = getattr(args, key, None)
        if value is not None:
            overrides[key] = value

    def put(section: str, key: str, value: Any) -> None:
        (overrides.setdefault(section, {}) if section else overrides)[key] = value

    for value_flag in value_flags().values():
        value = getattr(args, value_flag.dest)
        if value is not None:
            put(value_flag.section, value_flag.key, value)
    for flag, values in SWITCHES.items():
        if getattr(args, flag_dest(flag)):
            for section, kv in values.items():
                for key, value in kv.items():
                    put(section, key, value)
    if args.resume is not None:
        overrides["output_dir"] = args.resume
    config = apply_overrides(config, overrides, where="command line")
    if base is None and config.init_from is not None:
        flag = "--init-from" if getattr(args, "init_from", None) else \
            f"{chosen_preset(args)} init_from"
        config = init_from_config(config, read_init_config(config.init_from, flag),
                                  given_settings(args), config.init_from)
    return config


def read_init_config(model: str, flag: str = "--init-from") -> ExperimentConfig:
    """The saved configuration of the model ``model`` that a run starts from (a shipped
    model's name or a model directory, found as :func:`check_model_argument` finds it), read
    before torch loads.

    Raises:
        UsageError: Naming ``flag``: ``model`` is not a model, or its ``config.json`` is not
            a docgraph configuration.
    """
    directory = check_model_argument(model, flag)
    path = directory / "config.json"
    try:
        return ExperimentConfig.from_saved(read_json_file(path))
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise UsageError(f"{path} is not the configuration of a docgraph model ({err})",
                         flag, model) from None


def given_settings(args: argparse.Namespace) -> dict[str, str]:
    """The settings a ``train.py`` command line sets in its preset or its flags, as
    ``"model.hidden"`` (``"seed"`` at the top level) -> where (``"--hidden"``,
    ``"configs/x.toml [model] hidden"``); a flag wins over the preset."""
    given: dict[str, str] = {}
    preset = chosen_preset(args)
    if preset is not None:
        for key, value in load_toml(preset).items():
            if key in SECTIONS and isinstance(value, dict):
                given.update({f"{key}.{inner}": f"{preset} [{key}] {inner}" for inner in value})
            else:
                given[key] = f"{preset} {key}"
    for flag, value_flag in value_flags().items():
        if getattr(args, value_flag.dest, None) is not None:
            section, key = value_flag.section, value_flag.key
            given[f"{section}.{key}" if section else key] = flag
    for flag, values in SWITCHES.items():
        if getattr(args, flag_dest(flag), False):
            for section, kv in values.items():
                given.update({f"{section}.{key}" if section else key: flag for key in kv})
    return given


def preset_config(args: argparse.Namespace) -> ExperimentConfig:
    """The built-in defaults < the TOML preset of a ``train.py`` command line
    (:func:`chosen_preset`), its values checked (naming the file and key) as it is read.

    Raises:
        ConfigError: For a value of the preset its field does not accept.
        UsageError: For a ``--config`` file that does not exist.
    """
    # files of one's own (--train) are read as the column data set's are, without a preset
    dataset = args.dataset or ("column" if getattr(args, "train", None) else "sample")
    config = ExperimentConfig(dataset=dataset, output_dir=f"runs/{dataset}")
    preset = chosen_preset(args)
    if preset is None:
        return config
    values = load_toml(preset)
    check_values(values, str(preset))
    config = apply_overrides(config, values, where=str(preset))
    if args.dataset and config.dataset != args.dataset:
        config = apply_overrides(config, {"dataset": args.dataset})
    return config


def chosen_preset(args: argparse.Namespace) -> Path | None:
    """The TOML preset a ``train.py`` command line asks for: ``--config FILE``, else
    ``configs/<dataset>.toml`` when it exists (``None`` when neither does).

    Raises:
        UsageError: For a ``--config`` file that does not exist.
    """
    if args.config:
        if not Path(args.config).is_file():
            raise UsageError("file not found", "--config", args.config)
        return Path(args.config)
    if getattr(args, "train", None) and not args.dataset:
        return None
    return preset_path(args.dataset or "sample")


def small_corpus_config(config: ExperimentConfig, args: argparse.Namespace) -> ExperimentConfig:
    """``config`` with the small-corpus settings of a new run that no preset is chosen for
    (:func:`chosen_preset`) and whose training split is small
    (:func:`~docgraph.config.train.small_corpus_settings`): the corpus is read here, before
    torch loads, and its dev share held out as the run will hold it out; a flag's value stays.
    A resumed run keeps its saved configuration. A run that starts from a trained model
    (``--init-from``) takes the fine-tuning settings instead, where no preset or flag sets
    them (:func:`~docgraph.config.init_from.fine_tune_settings`), whatever the corpus's size."""
    if getattr(args, "resume", None):
        return config
    if config.init_from is not None:
        given = {key.split(".", 1)[1] for key in given_settings(args) if key.startswith("train.")}
        return apply_overrides(config, {"train": fine_tune_settings(config.train, given)},
                               where="fine-tuning")
    if chosen_preset(args) is not None or config.train.small_corpus_tokens == 0:
        return config
    train = load_corpus(config)["train"]
    if config.dev_fraction > 0 and len(train) > 1:
        train = split_off_dev(train, config.dev_fraction, config.seed)[0]
    given = {key.split(".", 1)[1] for key in given_settings(args) if key.startswith("train.")}
    values = small_corpus_settings(sum(d.num_tokens for d in train), config.train, given)
    return apply_overrides(config, {"train": values}, where="small corpus") if values else config


__all__ = ["RUN_RECORDS", "check_arguments", "check_model_size", "check_output_dir",
           "check_resumable", "chosen_preset", "config_from_args", "given_settings",
           "preset_config", "read_init_config", "small_corpus_config"]
