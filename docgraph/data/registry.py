"""Named data sets: where their files are and which reader loads them."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from docgraph.data.conll import read_conll
from docgraph.data.document import Document
from docgraph.data.errors import DataNotFoundError
from docgraph.data.ontonotes import read_ontonotes

ENV_VAR = "DOCGRAPH_DATA_DIR"

Resolver = Callable[[Path, str], Path]


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


def _column_file(data_dir: Path, split: str) -> Path:
    found = sorted(p for p in data_dir.glob(f"{split}.*") if p.is_file())
    if not found:
        raise DataNotFoundError(
            f"no {split} data in {data_dir}: expected a CoNLL column file named {split}.*"
        )
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise ValueError(f"several {split} files in {data_dir} ({names}): expected exactly one")
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
        "column", "generic CoNLL column files train.*, dev.*, test.* (scheme auto-detected)",
        _column_file, _read_auto, "column",
    ),
}


def get_spec(name: str) -> DatasetSpec:
    """Look up a data set by name.

    Args:
        name: A key of :data:`DATASETS`.

    Returns:
        Its specification.

    Raises:
        ValueError: For an unknown name.
    """
    try:
        return DATASETS[name]
    except KeyError:
        raise ValueError(
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
        ValueError: For an unknown name.
    """
    spec = get_spec(name)
    if spec.bundled:
        return sample_data_dir()
    root = os.environ.get(ENV_VAR)
    return Path(root) / spec.shared_name if root else None


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
        ValueError: For an unknown data set or split, or a missing data directory.
        DataNotFoundError: If a split file is missing (the message names the expected files).
        CorpusFormatError: If a file is malformed.
    """
    spec = get_spec(name)
    files = dataset_files(name, data_dir, splits)
    return {split: spec.reader(path) for split, path in files.items()}


def dataset_files(
    name: str,
    data_dir: str | Path | None = None,
    splits: Sequence[str] = ("train", "dev", "test"),
) -> dict[str, Path]:
    """The file (or directory) of every split of a named data set, checked to exist but not
    read: what :func:`load_dataset` reads, with the same errors.

    Raises:
        ValueError: For an unknown data set or split, or a missing data directory.
        DataNotFoundError: If a split file is missing.
    """
    spec = get_spec(name)
    for split in splits:
        if split not in ("train", "dev", "test"):
            raise ValueError(f"unknown split {split!r}: expected train, dev or test")
    if spec.bundled or data_dir is None:
        resolved = default_data_dir(name)
        if resolved is None:
            raise ValueError(
                f"no data directory for {name!r}: pass --data-dir DIR (data_dir= from Python) "
                f"or set {ENV_VAR} "
                f"(expected {ENV_VAR}/{spec.shared_name}). {spec.description}"
            )
    else:
        resolved = Path(data_dir)
    if not resolved.is_dir():
        raise DataNotFoundError(f"data directory {resolved} for {name!r} does not exist")
    return {split: spec.resolve(resolved, split) for split in splits}
