"""The load test of the tagging service (docgraph_dev.serve_load): its texts, the wrk script
it drives (against a stand-in HTTP server on 127.0.0.1) and the targets it checks."""

from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from docgraph_dev.serve_load import (
    load,
    lua_script,
    parse_wrk,
    pass_counts,
    targets,
    texts,
)


def test_the_texts_of_each_kind():
    sentences, paragraphs, long = (texts("sentence", 20), texts("paragraph", 10),
                                   texts("long", 3))
    assert len(set(sentences)) == 20 and len(set(paragraphs)) == 10 and len(set(long)) == 3
    assert all(4 <= len(t.split()) < 80 for t in sentences)
    assert all(len(t.split()) >= 20 for t in paragraphs)
    assert all(1500 <= len(t.split()) < 1700 for t in long)


def test_the_summary_is_read_from_wrks_output():
    line = ('WRKJSON {"requests": 10, "duration_us": 2000000, "connect": 0, "read": 0, '
            '"write": 0, "status": 1, "timeout": 0, "p50_us": 1000, "p95_us": 2000, '
            '"p99_us": 3000, "max_us": 4000}')
    assert parse_wrk(f"Running 2s test\n{line}\n")["p99_us"] == 3000
    with pytest.raises(ValueError, match="no summary"):
        parse_wrk("Running 2s test\n")
    script = lua_script(['{"text": "a"}', '{"text": "b"}'], max_requests=100, threads=2)
    assert '[==[{"text": "a"}]==]' in script and "answered >= 50" in script


class _Counting(BaseHTTPRequestHandler):
    bodies: ClassVar[list[bytes]] = []
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with self.lock:
            self.bodies.append(body)
        status = 503 if b'"c"' in body else 200
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed "
                                                         "(Debian: apt-get install wrk)")
