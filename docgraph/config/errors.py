"""The base class of every error docgraph raises on purpose; torch-free."""

from __future__ import annotations

__all__ = ["DocgraphError"]


class DocgraphError(Exception):
    """An error of docgraph's own: bad input, a damaged file, a run that cannot go on.

    Every such error is one of these *and* of the built-in kind it always was
    (``ValueError``, ``OSError``, ``RuntimeError``, ...), so ``except DocgraphError`` catches
    them all and older ``except ValueError`` clauses still work. ``str()`` is a one-line
    message that names the argument, file or process it is about.
    """
