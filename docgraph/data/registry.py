"""Named data sets: where their files are and which reader loads them."""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from docgraph.config.fields import ConfigError
from docgraph.data.conll import HEAD_BYTES, looks_like_conll, read_conll
from docgraph.data.docbin import SUFFIX as DOCBIN_SUFFIX
from docgraph.data.docbin import check_spacy, is_docbin, read_docbin
from docgraph.data.document import Document
from docgraph.data.errors import CorpusFormatError, DataDirError, DataNotFoundError, format_error
from docgraph.data.ontonotes import read_ontonotes
from docgraph.data.span_jsonl import looks_like_span_jsonl, read_span_jsonl

ENV_VAR = "DOCGRAPH_DATA_DIR"

log = logging.getLogger(__name__)

Resolver = Callable[[Path, str], Path]

T = TypeVar("T")


def _first_existing(data_dir: Path, split: str, candidates: Sequence[str], hint: str) -> Path:
    for name in candidates:
        path = data_dir / name
        if path.exists():
            return path
    raise DataNotFoundError(
        f"no {split} data in {data_dir}: expected one of {', '.join(candidates)}. {hint}"
    )


_CONLL03_HINT = "CoNLL-2003 English files in the original 4-column IOB1 format."
_ONTONOTES_HINT = (
    "The CoNLL-2012 *gold_conll files come from the official skeleton2conll conversion of "
    "OntoNotes 5.0 (LDC2013T19)."
)
_ONTONOTES_NAMES = {
    "train": ("train.gold_conll.gz", "train.gold_conll", "train"),
    "dev": ("dev.gold_conll.gz", "dev.gold_conll", "development", "dev"),
    "test": ("test.gold_conll.gz", "test.gold_conll", "test", "conll-2012-test"),
}


def _conll03_file(data_dir: Path, split: str) -> Path:
    return _first_existing(data_dir, split, (f"{split}.txt",), _CONLL03_HINT)


def _ontonotes_file(data_dir: Path, split: str) -> Path:
    return _first_existing(data_dir, split, _ONTONOTES_NAMES[split], _ONTONOTES_HINT)


#: The suffixes of CoNLL column files (any other is not a labelled file for ``--train``).
CONLL_SUFFIXES = (".bio", ".bioes", ".conll", ".conllx", ".iob", ".iob1", ".iob2", ".tsv",
                  ".txt")

#: The file names a ``column`` corpus's split may have: ``<split><suffix>``, CoNLL columns,
#: span JSON lines (``.jsonl``) or a spaCy DocBin (``.spacy``). Other files in the folder
#: (``test.txt.bak``, ``notes.md``) are not the corpus's and are left alone.
COLUMN_SUFFIXES = (*CONLL_SUFFIXES, ".jsonl", DOCBIN_SUFFIX)

#: What a labelled file may be, for the messages that say so.
LABELLED_FORMATS = (f"CoNLL columns ({', '.join(CONLL_SUFFIXES)}; IOB1, IOB2 or BIOES), span "
                    f"JSON lines (.jsonl) or a spaCy DocBin ({DOCBIN_SUFFIX})")


def _column_file(data_dir: Path, split: str) -> Path:
    found = [data_dir / f"{split}{suffix}" for suffix in COLUMN_SUFFIXES
             if (data_dir / f"{split}{suffix}").is_file()]
    if not found:
        raise DataNotFoundError(
            f"no {split} data in {data_dir}: expected a CoNLL column file named {split}"
            f"{{{','.join(CONLL_SUFFIXES)}}} (or span JSON lines, {split}.jsonl, or a spaCy "
            f"DocBin, {split}{DOCBIN_SUFFIX})"
        )
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise DataDirError(f"several {split} files in {data_dir} ({names}): expected exactly one")
    return found[0]