def test_a_bounded_run_against_a_local_server(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        bodies = [json.dumps({"text": t}) for t in ("a", "b", "c")]
        row = load(f"http://127.0.0.1:{server.server_port}", bodies, clients=2, seconds=3,
                   max_requests=60, tokens_per_request=10, work=tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert 60 <= row["requests"] <= 64  # the cap, give or take the requests in flight
    assert row["capped"] is True
    assert 3 <= row["seconds"] < 10
    sent = [json.loads(b)["text"] for b in _Counting.bodies]
    assert set(sent) == {"a", "b", "c"}
    assert row["error_kinds"]["status"] == sent.count("c")  # the 503s count as errors
    assert row["tokens_per_s"] == pytest.approx(
        (row["requests"] - sent.count("c")) * 10 / row["seconds"], rel=0.02)
    assert 0 < row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"] <= row["max_ms"]


def test_the_targets():
    record = {
        "serve": [{"kind": "paragraph", "clients": 32, "tokens_per_s": 900.0, "errors": 0},
                  {"kind": "sentence", "clients": 8, "p99_ms": 310.0, "tokens_per_s": 1.0,
                   "errors": 2}],
        "offline": {"paragraph": {"tokens_per_s": 1000.0}},
        "soak": {"rss_growth": 0.01, "seconds": 600.0}}
    found = targets(record)
    assert found["paragraph_32_clients_over_offline"] == {"share": 0.9, "target": 0.85,
                                                          "met": True}
    assert found["sentence_8_clients_p99_ms"]["met"] is False
    assert found["serve_errors"] == {"errors": 2, "target": 0, "met": False}
    assert found["soak_rss_growth"]["met"] is True


def test_the_table_of_the_docs():
    from docgraph_dev.serve_load import markdown_table

    record = {"tokens_per_text": {"sentence": 14.5, "long": 1510.0},
              "serve": [{"kind": "sentence", "clients": 8, "requests_per_s": 8.64,
                         "tokens_per_s": 1125.6, "p50_ms": 85.2, "p95_ms": 130.0,
                         "p99_ms": 138.2, "errors": 0},
                        {"kind": "long", "clients": 1, "requests_per_s": 1.0,
                         "tokens_per_s": 1510.0, "p50_ms": 900.0, "p95_ms": 950.0,
                         "p99_ms": 990.0, "errors": 1}],
              "naive": [{"kind": "sentence", "clients": 8, "tokens_per_s": 900.4,
                         "p99_ms": 2000.0}],
              "offline": {"sentence": {"tokens_per_s": 1400.0}}}
    assert markdown_table(record).splitlines()[2:] == [
        "| sentence (14 tokens) | 8 | 8.6 | 1,126 | 85 / 130 / 138 | 0 | 900 | 2,000 | 1,400 |",
        "| long (1510 tokens) | 1 | 1.0 | 1,510 | 900 / 950 / 990 | 1 | - | - | - |"]


def test_pass_sizes_tags_every_document_of_each_pass(monkeypatch):
    """The pass-size study counts the tokens its passes tagged: as many passes of each size as
    fit in the documents asked for, each pass of that many different texts."""
    import docgraph.serve.worker as worker
    from docgraph.tagging.tagger import Tagger
    from docgraph_dev.serve_load import pass_sizes

    seen: list[list[str]] = []

    def counting(tagger, documents):
        seen.append([d.content for d in documents])
        return [([], len(d.content.split())) for d in documents]

    monkeypatch.setattr(worker, "tag_pass", counting)
    monkeypatch.setattr(Tagger, "load", classmethod(lambda cls, model, threads: object()))
    record = pass_sizes("conll03", "sentence", [1, 4], documents=8, rounds=2)
    assert [len(p) for p in seen] == [1] + ([1] * 8 + [4] * 2) * 2  # the warm-up first
    assert all(len(set(p)) == len(p) for p in seen)
    assert set(record["median_tokens_per_s"]) == {"1", "4"}
    assert all(len(r) == 2 and min(r) > 0 for r in record["tokens_per_s"].values())


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed "
                                                         "(Debian: apt-get install wrk)")
def test_a_load_run_says_where_the_cpu_went(tmp_path):
    """A stand-in server in a process of its own (no children: no workers) and wrk each used
    some CPU during the run."""
    import subprocess
    import sys
    import types

    from docgraph_dev.serve_load import _server_rows

    code = (
        "import sys\n"
        "from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer\n"
        "class H(BaseHTTPRequestHandler):\n"
        "    def do_POST(self):\n"
        "        self.rfile.read(int(self.headers['Content-Length']))\n"
        "        self.send_response(200); self.send_header('Content-Length', '2')\n"
        "        self.end_headers(); self.wfile.write(b'{}')\n"
        "    def log_message(self, *a): pass\n"
        "server = ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
        "print(server.server_port, flush=True)\n"
        "server.serve_forever()\n")
    front = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        port = int(front.stdout.readline())
        rows = _server_rows(f"http://127.0.0.1:{port}", {"sentence": (["a"], [1])}, [2],
                            seconds=2, max_requests=400, work=tmp_path, label="stand-in",
                            server=types.SimpleNamespace(process=front))
    finally:
        front.kill()
        front.wait()
    cores = rows[0]["cpu_cores"]
    assert 0 < cores["front"] <= 1.5 and cores["workers"] == []
    assert 0 < cores["load_generator"] <= 2.5


def test_the_passes_are_read_from_the_metrics():
    metrics = ("# HELP docgraph_batch_documents Documents per pass\n"
               'docgraph_batch_documents_bucket{le="1.0"} 3.0\n'
               "docgraph_batch_documents_count 12.0\n"
               "docgraph_batch_documents_sum 150.0\n"
               "docgraph_batch_tokens_count 12.0\n")
    assert pass_counts(metrics) == (12.0, 150.0)
    assert pass_counts("docgraph_batch_tokens_count 12.0\n") is None
