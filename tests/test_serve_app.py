"""The tagging service end to end: a real ``docgraph serve`` (one worker, the shipped
``conll03``) on 127.0.0.1, its answers compared with the lone results of the tagging core,
and each fault of the HTTP interface. The last test stops the server with SIGINT."""

from __future__ import annotations

import json
import re
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed "
                                      "(pip install 'docgraph[serve]')")
import httpx
from serving import Server

pytestmark = pytest.mark.timeout(900)

SAMPLE = Path(__file__).resolve().parents[1] / "docgraph" / "data" / "sample"
KEY = "s3cret-token"
MAX_QUEUE = 64
MAX_BODY = 200_000


def sentences(name: str) -> list[str]:
    from docgraph.data.conll import read_conll

    return [" ".join(s.tokens) for d in read_conll(SAMPLE / name) for s in d.sentences]


def fifty_texts() -> list[str]:
    """50 different texts of one to four sentences of the sample corpus."""
    pool = sentences("test.txt") + sentences("dev.txt")
    texts = [" ".join(pool[k:k + 1 + k % 4]) for k in range(50)]
    assert len(set(texts)) == 50
    return texts


def long_text(tokens: int) -> str:
    """Sentences of the sample training corpus, about ``tokens`` tokens."""
    out, count = [], 0
    for sentence in sentences("train.txt"):
        out.append(sentence)
        count += len(sentence.split())
        if count >= tokens:
            break
    return " ".join(out)


@pytest.fixture(scope="module")
def tagger():
    from docgraph.tagging.tagger import Tagger

    return Tagger.load("conll03", threads=1)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    (tmp / "key").write_text(KEY + "\n")
    with Server(tmp / "server.log", "--api-key-file", str(tmp / "key"), "--max-queue",
                str(MAX_QUEUE), "--max-body-bytes", str(MAX_BODY), "--max-wait-ms", "20",
                "--timeout-s", "120") as running:
        yield running


def post(server: Server, body, *, key: str | None = KEY, timeout: float = 120
         ) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers["Content-Type"] = "application/json"
    return httpx.post(f"{server.url}/v1/entities", content=content, headers=headers,
                      timeout=timeout)


def metric(server: Server, name: str) -> float:
    """The value of one sample of ``/metrics`` (0 when absent)."""
    text = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {KEY}"},
                     timeout=30).text
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def lone(tagger, document, scores: bool, **filters) -> list[dict]:
    from docgraph.tagging import entity_records

    tagged = next(tagger.pipe([document], scores=scores or "min_score" in filters))
    return entity_records(tagged, scores=scores, **filters)


def assert_same(served: list[dict], expected: list[dict]) -> None:
    """The same records; scores to float32's rounding (a pass's other documents change the
    padding, hence the order of the sums, as they do in ``predict.py``'s batches)."""
    assert [{k: v for k, v in r.items() if k != "score"} for r in served] == [
        {k: v for k, v in r.items() if k != "score"} for r in expected]
    assert [r.get("score", -1.0) for r in served] == pytest.approx(
        [r.get("score", -1.0) for r in expected], rel=1e-5)


def test_fifty_concurrent_texts_each_equal_their_lone_result(server, tagger):
    texts = fifty_texts()
    passes_before = metric(server, "docgraph_batch_documents_count")
    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(lambda t: post(server, {"text": t, "scores": True}), texts))
    assert [a.status_code for a in answers] == [200] * 50
    for text, answer in zip(texts, answers):
        (document,) = answer.json()["documents"]
        assert_same(document["entities"], lone(tagger, text, scores=True))
        assert document["tokens"] == sum(len(s.tokens) for s in next(tagger.pipe([text]))
                                         .sentences)
    assert sum(len(a.json()["documents"][0]["entities"]) for a in answers) > 50
    passes = metric(server, "docgraph_batch_documents_count") - passes_before
    assert passes < 50, "the concurrent requests were not packed into shared passes"


