"""Run the tagging service under uvicorn until SIGTERM or SIGINT.

On either signal uvicorn stops accepting connections, lets the requests in flight finish
(their passes too), then the app stops its workers; the process exits 0. A model that cannot
be loaded stops the server with exit status 1.
"""

from __future__ import annotations

import logging
import signal

import uvicorn

from docgraph.config.serve import ServeConfig
from docgraph.serve.app import create_app

__all__ = ["run"]

log = logging.getLogger(__name__)

#: Seconds past ``--timeout-s`` that a graceful stop waits for the requests in flight.
_STOP_MARGIN = 5.0


def run(config: ServeConfig) -> int:
    """Serve until SIGTERM or SIGINT; the exit status (0, or 1 when the model could not be
    loaded)."""
    failed: list[str] = []
    server: uvicorn.Server | None = None

    def fatal(message: str) -> None:
        failed.append(message)
        if server is not None:
            server.should_exit = True

    app = create_app(config, on_fatal=fatal)
    server = uvicorn.Server(uvicorn.Config(
        app, host=config.host, port=config.port, lifespan="on", access_log=False,
        timeout_graceful_shutdown=int(config.timeout_s + _STOP_MARGIN), log_level="info"))
    # uvicorn sends a caught signal again once it has stopped, to the handler it found: this
    # one, so that a graceful stop ends with exit status 0 instead of death by the signal.
    previous = {sig: signal.signal(sig, _stopped) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if failed:
        log.error("stopped: %s", failed[0])
        return 1
    return 0


def _stopped(signum: int, frame: object) -> None:
    """A signal that arrives once uvicorn has stopped: nothing left to do."""
