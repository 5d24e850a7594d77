"""How many intra-op threads tagging in the caller's process uses.

:class:`~docgraph.tagging.tagger.Tagger` (``tag``, ``predict``, ``evaluate``, ``to_html``),
``scripts/predict.py`` and ``evaluate.py`` in one process, and the spaCy component tag with
:func:`tagging_threads` torch intra-op threads, set for the call and restored afterwards
(:func:`~docgraph.tagging.pipeline.bounded_threads`), so the caller's own setting is left as it
was. The number comes from the ``threads`` argument, else
from ``DOCGRAPH_TAGGING_THREADS``, else :data:`DEFAULT_TAGGING_THREADS`; ``0`` leaves torch's
setting alone. Why one thread: ``docs/design.md``, "Running on the CPU" (measured:
``docs/experiments.md``, "Thread policy of in-process tagging").
"""

from __future__ import annotations

import os

__all__ = ["DEFAULT_TAGGING_THREADS", "THREADS_ENV", "tagging_threads"]

#: Intra-op threads of in-process tagging unless told otherwise.
DEFAULT_TAGGING_THREADS = 1

#: The environment variable that sets the threads of in-process tagging.
THREADS_ENV = "DOCGRAPH_TAGGING_THREADS"


def tagging_threads(threads: int | None = None) -> int:
    """The intra-op threads of in-process tagging: ``threads``, else ``$DOCGRAPH_TAGGING_THREADS``,
    else :data:`DEFAULT_TAGGING_THREADS`; ``0``: torch's setting as it is.

    Raises:
        ValueError: ``threads`` or the variable is not an integer >= 0.
    """
    where = "threads"
    if threads is None:
        value = os.environ.get(THREADS_ENV, "").strip()
        if not value:
            return DEFAULT_TAGGING_THREADS
        where = THREADS_ENV
        try:
            threads = int(value)
        except ValueError:
            raise ValueError(f"{THREADS_ENV}={value!r}: expected an integer >= 0 (0: torch's "
                             "own thread count)") from None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError(f"{where} must be an integer >= 0 (0: torch's own thread count), "
                         f"got {threads!r}")
    return threads
