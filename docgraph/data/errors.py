"""Exceptions raised by the corpus readers."""

from __future__ import annotations

from docgraph.config.errors import DocgraphError


class CorpusFormatError(DocgraphError, ValueError):
    """A corpus file does not have the expected format.

    The message has the form ``"{path}:{line_no}: {what was expected}"``.
    """


def format_error(path: object, line_no: int, message: str) -> CorpusFormatError:
    """Build a :class:`CorpusFormatError` pointing at one line of a file.

    Args:
        path: The file.
        line_no: 1-based line number (1 when the error concerns the whole file).
        message: What was expected.

    Returns:
        The exception, ready to be raised.
    """
    return CorpusFormatError(f"{path}:{line_no}: {message}")


class DataNotFoundError(DocgraphError, FileNotFoundError, ValueError):
    """A data file or directory is missing; the message says what was expected.

    It is both a :class:`FileNotFoundError` and a :class:`ValueError`, so callers may catch
    either.
    """


class DataDirError(DocgraphError, ValueError):
    """A corpus directory that cannot be read as the corpus asked for (none given or known,
    or several files for one split); the message says what was expected."""
