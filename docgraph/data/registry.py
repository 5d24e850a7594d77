"""Named data sets: where their files are and which reader loads them."""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from docgraph.config.fields import ConfigError
from docgraph.data.conll import read_conll
from docgraph.data.document import Document
from docgraph.data.errors import DataDirError, DataNotFoundError
from docgraph.data.ontonotes import read_ontonotes
from docgraph.data.span_jsonl import read_span_jsonl

ENV_VAR = "DOCGRAPH_DATA_DIR"

log = logging.getLogger(__name__)

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


#: The file names a ``column`` corpus's split may have: ``<split><suffix>``. Other files in
#: the folder (``test.txt.bak``, ``notes.md``) are not the corpus's and are left alone.
COLUMN_SUFFIXES = (".bio", ".bioes", ".conll", ".conllx", ".iob", ".iob1", ".iob2", ".tsv", ".txt",
                   ".jsonl")


def _column_file(data_dir: Path, split: str) -> Path:
    found = [data_dir / f"{split}{suffix}" for suffix in COLUMN_SUFFIXES
             if (data_dir / f"{split}{suffix}").is_file()]
    if not found:
        raise DataNotFoundError(
            f"no {split} data in {data_dir}: expected a CoNLL column file named {split}"
            f"{{{','.join(s for s in COLUMN_SUFFIXES if s != '.jsonl')}}} "
            f"(or span JSON lines, {split}.jsonl)"
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


def read_labelled(path: str | Path) -> list[Document]:
    """Read a labelled file: span JSON lines (:func:`~docgraph.data.span_jsonl.read_span_jsonl`)
    when its name ends in ``.jsonl``, else CoNLL columns (scheme auto-detected)."""
    path = Path(path)
    return read_span_jsonl(path) if path.suffix.lower() == ".jsonl" else read_conll(path)


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
        "column", "generic CoNLL column files train.*, dev.*, test.* (scheme auto-detected) "
                  "or span JSON lines train.jsonl, ... (doccano, Prodigy, Label Studio)",
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
