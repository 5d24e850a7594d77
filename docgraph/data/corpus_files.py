"""The files of a corpus named on a command line: files, folders and globs."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from glob import glob, has_magic
from pathlib import Path

from docgraph.config.fields import UsageError

__all__ = ["corpus_inputs"]


def corpus_inputs(patterns: Sequence[str | Path]) -> list[Path]:
    """The input files named by ``patterns``: files, folders (every file under it but hidden
    ones, recursively) and globs (``**`` included), absolute, sorted, each once.

    Raises:
        UsageError: A pattern names nothing, or no file at all is found.
    """
    found: set[Path] = set()
    for pattern in patterns:
        text = str(pattern)
        path = Path(text).expanduser()
        if has_magic(text):
            matches = [Path(p) for p in glob(str(path), recursive=True)]
        elif path.exists():
            matches = [path]
        else:
            raise UsageError("no such file or directory", None, text)
        files = [f for m in matches for f in (_files_under(m) if m.is_dir() else [m])
                 if f.is_file()]
        if not files:
            raise UsageError("matches no file", None, text)
        found.update(f.absolute() for f in files)
    return sorted(found)


def _files_under(directory: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        yield from (Path(root) / f for f in sorted(files) if not f.startswith("."))
