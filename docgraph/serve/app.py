"""The tagging service's HTTP interface: a FastAPI app over the batcher and the model workers.

Endpoints: ``POST /v1/entities`` (the entities of a text, of a list of texts or of tokenised
documents, each as ``predict.py`` writes it), ``GET /v1/model``, ``GET /health``,
``GET /ready``, ``GET /metrics`` (Prometheus text) and the OpenAPI schema
(``/openapi.json``, ``/docs``). Errors are ``{"error": message}`` (with ``"field"`` for a bad
request field), never a stack trace.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr
from starlette.exceptions import HTTPException
from starlette.responses import Response

from docgraph.config.errors import DocgraphError
from docgraph.config.serve import ServeConfig
from docgraph.serve.auth import bearer_matches, read_api_key
from docgraph.serve.batcher import (
    Batcher,
    Job,
    PassDocument,
    QueueFullError,
    estimated_tokens,
)
from docgraph.serve.metrics import ServiceMetrics
from docgraph.serve.pool import TaggingFailedError, WorkerLostError, WorkerPool

__all__ = ["EntitiesRequest", "EntitiesResponse", "create_app"]

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]],
                    Callable[[Message], Awaitable[None]]], Awaitable[None]]

#: Seconds a client is asked to wait before it tries again (``Retry-After``).
_RETRY_FULL, _RETRY_LOADING, _RETRY_LOST = 1, 5, 1


class EntitiesRequest(BaseModel):
    """What to tag: exactly one of ``text``, ``texts`` and ``tokens``."""

    model_config = ConfigDict(extra="forbid")

    text: StrictStr | None = Field(None, description="one document of raw text")
    texts: list[StrictStr] | None = Field(None, description="documents of raw text")
    tokens: list[list[list[StrictStr]]] | None = Field(
        None, description="tokenised documents: per document, its sentences as token lists")
    ids: list[StrictStr] | None = Field(
        None, description="an id per document (default: doc-0, doc-1, ...)")
    scores: StrictBool = Field(False, description="give each entity its probability")
    min_score: float | None = Field(None, ge=0.0, le=1.0, description="keep only the "
                                    "entities scored at least this (implies scores)")
    types: list[StrictStr] | None = Field(None, description="keep only these entity types")


class EntityRecord(BaseModel):
    """An entity, as a line of ``predict.py``'s JSON lines."""

    doc: str
    sentence: int
    start: int
    end: int
    type: str
    text: str
    start_char: int | None
    end_char: int | None
    score: float | None = Field(None, description="present when scores were asked for")


class DocumentEntities(BaseModel):
    """A tagged document: its id, its number of tokens and its entities."""

    id: str
    tokens: int
    entities: list[EntityRecord]


class EntitiesResponse(BaseModel):
    """The entities of every document of a request, in order."""

    model: str
    documents: list[DocumentEntities]


class _BadRequestError(DocgraphError, ValueError):
    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


def _error(status: int, message: str, field: str | None = None,
           headers: dict[str, str] | None = None) -> Response:
    body: dict[str, Any] = {"error": message}
    if field is not None:
        body["field"] = field
    return Response(json.dumps(body), status, headers=headers, media_type="application/json")


def _field_name(loc: tuple) -> str:
    """``("body", "texts", 3)`` -> ``texts[3]``."""
    parts = [p for p in loc if p != "body"]
    name = ""
    for part in parts:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or "body"


class _Service:
    """What the endpoints share: the settings, the workers, the batcher and the metrics."""

    def __init__(self, config: ServeConfig, on_fatal: Callable[[str], None]) -> None:
        self.config = config
        self.metrics = ServiceMetrics()
        self.api_key = read_api_key(config.api_key_file) if config.api_key_file else None
        self.card: dict[str, Any] | None = None
        self.fatal: str | None = None
        self._on_fatal = on_fatal
        self.pool = WorkerPool(config, self._ready, self.metrics.worker_restarts.inc,
                               self._failed)
        self.batcher = Batcher(self.pool, config.max_batch_tokens, config.max_wait_ms / 1000,
                               config.max_queue, self._pass, config.balance_wait_ms / 1000)

    def _ready(self, card: dict) -> None:
        self.card = card

    def _failed(self, message: str) -> None:
        self.fatal = message
        log.error("the model could not be loaded: %s", message)
        self._on_fatal(message)

    def _pass(self, documents: int, tokens: int) -> None:
        self.metrics.pass_documents.observe(documents)
        self.metrics.pass_tokens.observe(tokens)

    @property
    def ready(self) -> bool:
        return self.card is not None and self.pool.ready > 0