def test_a_list_of_texts_tokens_ids_and_filters_are_those_of_the_core(server, tagger):
    texts = fifty_texts()[:6]
    answer = post(server, {"texts": texts, "ids": [f"t{k}" for k in range(6)]}).json()
    assert [d["id"] for d in answer["documents"]] == [f"t{k}" for k in range(6)]
    for k, (text, document) in enumerate(zip(texts, answer["documents"])):
        expected = [{**r, "doc": f"t{k}"} for r in lone(tagger, text, scores=False)]
        assert document["entities"] == expected
        assert all("score" not in r for r in document["entities"])

    tokens = [[s.split() for s in fifty_texts()[k:k + 2]] for k in range(3)]
    answer = post(server, {"tokens": tokens, "scores": True}).json()
    for k, document in enumerate(answer["documents"]):
        expected = [{**r, "doc": f"doc-{k}"} for r in lone(tagger, tokens[k], scores=True)]
        assert_same(document["entities"], expected)
        assert all(r["start_char"] is None for r in document["entities"])

    text = " ".join(texts)
    filtered = post(server, {"text": text, "min_score": 0.9, "types": ["ORG", "LOC"]}).json()
    expected = lone(tagger, text, scores=True, min_score=0.9, types=["ORG", "LOC"])
    assert_same(filtered["documents"][0]["entities"], expected)
    everything = lone(tagger, text, scores=True)
    assert 0 < len(expected) < len(everything)


def test_empty_documents_give_empty_results(server):
    answer = post(server, {"texts": ["", " \n\t ", "EU rejects German call ."]})
    assert answer.status_code == 200
    documents = answer.json()["documents"]
    assert [d["entities"] for d in documents[:2]] == [[], []]
    assert [d["tokens"] for d in documents] == [0, 0, 5]
    assert documents[2]["entities"]
    assert post(server, {"tokens": [[], [[]]]}).json()["documents"] == [
        {"id": "doc-0", "tokens": 0, "entities": []},
        {"id": "doc-1", "tokens": 0, "entities": []}]