@dataclass(frozen=True)
class DatasetSpec:
    """How to find and read one named data set.

    Args:
        name: Registry name.
        description: One line for help texts.
        resolve: Maps ``(data_dir, split)`` to the file or directory of that split.
        reader: Reads that file or directory into documents.
        shared_name: Folder name under ``$DOCGRAPH_DATA_DIR``.
        bundled: The data ships with the package (``data_dir`` is ignored).
    """

    name: str
    description: str
    resolve: Resolver
    reader: Callable[[Path], list[Document]]
    shared_name: str
    bundled: bool = False


def _read_iob1(path: Path) -> list[Document]:
    return read_conll(path, scheme="iob1")


def _read_auto(path: Path) -> list[Document]:
    return read_conll(path)


def labelled_format(path: str | Path) -> str:
    """How :func:`read_labelled` reads a file: ``"spacy"`` for a name ending in ``.spacy``,
    ``"jsonl"`` for ``.jsonl`` or a file whose first line is a JSON object with a ``"text"``
    (:func:`~docgraph.data.span_jsonl.looks_like_span_jsonl`), else ``"conll"``."""
    path = Path(path)
    if is_docbin(path):
        return "spacy"
    if path.suffix.lower() == ".jsonl":
        return "jsonl"
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.readline()
    except OSError:
        return "conll"  # the reader says what is wrong with it
    return "jsonl" if looks_like_span_jsonl(head) else "conll"


def read_labelled(path: str | Path) -> list[Document]:
    """Read a labelled file by :func:`labelled_format`: a spaCy DocBin
    (:func:`~docgraph.data.docbin.read_docbin`), span JSON lines
    (:func:`~docgraph.data.span_jsonl.read_span_jsonl`) or CoNLL columns (scheme
    auto-detected)."""
    kind = labelled_format(path)
    return (read_docbin(path) if kind == "spacy" else read_span_jsonl(path) if kind == "jsonl"
            else read_conll(path))


DATASETS: dict[str, DatasetSpec] = {
    "conll03": DatasetSpec(
        "conll03", "CoNLL-2003 English (train.txt, dev.txt, test.txt; IOB1)",
        _conll03_file, _read_iob1, "conll2003",
    ),
    "ontonotes": DatasetSpec(
        "ontonotes", "OntoNotes 5.0 English, CoNLL-2012 format ({split}.gold_conll[.gz] or trees)",
        _ontonotes_file, read_ontonotes, "ontonotes",
    ),
    "sample": DatasetSpec(
        "sample", "small bundled English news corpus (IOB2)",
        _conll03_file, _read_auto, "sample", bundled=True,
    ),
    "column": DatasetSpec(
        "column", "generic CoNLL column files train.*, dev.*, test.* (scheme auto-detected), "
                  "span JSON lines train.jsonl, ... (doccano, Prodigy, Label Studio) or spaCy "
                  "DocBin files train.spacy, ...",
        _column_file, read_labelled, "column",
    ),
}


def get_spec(name: str) -> DatasetSpec:
    """Look up a data set by name.

    Args:
        name: A key of :data:`DATASETS`.

    Returns:
        Its specification.

    Raises:
        ConfigError: For an unknown name.
    """
    try:
        return DATASETS[name]
    except KeyError:
        raise ConfigError(
            f"unknown dataset {name!r}: expected one of {', '.join(sorted(DATASETS))}"
        ) from None


def sample_data_dir() -> Path:
    """Return the directory of the bundled sample corpus (``train.txt``, ``dev.txt``, ``test.txt``).

    Returns:
        The directory inside the installed package.
    """
    return Path(__file__).resolve().parent / "sample"


def default_data_dir(name: str) -> Path | None:
    """Return the default directory of a data set.

    Args:
        name: Registry name.

    Returns:
        The sample directory for ``sample``; ``$DOCGRAPH_DATA_DIR/<folder>`` when the variable is
        set (``conll03`` lives in ``conll2003``); otherwise ``None``.

    Raises:
        ConfigError: For an unknown name.
    """
    spec = get_spec(name)
    if spec.bundled:
        return sample_data_dir()
    root = os.environ.get(ENV_VAR)
    return Path(root) / spec.shared_name if root else None


