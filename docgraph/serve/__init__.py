"""The tagging service (``docgraph serve``): an HTTP API over the one tagging core, with the
documents of concurrent requests packed into shared passes. It needs the ``serve`` extra
(``pip install "docgraph[serve]"``); importing this package loads none of it until
:func:`create_app` or :func:`run` is used.

Example::

    from docgraph.config.serve import ServeConfig
    from docgraph.serve import run

    run(ServeConfig(model="conll03", port=8000))   # until SIGTERM or Ctrl-C
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docgraph.serve.app import create_app
    from docgraph.serve.server import run

__all__ = ["create_app", "run"]

_HOMES = {"create_app": "docgraph.serve.app", "run": "docgraph.serve.server"}


def __getattr__(name: str) -> Any:
    # the app imports FastAPI and uvicorn (the serve extra): on first use (PEP 562)
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'docgraph.serve' has no attribute {name!r}")
