"""``docgraph serve``: the tagging service over HTTP (:mod:`docgraph.serve`).

The flags are made from :class:`~docgraph.config.serve.ServeConfig`'s declarations; the model,
the API key file and the ``serve`` extra are checked before anything loads, each a one-line
error.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

from docgraph import serve
from docgraph.cli.arguments import OneLineParser, add_setting_flag, fail, setup_logging
from docgraph.config.errors import DocgraphError
from docgraph.config.fields import settings_of
from docgraph.config.serve import ServeConfig
from docgraph.persistence.shipped import resolve_model
from docgraph.serve.auth import read_api_key

__all__ = ["check_serve_arguments", "serve_main", "serve_parser"]

#: What the service needs beyond the library (the ``serve`` extra).
EXTRA_MODULES = ("fastapi", "uvicorn", "prometheus_client")


def serve_parser() -> argparse.ArgumentParser:
    """The parser of ``docgraph serve``, one flag per field of
    :class:`~docgraph.config.serve.ServeConfig`."""
    p = OneLineParser(
        prog="docgraph serve",
        description="Serve a model's entities over HTTP: POST /v1/entities, GET /v1/model, "
                    "/health, /ready, /metrics and the OpenAPI schema (/docs). Documents of "
                    "concurrent requests are tagged together in shared passes. Stops "
                    "gracefully on SIGTERM or Ctrl-C. See docs/serve.md.")
    defaults = ServeConfig()
    for name, setting in settings_of(ServeConfig):
        add_setting_flag(p, name, setting, getattr(defaults, name), required=name == "model")
    return p


def check_serve_arguments(args: argparse.Namespace) -> ServeConfig:
    """The service's settings from the parsed flags, once the model is found, the API key
    file read and the ``serve`` extra installed.

    Raises:
        DocgraphError: A bad value, naming its flag.
        ValueError: The API key file cannot be read or holds no token.
    """
    missing = [name for name in EXTRA_MODULES if not _importable(name)]
    if missing:
        raise ValueError(f"docgraph serve needs the serve extra ({', '.join(missing)} not "
                         "installed): pip install \"docgraph[serve]\"")
    config = ServeConfig(**{name: getattr(args, name) for name, _ in settings_of(ServeConfig)})
    try:
        resolve_model(config.model)
    except DocgraphError as err:
        raise ValueError(f"--model {err}") from None
    if config.api_key_file is not None:
        read_api_key(config.api_key_file)
    return config


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def serve_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``docgraph serve``: the exit status (0 after SIGTERM or Ctrl-C, 1 when
    the model could not be loaded, 2 for a bad argument)."""
    args = serve_parser().parse_args(argv)
    try:
        config = check_serve_arguments(args)
    except (DocgraphError, ValueError) as err:
        fail(str(err))
    setup_logging()
    return serve.run(config)
