"""The tagging service with two model workers: a worker killed with -9 is replaced and its
requests get 503 (not a hang), a request past ``--timeout-s`` gets 504 and its waiting
documents are dropped, and SIGTERM lets what is in flight finish, then exits 0."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed "
                                      "(pip install 'docgraph[serve]')")
import httpx
from serving import Server
from test_serve_app import long_text

pytestmark = pytest.mark.timeout(900)


def metric(server: Server, name: str) -> float:
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def post_in_thread(server: Server, body: dict, answers: list) -> threading.Thread:
    def send() -> None:
        try:
            answers.append(httpx.post(f"{server.url}/v1/entities", content=json.dumps(body),
                                      headers={"Content-Type": "application/json"},
                                      timeout=120))
        except httpx.HTTPError as err:  # recorded: the test says what happened
            answers.append(err)

    thread = threading.Thread(target=send)
    thread.start()
    return thread


def test_two_workers_a_kill_a_timeout_and_sigterm(tmp_path):
    # --max-batch-tokens 1: every document is a pass of its own
    with Server(tmp_path / "server.log", "--workers", "2", "--max-batch-tokens", "1",
                "--timeout-s", "5") as server:
        wait_for(lambda: metric(server, "docgraph_workers_ready") == 2, timeout=240)
        workers = server.pids()
        assert len(workers) == 2

        # a pass on each (stopped) worker; one worker is killed, the other goes on
        answers: list = []
        with server.frozen():
            passes = metric(server, "docgraph_batch_documents_count")
            threads = [post_in_thread(server, {"text": text}, answers)
                       for text in ("EU rejects German call .", "Peter Blackburn in Brussels")]
            wait_for(lambda: metric(server, "docgraph_batch_documents_count") == passes + 2)
            os.kill(workers[0], signal.SIGKILL)
        for thread in threads:
            thread.join(60)
        assert not any(thread.is_alive() for thread in threads), "a request hung"
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 503], [getattr(a, "text", a) for a in answers]
        lost = next(a for a in answers if a.status_code == 503)
        assert lost.headers["Retry-After"] == "1"
        assert "Traceback" not in lost.text
        wait_for(lambda: metric(server, "docgraph_workers_ready") == 2, timeout=240)
        assert metric(server, "docgraph_worker_restarts_total") == 1
        replaced = server.pids()
        assert workers[0] not in replaced and workers[1] in replaced and len(replaced) == 2
        again = httpx.post(f"{server.url}/v1/entities", json={"text": "EU rejects German "
                                                              "call ."}, timeout=60)
        assert again.status_code == 200 and again.json()["documents"][0]["entities"]

        # not answered within --timeout-s: 504, and the document still waiting is dropped
        answers = []
        with server.frozen():
            start = time.monotonic()
            post_in_thread(server, {"texts": ["a", "b", "c"]}, answers).join(60)
            waited = time.monotonic() - start
        (late,) = answers
        assert late.status_code == 504, late.text
        assert late.json()["error"] == "not tagged within 5 s"
        assert 5 <= waited < 30
        assert metric(server, 'docgraph_dropped_documents_total{reason="timeout"}') == 1
        assert metric(server, "docgraph_queue_documents") == 0

        # SIGTERM with a request in flight: it is answered, then the server exits 0
        answers = []
        with server.frozen():
            passes = metric(server, "docgraph_batch_documents_count")
            thread = post_in_thread(server, {"text": long_text(300)}, answers)
            wait_for(lambda: metric(server, "docgraph_batch_documents_count") > passes)
            server.process.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            assert thread.is_alive()
        thread.join(60)
        assert answers[0].status_code == 200
        assert answers[0].json()["documents"][0]["entities"]
        assert server.process.wait(60) == 0
        assert "Traceback" not in server.output()
        left = [pid for pid in replaced if os.path.exists(f"/proc/{pid}")
                and "zombie" not in Path(f"/proc/{pid}/status").read_text()]
        assert not left, f"workers left running: {left}"
