"""The tagging service's Prometheus metrics (``GET /metrics``), one registry per app."""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)

__all__ = ["ENDPOINTS", "ServiceMetrics"]

#: The paths counted by name; any other is counted as ``"other"`` (a bounded label set).
ENDPOINTS = ("/v1/entities", "/v1/model", "/health", "/ready", "/metrics", "/openapi.json",
             "/docs")

_LATENCY = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_DOCUMENTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
_TOKENS = (16, 64, 256, 1024, 2048, 4096, 8192, 16384, 65536)

disable_created_metrics()  # the *_created series only repeat the start time


class ServiceMetrics:
    """Requests by endpoint and status, their latency, the passes' sizes, the queue, the
    tokens tagged and the workers."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("docgraph_requests", "HTTP requests answered, by endpoint "
                                "and status", ["endpoint", "status"], registry=r)
        self.latency = Histogram("docgraph_request_seconds", "Time from a request's arrival "
                                 "to its answer, by endpoint", ["endpoint"], buckets=_LATENCY,
                                 registry=r)
        self.in_flight = Gauge("docgraph_requests_in_flight", "Requests being answered",
                               registry=r)
        self.pass_documents = Histogram("docgraph_batch_documents", "Documents per tagging "
                                        "pass", buckets=_DOCUMENTS, registry=r)
        self.pass_tokens = Histogram("docgraph_batch_tokens", "Estimated tokens per tagging "
                                     "pass", buckets=_TOKENS, registry=r)
        self.queue = Gauge("docgraph_queue_documents", "Documents waiting for a pass",
                           registry=r)
        self.tokens = Counter("docgraph_tokens", "Tokens tagged", registry=r)
        self.documents = Counter("docgraph_documents", "Documents tagged", registry=r)
        self.dropped = Counter("docgraph_dropped_documents", "Documents taken out of the queue "
                               "untagged, by reason", ["reason"], registry=r)
        self.workers_ready = Gauge("docgraph_workers_ready", "Model workers loaded and warmed",
                                   registry=r)
        self.worker_restarts = Counter("docgraph_worker_restarts", "Model workers replaced "
                                       "after they ended", registry=r)

    def endpoint(self, path: str) -> str:
        """The label of a request's path."""
        return path if path in ENDPOINTS else "other"

    def text(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)
