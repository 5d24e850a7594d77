"""The scripts' arguments: parsers, flags that map onto
:class:`~docgraph.config.ExperimentConfig`, and their checks.

Nothing here imports torch, so that a script's arguments are parsed and checked in a fraction
of a second (:mod:`docgraph.cli`) before :mod:`docgraph.cli.commands` does the work.

Precedence: built-in defaults < the TOML preset (``--config FILE``, or ``configs/<dataset>.toml``
when it exists; without one, the small-corpus settings of a small training split:
:func:`small_corpus_config`) < command-line flags.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, fields, replace
from pathlib import Path
from typing import Any, NoReturn

from docgraph.config.experiment import (
    SECTIONS,
    ExperimentConfig,
    apply_overrides,
    check_values,
    run_dirs,
    section_settings,
)
from docgraph.config.fields import Setting, UsageError, check_field, check_processes
from docgraph.config.graph import GraphConfig
from docgraph.config.init_from import init_from_config
from docgraph.config.presets import load_toml, preset_path
from docgraph.config.size import ModelSizeError, host_available_memory, memory_problem
from docgraph.config.tagging import (
    EVALUATE,
    PREDICT,
    VISUALIZE,
    TaggingConfig,
    tagging_settings,
)
from docgraph.config.train import small_corpus_settings
from docgraph.data.conll import check_input_file, has_tokens
from docgraph.data.docbin import check_spacy, is_docbin
from docgraph.data.registry import (
    DATASETS,
    check_corpus,
    dataset_files,
    load_corpus,
    run_split_file,
    split_off_dev,
)
from docgraph.persistence.archive import damage_message
from docgraph.persistence.locate import ModelDirError, locate_model_dir
from docgraph.persistence.run_lock import busy_message
from docgraph.persistence.shipped import shipped_models
from docgraph.runtime.atomic import check_output
from docgraph.runtime.integrity import DamagedFileError, read_json_file
from docgraph.tagging.prediction_io import OUTPUT_FORMATS, STDIN

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


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """``--dataset`` and ``--data-dir``."""
    parser.add_argument("--dataset", choices=tuple(DATASETS), default=None,
                        help="corpus (default: sample, the bundled corpus)")
    parser.add_argument("--data-dir", default=None,
                        help="corpus directory (default: $DOCGRAPH_DATA_DIR/<dataset>)")


def train_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/train.py``."""
    p = argparse.ArgumentParser(
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


def is_tty() -> bool:
    """Whether stderr is an interactive terminal (progress bars only then)."""
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


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
    config = small_corpus_config(config, args)
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
    model's name or a model directory, found as :func:`check_model_dir` finds it), read
    before torch loads.

    Raises:
        UsageError: Naming ``flag``: ``model`` is not a model, or its ``config.json`` is not
            a docgraph configuration.
    """
    directory = check_model_dir(model, flag)
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
    A resumed run keeps its saved configuration."""
    if (getattr(args, "resume", None) or chosen_preset(args) is not None
            or config.train.small_corpus_tokens == 0):
        return config
    train = load_corpus(config)["train"]
    if config.dev_fraction > 0 and len(train) > 1:
        train = split_off_dev(train, config.dev_fraction, config.seed)[0]
    given = {key.split(".", 1)[1] for key in given_settings(args) if key.startswith("train.")}
    values = small_corpus_settings(sum(d.num_tokens for d in train), config.train, given)
    return apply_overrides(config, {"train": values}, where="small corpus") if values else config


def evaluate_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/evaluate.py``."""
    p = argparse.ArgumentParser(
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


def add_progress_arguments(p: argparse.ArgumentParser) -> None:
    """``--quiet`` and ``--progress-interval`` (:mod:`docgraph.runtime.progress`)."""
    p.add_argument("--quiet", action="store_true",
                   help="no progress and no log lines on the terminal, warnings only")
    p.add_argument("--progress-interval", type=non_negative_float, default=30.0,
                   metavar="SECONDS",
                   help="when stderr is not a terminal (a log file): seconds between two "
                        "progress lines (default: %(default)g; on a terminal progress is a bar)")


def check_model_dir(path: str, flag: str = "--model") -> Path:
    """The model directory ``path`` stands for: raise :class:`UsageError` naming ``flag``
    unless it is a model directory or the name of a shipped model
    (:func:`~docgraph.persistence.locate.locate_model_dir`); checked before torch loads."""
    try:
        return locate_model_dir(path)
    except ModelDirError as err:
        raise UsageError(err.detail, flag, path) from None


def check_corpus_split(args: argparse.Namespace, model_dir: Path) -> None:
    """The corpus split that ``evaluate.py`` and ``visualize.py`` read (``--split`` of
    ``--dataset`` in ``--data-dir``, by default the corpus of the model in ``model_dir`` as
    its ``config.json`` names it), found before torch loads; nothing to check with
    ``--data FILE``.

    Raises:
        ValueError: No data directory is given or known for the dataset.
        DataNotFoundError: The split's file is missing.
    """
    if getattr(args, "split", None) is None or getattr(args, "data", None) is not None:
        return
    try:
        saved = read_json_file(model_dir / "config.json")
    except (OSError, ValueError):
        return  # reported when the model loads, with the file named
    if not isinstance(saved, dict):
        return
    if getattr(args, "dataset", None) is None and getattr(args, "data_dir", None) is None:
        own = run_split_file(saved, args.split)  # a run on files of its own: its file
        if own is not None:
            check_input_file(own, head=not is_docbin(own))
            return
    dataset = getattr(args, "dataset", None) or saved.get("dataset")
    if dataset is None:
        return
    data_dir = getattr(args, "data_dir", None)
    if data_dir is None and dataset == saved.get("dataset"):
        data_dir = saved.get("data_dir")
    dataset_files(dataset, data_dir, splits=(args.split,))


def check_some_tokens(names: Sequence[str], input_format: str = "auto") -> None:
    """Raise :class:`UsageError` when none of the input files ``names`` has a token
    (:func:`~docgraph.data.conll.has_tokens`): nothing would be tagged. A DocBin and
    standard input (``-``, read once, by the reader) count as having some: their readers
    log it when they have none. ``predict.py --allow-empty`` skips the check (an empty
    output, status 0)."""
    def found(name: str) -> bool:
        if name == "-" or input_format == "spacy" or (input_format == "auto"
                                                     and is_docbin(name)):
            return True
        return has_tokens(name, input_format)

    if not names or any(found(name) for name in names):
        return
    shown = ", ".join(names) if len(names) <= 3 else (
        f"{', '.join(names[:2])} and {len(names) - 2} more files")
    raise UsageError("no tokens to tag (empty, or only whitespace and control characters); "
                     "expected text or CoNLL token lines (--allow-empty: write an empty output "
                     "instead)", value=shown)


@dataclass(frozen=True)
class TaggingInputs:
    """What :func:`check_tagging_arguments` found, handed to the command so that nothing is
    located or checked twice.

    Args:
        model_dir: The model directory ``--model`` stands for.
        shipped: Whether ``--model`` named a shipped model (not a directory).
        inputs: ``predict.py``'s input files, checked, a folder's files in their place and
            :data:`~docgraph.tagging.prediction_io.STDIN` for ``-``.
    """

    model_dir: Path
    shipped: bool
    inputs: tuple[Path, ...] = ()


def check_tagging_arguments(args: argparse.Namespace) -> TaggingInputs:
    """The paths and counts of ``evaluate.py``, ``predict.py`` and ``visualize.py``, checked
    before torch is imported: the model directory and its ``model.pt``, input files
    (``--data``, ``predict.py``'s inputs: that they exist, that their first bytes are text and,
    unless ``--allow-empty``, that one of them has a token), ``--data-dir``, ``--output-dir``,
    ``--output``, ``--processes`` (at most the cores), the configuration values they
    override (``--threshold``, by the rule of ``[model] threshold``) and the corpus split to
    read (:func:`check_corpus_split`).

    Raises:
        UsageError: For the first argument that cannot work, naming it.
        CorpusFormatError: For an input file that is not UTF-8 text (naming the file, the line
            and the byte offset).
        ConfigError: For more ``--processes`` than cores.
        DataNotFoundError: For a corpus split that is not there (a ``ValueError`` when no data
            directory is known).
    """
    model_dir = check_model_dir(args.model)
    shipped = not Path(args.model).is_dir()
    if getattr(args, "threshold", None) is not None:
        check_field(section_settings("model")["threshold"], args.threshold, "--threshold")
    check_output(getattr(args, "output", None))
    if getattr(args, "format", None) == "spacy" and not getattr(args, "output", None):
        raise UsageError("writes a binary spaCy DocBin: give --output FILE.spacy",
                         "--format spacy")
    if getattr(args, "data", None) is not None:
        check_input_file(args.data, "--data", head=not is_docbin(args.data))
        if is_docbin(args.data):
            check_spacy(args.data)
    input_format = getattr(args, "input_format", "auto")
    inputs = input_names(getattr(args, "inputs", None) or ())
    for name in inputs:
        docbin = input_format == "spacy" or (input_format == "auto" and is_docbin(name))
        if docbin:
            check_spacy(name)
        if name != "-":  # standard input is read once, by the reader
            check_input_file(name, head=not docbin)
    if not getattr(args, "allow_empty", True):
        check_some_tokens(inputs, input_format)
    data_dir = getattr(args, "data_dir", None)
    if data_dir is not None and not Path(data_dir).is_dir():
        raise UsageError("directory not found", "--data-dir", data_dir)
    output_dir = getattr(args, "output_dir", None)
    if output_dir is not None and Path(output_dir).exists() and not Path(output_dir).is_dir():
        raise UsageError("exists and is not a directory", "--output-dir", output_dir)
    if getattr(args, "processes", 0):
        check_processes(args.processes, "--processes")
    check_corpus_split(args, model_dir)
    return TaggingInputs(model_dir, shipped,
                         tuple(STDIN if name == "-" else Path(name) for name in inputs))


#: The files of a folder that ``predict.py`` tags when given the folder.
FOLDER_SUFFIXES = (".txt", ".jsonl", ".spacy")


def input_names(names: Sequence[str]) -> list[str]:
    """``predict.py``'s inputs with every folder replaced by its files of
    :data:`FOLDER_SUFFIXES` (not those of its subfolders), sorted by name; ``-`` (stdin) at
    most once.

    Raises:
        UsageError: ``-`` given twice, or a folder without such files.
    """
    found: list[str] = []
    for name in names:
        if name == "-" and "-" in found:
            raise UsageError("standard input given twice", value="-")
        folder = Path(name)
        if name == "-" or not folder.is_dir():
            found.append(name)
            continue
        files = sorted((p for p in folder.iterdir()
                        if p.is_file() and p.suffix.lower() in FOLDER_SUFFIXES),
                       key=lambda p: p.name)
        if not files:
            raise UsageError(f"a folder without {', '.join(FOLDER_SUFFIXES[:-1])} or "
                             f"{FOLDER_SUFFIXES[-1]} files to tag", value=name)
        found.extend(str(p) for p in files)
    return found


def add_tagging_flags(p: argparse.ArgumentParser, tool: str) -> None:
    """The flags of :class:`~docgraph.config.tagging.TaggingConfig` that ``tool`` takes
    (:func:`~docgraph.config.tagging.tagging_settings`), each made from its declaration: its
    type and check (an ``argparse`` error naming the flag; ``--threshold`` is checked by
    :func:`check_tagging_arguments`, after the model it overrides), choices, metavar, default
    and ``--help``."""
    defaults = TaggingConfig()
    for name, setting in tagging_settings(tool):
        default = getattr(defaults, name)
        if setting.switches:
            for flag, value in setting.switches.items():
                p.add_argument(flag, dest=name, action="store_const", const=value,
                               default=default, help=setting.help)
            continue
        choices = setting.rule.choices or None
        shown = f" (default: {default})" if default is not None else ""
        p.add_argument(setting.flag, dest=name, default=default, choices=choices,
                       type=setting.parse if name == "threshold" else rule_type(setting),
                       metavar=None if choices else setting.metavar,
                       help=setting.help + shown)


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


def add_tagging_arguments(p: argparse.ArgumentParser, tool: str) -> None:
    """What the tagging tools share: the flags of
    :class:`~docgraph.config.tagging.TaggingConfig` that ``tool`` takes and the progress
    flags."""
    add_tagging_flags(p, tool)
    add_progress_arguments(p)


def positive_int(value: str) -> int:
    """An ``argparse`` type: an integer of at least 1."""
    return _int_at_least(value, 1, "a positive integer")


def predict_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/predict.py``."""
    p = argparse.ArgumentParser(
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


class OneLineParser(argparse.ArgumentParser):
    """A parser whose errors are one ``error: ...`` line on stderr (exit status 2), for the
    tools whose output is meant to be read by other programs (``stats.py``, ``visualize.py``)."""

    def error(self, message: str) -> NoReturn:
        """Print ``error: message`` and exit with status 2."""
        fail(message)


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


def check_stats_arguments(args: argparse.Namespace) -> None:
    """``--data-dir`` of ``stats.py`` holds the dataset's files (checked before torch loads).

    Raises:
        DataNotFoundError: It does not.
    """
    if args.data_dir is not None:
        dataset_files(args.dataset, args.data_dir)


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


def check_visualize_arguments(args: argparse.Namespace) -> TaggingInputs:
    """What ``visualize.py`` is asked to do, and its paths and overrides
    (:func:`check_tagging_arguments`), checked before torch is imported.

    Raises:
        UsageError: For the first argument that cannot work, naming it.
        ConfigError: For a ``--threshold`` the ``[model] threshold`` rule refuses.
    """
    if args.out is None and args.noisy is None and args.html is None:
        raise UsageError("nothing to do: give --out FILE (with --doc), --html FILE and/or "
                         "--noisy K")
    if args.out is not None:
        if args.doc is None:
            raise UsageError("needs --doc N", "--out")
        if Path(args.out).suffix.lower() not in (".png", ".svg"):
            raise UsageError("the figure must be a .png or .svg file", "--out", args.out)
    if args.noisy is not None and args.noisy < 1:
        raise UsageError(f"must be >= 1, got {args.noisy}", "--noisy")
    if args.doc is not None and args.doc < 0:
        raise UsageError(f"must be >= 0, got {args.doc}", "--doc")
    if args.word is not None and args.out is None:
        raise UsageError("needs --out FILE", "--word")
    if args.max_words < 0:
        raise UsageError(f"must be >= 0, got {args.max_words}", "--max-words")
    for flag, path in (("--out", args.out), ("--html", args.html)):
        if path is not None and Path(path).is_dir():
            raise UsageError("is a directory; expected a file to write", flag, path)
    return check_tagging_arguments(args)
