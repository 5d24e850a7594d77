"""The tagging service's Prometheus metrics: what each family counts, in text format."""

from __future__ import annotations

import pytest

pytest.importorskip("prometheus_client", reason="the serve extra is not installed")

from prometheus_client.parser import text_string_to_metric_families

from docgraph.serve.metrics import ServiceMetrics


def samples(metrics: ServiceMetrics) -> dict[tuple[str, tuple], float]:
    text = metrics.text().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_each_family_counts_what_it_says():
    metrics = ServiceMetrics()
    metrics.requests.labels("/v1/entities", "200").inc()
    metrics.requests.labels("/v1/entities", "200").inc()
    metrics.requests.labels("/v1/entities", "503").inc()
    metrics.latency.labels("/v1/entities").observe(0.02)
    metrics.pass_documents.observe(3)
    metrics.pass_tokens.observe(300)
    metrics.tokens.inc(42)
    metrics.queue.set(7)
    found = samples(metrics)
    ok = (("endpoint", "/v1/entities"), ("status", "200"))
    assert found[("docgraph_requests_total", ok)] == 2
    assert found[("docgraph_requests_total", (("endpoint", "/v1/entities"),
                                              ("status", "503")))] == 1
    assert found[("docgraph_request_seconds_bucket", (("endpoint", "/v1/entities"),
                                                      ("le", "0.01")))] == 0
    assert found[("docgraph_request_seconds_bucket", (("endpoint", "/v1/entities"),
                                                      ("le", "0.025")))] == 1
    assert found[("docgraph_batch_documents_sum", ())] == 3
    assert found[("docgraph_batch_tokens_count", ())] == 1
    assert found[("docgraph_tokens_total", ())] == 42
    assert found[("docgraph_queue_documents", ())] == 7
    assert not any(name.endswith("_created") for name, _ in found)


def test_paths_are_a_bounded_label_set():
    metrics = ServiceMetrics()
    assert metrics.endpoint("/v1/entities") == "/v1/entities"
    assert metrics.endpoint("/v1/entities/../../etc") == "other"
    assert metrics.endpoint("/favicon.ico") == "other"


def test_two_apps_do_not_share_their_counts():
    first, second = ServiceMetrics(), ServiceMetrics()
    first.tokens.inc(5)
    assert samples(second)[("docgraph_tokens_total", ())] == 0