@pytest.mark.parametrize("body, field", [
    (b'{"texts": ["a", ', "body"),
    (b"[1, 2]", "body"),
    ({}, "text"),
    ({"text": "a", "texts": ["b"]}, "text"),
    ({"texts": ["a", 5]}, "texts[1]"),
    ({"tokens": [["a"]]}, "tokens[0][0]"),
    ({"text": "a", "scores": "yes"}, "scores"),
    ({"text": "a", "min_score": 2}, "min_score"),
    ({"text": "a", "types": ["ORG", "FOO"]}, "types[1]"),
    ({"text": "a", "colour": "red"}, "colour"),
    ({"texts": ["a"], "ids": ["x", "y"]}, "ids"),
])
def test_a_bad_request_is_400_naming_the_field(server, body, field):
    answer = post(server, body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == field
    assert answer.json()["error"].startswith(field)
    assert "Traceback" not in answer.text


def test_the_body_limit_is_413_with_or_without_a_length(server):
    body = json.dumps({"text": "word " * (MAX_BODY // 5)}).encode()
    assert len(body) > MAX_BODY
    assert post(server, body).status_code == 413

    def chunks():
        for k in range(0, len(body), 16_384):
            yield body[k:k + 16_384]

    streamed = httpx.post(f"{server.url}/v1/entities", content=chunks(), timeout=60,
                          headers={"Authorization": f"Bearer {KEY}"})
    assert streamed.status_code == 413
    too_many = post(server, {"texts": ["a"] * (MAX_QUEUE + 1)})
    assert too_many.status_code == 413 and too_many.json()["field"] == "texts"
    assert metric(server, 'docgraph_requests_total{endpoint="/v1/entities",status="413"}') == 3


def test_the_bearer_token(server):
    assert post(server, {"text": "a"}, key=None).status_code == 401
    refused = post(server, {"text": "a"}, key=KEY + "x")
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"] == "Bearer"
    assert httpx.get(f"{server.url}/metrics").status_code == 401
    assert httpx.get(f"{server.url}/v1/model").status_code == 401
    assert httpx.get(f"{server.url}/health").status_code == 200
    assert httpx.get(f"{server.url}/ready").status_code == 200


def test_model_metrics_and_openapi(server, tagger):
    model = httpx.get(f"{server.url}/v1/model", headers={"Authorization": f"Bearer {KEY}"})
    card = model.json()
    assert card["name"] == "conll03" and card["types"] == tagger.entity_types
    assert card["graph"] is True and card["threshold"] == tagger.threshold
    schema = httpx.get(f"{server.url}/openapi.json").json()
    assert {"/v1/entities", "/v1/model", "/health", "/ready", "/metrics"} <= set(schema["paths"])
    text = httpx.get(f"{server.url}/metrics",
                     headers={"Authorization": f"Bearer {KEY}"}).text
    for family in ("docgraph_requests_total", "docgraph_request_seconds_bucket",
                   "docgraph_batch_documents_bucket", "docgraph_batch_tokens_bucket",
                   "docgraph_queue_documents", "docgraph_tokens_total",
                   "docgraph_workers_ready 1.0"):
        assert family in text
    assert metric(server, 'docgraph_requests_total{endpoint="/v1/entities",status="200"}') > 0
    assert metric(server, "docgraph_tokens_total") > 0


def test_a_full_queue_is_503_with_retry_after(server):
    answers: dict[str, httpx.Response] = {}
    with server.frozen():
        passes = metric(server, "docgraph_batch_documents_count")
        first = threading.Thread(target=lambda: answers.update(first=post(server, {"text": "a"})))
        first.start()  # taken by the (stopped) worker: the queue is free again
        wait_for(lambda: metric(server, "docgraph_batch_documents_count") > passes)
        waiting = threading.Thread(target=lambda: answers.update(
            waiting=post(server, {"texts": fifty_texts()[:40]})))
        waiting.start()
        wait_for(lambda: metric(server, "docgraph_queue_documents") == 40)
        refused = post(server, {"texts": fifty_texts()[:30]})
        assert refused.status_code == 503
        assert refused.headers["Retry-After"] == "1"
        assert "queue is full" in refused.json()["error"]
        assert post(server, {"texts": fifty_texts()[:25]}).status_code == 503  # 65 > 64
    first.join(120)
    waiting.join(120)
    assert answers["first"].status_code == answers["waiting"].status_code == 200
    assert len(answers["waiting"].json()["documents"]) == 40


def test_a_client_that_disconnects_frees_its_documents(server):
    dropped = metric(server, 'docgraph_dropped_documents_total{reason="disconnect"}')
    body = json.dumps({"texts": fifty_texts()[:20]}).encode()
    with server.frozen():
        passes = metric(server, "docgraph_batch_documents_count")
        first = threading.Thread(target=post, args=(server, {"text": "a"}))
        first.start()
        wait_for(lambda: metric(server, "docgraph_batch_documents_count") > passes)
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(b"POST /v1/entities HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: application/json\r\n"
                         + f"Authorization: Bearer {KEY}\r\nContent-Length: {len(body)}\r\n"
                         "\r\n".encode() + body)
            wait_for(lambda: metric(server, "docgraph_queue_documents") == 20)
        wait_for(lambda: metric(server, 'docgraph_dropped_documents_total{reason="disconnect"}')
                 == dropped + 20)
        assert metric(server, "docgraph_queue_documents") == 0
        tagged = metric(server, "docgraph_batch_documents_sum")
    first.join(120)
    assert metric(server, "docgraph_batch_documents_sum") == tagged  # none of the 20 tagged


def test_a_server_without_consistency_answers_as_the_core_without_it(tmp_path):
    """``docgraph serve --no-consistency`` tags as ``Tagger.load(..., consistency=False)``
    does; on the biography of invented names that differs from ``conll03``'s default, label
    consistency in decoding."""
    from docgraph.tagging.tagger import Tagger

    text = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "data"
                       / "novel-names" / "biography.jsonl").read_text(encoding="utf-8"))["text"]
    consistent = lone(Tagger.load("conll03", threads=1), text, scores=True)
    plain = lone(Tagger.load("conll03", threads=1, consistency=False), text, scores=True)
    assert [r["type"] for r in consistent] != [r["type"] for r in plain]
    with Server(tmp_path / "server.log", "--no-consistency") as running:
        answer = post(running, {"text": text, "scores": True}, key=None)
    assert answer.status_code == 200
    assert_same(answer.json()["documents"][0]["entities"], plain)


def test_sigint_finishes_what_is_in_flight_then_exits_0(server):
    answers: dict[str, httpx.Response] = {}
    with server.frozen():
        passes = metric(server, "docgraph_batch_documents_count")
        thread = threading.Thread(target=lambda: answers.update(
            long=post(server, {"text": long_text(300)})))
        thread.start()
        wait_for(lambda: metric(server, "docgraph_batch_documents_count") > passes)
        server.process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert thread.is_alive()  # the pass is still under way
    thread.join(120)
    assert answers["long"].status_code == 200
    assert answers["long"].json()["documents"][0]["entities"]
    assert server.process.wait(60) == 0
    assert "Traceback" not in server.output()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/health")
