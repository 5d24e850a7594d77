"""The checks of the tagging tools' arguments (``evaluate.py``, ``predict.py``,
``visualize.py``) and of ``stats.py``: the model directory, the inputs and the corpus split, each
checked once before torch loads and passed on (:class:`TaggingInputs`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from docgraph.config.experiment import (
    section_settings,
)
from docgraph.config.fields import UsageError, check_field, check_processes
from docgraph.data.conll import check_input_file, has_tokens
from docgraph.data.docbin import check_spacy, is_docbin
from docgraph.data.registry import (
    dataset_files,
    run_split_file,
)
from docgraph.persistence.locate import ModelDirError, locate_model_dir
from docgraph.runtime.atomic import check_output
from docgraph.runtime.integrity import read_json_file
from docgraph.tagging.prediction_io import STDIN


def check_model_argument(path: str, flag: str = "--model") -> Path:
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
    model_dir = check_model_argument(args.model)
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


def check_stats_arguments(args: argparse.Namespace) -> None:
    """``--data-dir`` of ``stats.py`` holds the dataset's files (checked before torch loads).

    Raises:
        DataNotFoundError: It does not.
    """
    if args.data_dir is not None:
        dataset_files(args.dataset, args.data_dir)


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


__all__ = ["FOLDER_SUFFIXES", "TaggingInputs", "check_corpus_split", "check_model_argument",
           "check_some_tokens", "check_stats_arguments", "check_tagging_arguments",
           "check_visualize_arguments", "input_names"]