def _body_limit(app: ASGIApp, limit: int) -> ASGIApp:
    """Read a request's body whole before the app sees it, answering 413 as soon as it is
    longer than ``limit`` bytes (its ``Content-Length`` first)."""

    async def guarded(scope: Scope, receive: Callable[[], Awaitable[Message]],
                      send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            return await app(scope, receive, send)
        too_long = _error(413, f"the body is longer than {limit} bytes")
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            return await too_long(scope, receive, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                return await too_long(scope, receive, send)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return guarded


def _measured(app: ASGIApp, metrics: ServiceMetrics) -> ASGIApp:
    """Count every HTTP request by endpoint and status, and time it."""

    async def measured(scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        endpoint = metrics.endpoint(scope["path"])
        status = "499"  # the client left before an answer
        start = time.perf_counter()

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = str(message["status"])
            await send(message)

        metrics.in_flight.inc()
        try:
            await app(scope, receive, sending)
        except Exception:
            status = "500"
            raise
        finally:
            metrics.in_flight.dec()
            metrics.requests.labels(endpoint, status).inc()
            metrics.latency.labels(endpoint).observe(time.perf_counter() - start)

    return measured


async def _disconnected(request: Request) -> None:
    """Return when the client has gone (its body is read by then)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def create_app(config: ServeConfig, on_fatal: Callable[[str], None] = lambda message: None
               ) -> Any:
    """The ASGI app of the tagging service (FastAPI, wrapped in the body limit and the
    request metrics).

    Args:
        config: The service's settings.
        on_fatal: Called with the reason when the model cannot be loaded (the server stops).

    Raises:
        ValueError: The API key file cannot be read or holds no token.
    """
    service = _Service(config, on_fatal)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        service.pool.start()
        service.batcher.start()
        yield
        await service.batcher.close(lambda: WorkerLostError("the service is stopping"))
        await service.pool.close()

    app = FastAPI(title="docgraph", summary="Named entities of documents (GCDoc)",
                  lifespan=lifespan)
    app.state.service = service

    def authorised(request: Request) -> None:
        if service.api_key is None:
            return
        if not bearer_matches(request.headers.get("authorization"), service.api_key):
            raise HTTPException(401, "a valid bearer token is required",
                                headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, err: RequestValidationError) -> Response:
        first = err.errors()[0]
        if first.get("type") == "json_invalid":
            where = (first.get("ctx") or {}).get("error") or first.get("msg", "")
            return _error(400, f"body: malformed JSON ({where})", "body")
        field = _field_name(tuple(first.get("loc", ())))
        return _error(400, f"{field}: {first.get('msg', 'invalid')}", field)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, err: HTTPException) -> Response:
        return _error(err.status_code, str(err.detail), headers=err.headers)

    @app.exception_handler(Exception)
    async def internal(request: Request, err: Exception) -> Response:
        log.error("%s %s failed", request.method, request.url.path, exc_info=err)
        return _error(500, "internal error")

    @app.get("/health", summary="The process answers")
    async def health() -> dict:
        return {"status": "ok"}

    @app.get("/ready", summary="The model is loaded and warmed",
             responses={503: {"description": "not yet (or no worker left)"}})
    async def ready() -> Response:
        if service.ready:
            return Response(json.dumps({"status": "ready", "workers": service.pool.ready}),
                            media_type="application/json")
        return _error(503, service.fatal or "the model is loading",
                      headers={"Retry-After": str(_RETRY_LOADING)})

    @app.get("/metrics", summary="Prometheus metrics", dependencies=[Depends(authorised)])
    async def metrics() -> Response:
        service.metrics.queue.set(service.batcher.depth)
        service.metrics.workers_ready.set(service.pool.ready)
        return Response(service.metrics.text(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/v1/model", summary="The model: its name, types, settings and scores",
             dependencies=[Depends(authorised)])
    async def model() -> Response:
        if service.card is None:
            return _error(503, "the model is loading",
                          headers={"Retry-After": str(_RETRY_LOADING)})
        return Response(json.dumps(service.card), media_type="application/json")

    @app.post("/v1/entities", summary="The entities of each document",
              dependencies=[Depends(authorised)],
              responses={200: {"model": EntitiesResponse},
                         400: {"description": "a bad field (named)"},
                         401: {"description": "no valid bearer token"},
                         413: {"description": "the body is too long"},
                         503: {"description": "the queue is full, the model is loading "
                                              "or its worker ended (Retry-After)"},
                         504: {"description": "not tagged within --timeout-s"}})
    async def entities(body: EntitiesRequest, request: Request) -> Response:
        if not service.ready:
            return _error(503, service.fatal or "the model is loading",
                          headers={"Retry-After": str(_RETRY_LOADING)})
        try:
            documents = _documents(body, service.card["types"] if service.card else [])
        except _BadRequestError as err:
            return _error(400, str(err), err.field)
        if len(documents) > config.max_queue:
            return _error(413, f"{len(documents)} documents, more than the queue holds "
                               f"({config.max_queue})", "texts")
        loop = asyncio.get_running_loop()
        types = tuple(body.types) if body.types is not None else None
        places = [k for k, (_, content) in enumerate(documents) if _has_words(content)]
        jobs = [Job(PassDocument(*documents[k], body.scores or body.min_score is not None,
                                 body.min_score, types),
                    estimated_tokens(documents[k][1]), loop.create_future()) for k in places]
        try:
            service.batcher.submit(jobs)
        except QueueFullError as err:
            return _error(503, f"the queue is full: {err}",
                          headers={"Retry-After": str(_RETRY_FULL)})
        service.metrics.queue.set(service.batcher.depth)
        found = await _results(request, jobs, service, config.timeout_s)
        if isinstance(found, Response):
            return found
        results: list[tuple[list[dict], int]] = [([], 0)] * len(documents)
        for k, result in zip(places, found):
            results[k] = result
        out = [{"id": doc_id, "tokens": count, "entities": records}
               for (doc_id, _), (records, count) in zip(documents, results)]
        tokens = sum(count for _, count in results)
        service.metrics.tokens.inc(tokens)
        service.metrics.documents.inc(len(documents))
        return Response(json.dumps({"model": config.model, "documents": out}),
                        media_type="application/json")

    return _measured(_body_limit(app, config.max_body_bytes), service.metrics)


async def _results(request: Request, jobs: list[Job], service: _Service, timeout: float
                   ) -> list[Any] | Response:
    """The results of a request's documents, or the error response when the client left, the
    request timed out, a worker ended or tagging failed."""
    if not jobs:
        return []
    gathered = asyncio.gather(*(job.future for job in jobs))
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        done, _ = await asyncio.wait({gathered, gone}, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if gathered not in done:
        reason = "disconnect" if gone in done else "timeout"
        service.metrics.dropped.labels(reason).inc(service.batcher.drop(jobs))
        gathered.cancel()
        await asyncio.gather(gathered, return_exceptions=True)
        return _error(504, f"not tagged within {timeout:g} s")
    try:
        return gathered.result()
    except WorkerLostError:
        return _error(503, "the worker tagging this request ended; try again",
                      headers={"Retry-After": str(_RETRY_LOST)})
    except TaggingFailedError:
        return _error(500, "tagging failed")


def _has_words(content: Any) -> bool:
    """Whether a document has anything to tag (an empty one gets no entities untagged)."""
    if isinstance(content, str):
        return bool(content.strip())
    return any(len(sentence) for sentence in content)


def _documents(body: EntitiesRequest, types: list[str]) -> list[tuple[str, Any]]:
    """The documents of a request with their ids, its fields checked together."""
    given = [name for name in ("text", "texts", "tokens") if getattr(body, name) is not None]
    if len(given) != 1:
        raise _BadRequestError("text", "give exactly one of text, texts and tokens"
                          + (f" (got {', '.join(given)})" if given else ""))
    field = given[0]
    contents = [body.text] if field == "text" else list(getattr(body, field))
    if body.ids is not None:
        if len(body.ids) != len(contents):
            raise _BadRequestError("ids", f"{len(body.ids)} ids for {len(contents)} documents")
        if len(set(body.ids)) != len(body.ids):
            raise _BadRequestError("ids", "the ids are not distinct")
    if body.types is not None:
        for k, name in enumerate(body.types):
            if name not in types:
                raise _BadRequestError(f"types[{k}]", f"{name!r} is not one of the model's types "
                                                 f"({', '.join(types)})")
    ids = body.ids or [f"doc-{k}" for k in range(len(contents))]
    return list(zip(ids, contents))

