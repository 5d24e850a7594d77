"""How ``docgraph serve`` runs: the settings of the tagging service and their defaults
(torch-free, fastapi-free).

Each flag of ``docgraph serve`` is a field of :class:`ServeConfig`, declared once
(:mod:`docgraph.config.fields`); the parser, its ``--help`` and the checks of the values are
generated from these declarations.
"""

from __future__ import annotations

from dataclasses import dataclass

from docgraph.config.fields import check_config, choice, integer, number, text
from docgraph.config.tagging import (
    DEFAULT_BATCH_TOKENS,
    DEFAULT_SPEED,
    SPEEDS,
    TAGGING_PRECISIONS,
    consistency_switch,
)

__all__ = ["ServeConfig"]


@dataclass(frozen=True)
class ServeConfig:
    """The settings of the tagging service (``docgraph serve``).

    Attributes:
        model: The model directory, or a shipped model's name.
        host: The address to listen on (loopback unless told otherwise).
        port: The TCP port to listen on.
        workers: Model worker processes, each with the model loaded, fed by one batcher.
        threads: Torch intra-op threads of each worker.
        precision: The arithmetic of tagging (:mod:`docgraph.runtime.precision`).
        speed: ``"faithful"`` or ``"fast"`` (:data:`~docgraph.config.tagging.SPEEDS`; ``None``:
            the model's default, :func:`~docgraph.persistence.speeds.model_speeds`).
        consistency: Label consistency in decoding
            (:data:`~docgraph.config.tagging.LABEL_CONSISTENCY`).
        max_batch_tokens: The most tokens packed into one tagging pass.
        max_wait_ms: How long the first document of a pass waits for others to join it.
        balance_wait_ms: How long the first document of a pass waits for others while the
            pass is smaller than the largest pass under way on another worker (0: no longer
            than ``max_wait_ms``).
        max_queue: The most documents waiting; a request that does not fit is refused (503).
        max_body_bytes: The largest request body (413 above it).
        timeout_s: How long a request may wait for its entities (504 after it).
        api_key_file: A file holding the bearer token every ``/v1`` and ``/metrics`` request
            must carry (``None``: no token).
    """

    model: str = text("conll03", flag="--model", metavar="NAME_OR_DIR",
                      help="model directory or shipped model name")
    host: str = text("127.0.0.1", flag="--host", help="address to listen on")
    port: int = integer(8000, low=0, high=65535, flag="--port",
                        help="TCP port to listen on (0: any free port)")
    workers: int = integer(1, low=1, flag="--workers", metavar="N",
                           help="model worker processes, each with the model loaded")
    threads: int = integer(1, low=1, flag="--threads", metavar="N",
                           help="torch intra-op threads of each worker")
    precision: str | None = choice(None, TAGGING_PRECISIONS, optional=True, flag="--precision",
                                   help="arithmetic of tagging (default: "
                                        "$DOCGRAPH_TAGGING_PRECISION, else auto)")
    speed: str | None = choice(None, tuple(SPEEDS), optional=True, flag="--speed",
                               help="faithful: the trained computation; fast: its "
                                    "approximations for speed (default: the model's, "
                                    f"{DEFAULT_SPEED} unless its directory declares fast)")
    consistency: bool | None = consistency_switch()
    max_batch_tokens: int = integer(DEFAULT_BATCH_TOKENS, low=1, flag="--max-batch-tokens",
                                    metavar="TOKENS",
                                    help="most tokens packed into one tagging pass")
    max_wait_ms: float = number(1.0, low=0.0, flag="--max-wait-ms", metavar="MS",
                                help="how long a pass waits for more documents to join it")
    balance_wait_ms: float = number(10.0, low=0.0, flag="--balance-wait-ms", metavar="MS",
                                    help="how long a pass smaller than the one under way on "
                                         "another worker waits for more documents")
    max_queue: int = integer(1024, low=1, flag="--max-queue", metavar="DOCUMENTS",
                             help="most documents waiting; more are refused with 503")
    max_body_bytes: int = integer(1_000_000, low=1, flag="--max-body-bytes", metavar="BYTES",
                                  help="largest request body; larger ones get 413")
    timeout_s: float = number(30.0, low=0.0, low_open=True, flag="--timeout-s", metavar="SECONDS",
                              help="how long a request may wait for its entities (504 after)")
    api_key_file: str | None = text(None, optional=True, flag="--api-key-file", metavar="FILE",
                                    help="file holding the bearer token requests must carry")

    def __post_init__(self) -> None:
        check_config(self, "")