def split_off_dev(documents: Sequence[Document], fraction: float, seed: int
                  ) -> tuple[list[Document], list[Document]]:
    """``(train, dev)``: ``round(fraction * len(documents))`` documents (at least one, and
    at least one left to train on), drawn by a generator seeded with ``seed`` alone, as dev;
    both in their original order.

    Raises:
        DataDirError: Fewer than two documents, or a fraction outside ``(0, 1)``.
    """
    if not 0 < fraction < 1:
        raise DataDirError(f"dev fraction {fraction}: expected a share between 0 and 1")
    if len(documents) < 2:
        raise DataDirError(f"{len(documents)} training document(s): a dev split needs at "
                           "least two (one to train on, one to hold out)")
    size = min(max(1, round(fraction * len(documents))), len(documents) - 1)
    order = list(range(len(documents)))
    random.Random(f"dev-fraction:{seed}").shuffle(order)
    held = set(order[:size])
    return ([d for i, d in enumerate(documents) if i not in held],
            [d for i, d in enumerate(documents) if i in held])


def load_dataset(
    name: str,
    data_dir: str | Path | None = None,
    splits: Sequence[str] = ("train", "dev", "test"),
) -> dict[str, list[Document]]:
    """Load the splits of a named data set.

    Args:
        name: ``"conll03"``, ``"ontonotes"``, ``"sample"`` or ``"column"``.
        data_dir: Directory holding the split files; defaults to :func:`default_data_dir`.
            Ignored for ``sample``.
        splits: Which of ``train``, ``dev``, ``test`` to read.

    Returns:
        Split name -> documents (IOB2 tags).

    Raises:
        ConfigError: For an unknown data set or split.
        DataDirError: No data directory is given or known.
        DataNotFoundError: If a split file is missing (the message names the expected files).
        CorpusFormatError: If a file is malformed.
    """
    spec = get_spec(name)
    files = dataset_files(name, data_dir, splits)
    out: dict[str, list[Document]] = {}
    for split, path in files.items():
        start = time.perf_counter()
        out[split] = spec.reader(path)
        log.info("read %s %s from %s: %d documents, %s tokens (%.1f s)", name, split, path,
                 len(out[split]), f"{sum(d.num_tokens for d in out[split]):,}",
                 time.perf_counter() - start)
    return out


def resolve_data_dir(
    name: str, data_dir: str | Path | None = None, split: str = "train"
) -> Path:
    """The directory holding the split files of a named data set.

    ``data_dir`` may be the data set's own folder (holding ``train.txt`` ... for ``conll03``)
    or the corpus root above it (holding ``conll2003/``, the folder name of
    :attr:`DatasetSpec.shared_name`): the first of the two that holds ``split`` is taken.
    ``None`` means :func:`default_data_dir` (``$DOCGRAPH_DATA_DIR/<folder>``, or the bundled
    sample).

    Raises:
        ConfigError: For an unknown data set.
        DataDirError: No directory given nor set in the environment.
        DataNotFoundError: The directory does not exist, or neither it nor its
            ``shared_name`` folder holds ``split`` (the message names every path tried).
    """
    spec = get_spec(name)
    if spec.bundled or data_dir is None:
        resolved = default_data_dir(name)
        if resolved is None:
            raise DataDirError(
                f"no data directory for {name!r}: pass --data-dir DIR (data_dir= from Python) "
                f"or set {ENV_VAR} "
                f"(expected {ENV_VAR}/{spec.shared_name}). {spec.description}"
            )
        candidates = [resolved]
    else:
        resolved = Path(data_dir)
        candidates = [resolved]
        if resolved.name != spec.shared_name and (resolved / spec.shared_name).is_dir():
            candidates.append(resolved / spec.shared_name)
    if not resolved.is_dir():
        raise DataNotFoundError(f"data directory {resolved} for {name!r} does not exist")
    errors = []
    for candidate in candidates:
        try:
            spec.resolve(candidate, split)
            return candidate
        except DataNotFoundError as err:
            errors.append(err)
    if len(candidates) == 1 and not spec.bundled and data_dir is not None:
        raise DataNotFoundError(
            f"{errors[0]} (--data-dir may be the {spec.shared_name}/ folder itself or the "
            f"folder holding it; there is no {resolved / spec.shared_name})")
    raise DataNotFoundError("; ".join(str(e) for e in errors))


def dataset_files(
    name: str,
    data_dir: str | Path | None = None,
    splits: Sequence[str] = ("train", "dev", "test"),
) -> dict[str, Path]:
    """The file (or directory) of every split of a named data set, checked to exist but not
    read: what :func:`load_dataset` reads, with the same errors.

    Raises:
        ConfigError: For an unknown data set or split.
        DataDirError: No data directory is given or known.
        DataNotFoundError: If a split file is missing.
    """
    spec = get_spec(name)
    for split in splits:
        if split not in ("train", "dev", "test"):
            raise ConfigError(f"unknown split {split!r}: expected train, dev or test")
    if not splits:
        return {}
    resolved = resolve_data_dir(name, data_dir, splits[0])
    return {split: spec.resolve(resolved, split) for split in splits}


# ------------------------------------------------------------------ a run's own files
#: The configuration field of each split's file of one's own (``--train``, ``--dev``,
#: ``--test``).
SPLIT_FILES = {"train": "train_file", "dev": "dev_file", "test": "test_file"}

_SPLIT_FLAGS = {"train": "--train", "dev": "--dev", "test": "--test"}


class RunCorpus(Protocol):
    """What the corpus functions read of a run's configuration
    (:class:`~docgraph.config.ExperimentConfig`)."""

    dataset: str
    data_dir: str | None
    train_file: str | None
    dev_file: str | None
    test_file: str | None
    dev_fraction: float
    seed: int

    @property
    def file_splits(self) -> tuple[str, ...]: ...


def check_labelled_file(path: str | Path, flag: str | None = None) -> Path:
    """A labelled file of one's own, checked to exist and to be of a format
    :func:`read_labelled` reads (not read). A suffix of :data:`COLUMN_SUFFIXES` names the
    format; a file of another suffix is taken when its head is span JSON lines or CoNLL
    columns (:func:`~docgraph.data.conll.looks_like_conll`).

    Raises:
        DataNotFoundError: It does not exist, or is a directory.
        CorpusFormatError: It is of none of those formats.
    """
    path = Path(path)
    where = f"{flag} {path}" if flag else str(path)
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "file not found"
        raise DataNotFoundError(f"{where}: {what}; expected a labelled file: "
                                f"{LABELLED_FORMATS}")
    if is_docbin(path):
        check_spacy(path)
    if path.suffix.lower() in COLUMN_SUFFIXES:
        return path
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError as err:
        raise CorpusFormatError(f"{path}: cannot read the file ({err.strerror})") from None
    if "\0" not in head and (looks_like_span_jsonl(head) or looks_like_conll(head)):
        return path
    suffix = f"suffix {path.suffix!r}" if path.suffix else "no suffix"
    raise format_error(path, 1, f"unknown format ({suffix}, and the file is neither span JSON "
                                f"lines nor CoNLL columns): expected {LABELLED_FORMATS}")


def corpus_files(config: RunCorpus) -> dict[str, Path]:
    """The file of every split a run reads from files (:attr:`file_splits`): its
    ``train_file``, ``dev_file`` and ``test_file`` when it has a ``train_file``
    (:func:`check_labelled_file`), else those of its data set (:func:`dataset_files`).
    Checked to exist, not read.

    Raises:
        ConfigError: A ``dev_file`` or ``test_file`` without a ``train_file``; a
            ``train_file`` with a ``data_dir``, with both a ``dev_file`` and a
            ``dev_fraction``, or with neither.
        DataNotFoundError: A file is missing.
        CorpusFormatError: A file is of no format a run reads.
        DataDirError: No data directory is given or known for the data set.
    """
    if config.train_file is None:
        extra = [_SPLIT_FLAGS[s] for s in ("dev", "test") if getattr(config, SPLIT_FILES[s])]
        if extra:
            raise ConfigError(f"{extra[0]} (the {SPLIT_FILES[extra[0][2:]]} setting) needs "
                              "--train FILE: the files of one's own go together")
        return dataset_files(config.dataset, config.data_dir, config.file_splits)
    if config.data_dir is not None:
        raise ConfigError("--train and --data-dir cannot be combined: --train, --dev and "
                          "--test name the corpus's files")
    if config.dev_file is not None and config.dev_fraction > 0:
        raise ConfigError(f"--dev and --dev-fraction {config.dev_fraction:g} cannot be "
                          "combined: the dev split is the file, or a share of the training "
                          "documents")
    if config.dev_file is None and config.dev_fraction <= 0:
        raise ConfigError("--train needs a dev split: --dev FILE, or --dev-fraction X to "
                          "hold out a seeded share X of the training documents as dev")
    return {split: check_labelled_file(getattr(config, SPLIT_FILES[split]), _SPLIT_FLAGS[split])
            for split in config.file_splits}


def load_corpus(config: RunCorpus) -> dict[str, list[Document]]:
    """The splits a run reads from files (:func:`corpus_files`), read: its own files by
    :func:`read_labelled`, else its data set's (:func:`load_dataset`). ``dev_fraction`` is
    not applied here (:func:`split_off_dev`).

    Raises:
        ConfigError, DataNotFoundError, DataDirError: As :func:`corpus_files`.
        CorpusFormatError: A file is malformed (naming the file, the line and the span).
    """
    if config.train_file is None:
        corpus_files(config)  # a stray dev_file or test_file
        return load_dataset(config.dataset, config.data_dir, splits=config.file_splits)
    out: dict[str, list[Document]] = {}
    for split, path in corpus_files(config).items():
        start = time.perf_counter()
        out[split] = read_labelled(path)
        log.info("read %s from %s: %d documents, %s tokens (%.1f s)", split, path,
                 len(out[split]), f"{sum(d.num_tokens for d in out[split]):,}",
                 time.perf_counter() - start)
    return out


def check_corpus(config: RunCorpus) -> None:
    """Read a run's own files whole before any training (:func:`load_corpus`), so that a
    malformed line, a span off the token boundaries or overlapping spans stop it at once,
    and hold out its dev documents when ``dev_fraction`` asks (:func:`split_off_dev`: enough
    training documents). A run on a data set is only checked to have its files.

    Raises:
        ConfigError, DataNotFoundError, DataDirError, CorpusFormatError: As
            :func:`load_corpus`; DataDirError also for too few documents to hold out dev.
    """
    if config.train_file is None:
        corpus_files(config)
        return
    splits = load_corpus(config)
    if config.dev_fraction > 0:
        try:
            split_off_dev(splits["train"], config.dev_fraction, config.seed)
        except DataDirError as err:
            raise DataDirError(f"{config.train_file}: {err}") from None


def located_corpus(config: T) -> T:
    """``config`` with where its corpus is made absolute, as a run records it (so that
    ``evaluate.py`` finds it again): its own files, else the directory of a data set that is
    not bundled (:func:`resolve_data_dir`)."""
    if config.train_file is not None:
        return replace(config, **{key: str(Path(value).resolve())
                                  for key in SPLIT_FILES.values()
                                  if (value := getattr(config, key)) is not None})
    if get_spec(config.dataset).bundled:
        return config
    return replace(config, data_dir=str(resolve_data_dir(config.dataset,
                                                         config.data_dir).resolve()))


def run_split_file(saved: Mapping[str, Any], split: str) -> Path | None:
    """The file of ``split`` of a run trained on files of its own, from its saved
    configuration (``config.json``); ``None`` for a run on a data set.

    Raises:
        DataNotFoundError: The run was trained on files but had no file for ``split`` (its
            dev split held out by ``dev_fraction``, or no test file).
    """
    if saved.get("train_file") is None:
        return None
    value = saved.get(SPLIT_FILES.get(split, ""))
    if value is None:
        raise DataNotFoundError(f"the model was trained on {saved['train_file']} without a "
                                f"{split} file: give --data FILE")
    return Path(value)
