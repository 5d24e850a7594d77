"""The corpus study behind ``benchmarks/ray_corpus.py`` (:mod:`docgraph_dev.ray_corpus`): its
generated corpus, the check that every document is in the output once, and a large run kept
across invocations, with Ray and the tagging replaced by stand-ins."""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("psutil", reason="psutil is not installed (it comes with Ray)")
import pyarrow.parquet as pq  # noqa: E402

from docgraph_dev import ray_corpus  # noqa: E402


def test_the_corpus_is_files_of_paragraphs_drawn_with_a_seed(tmp_path):
    size = ray_corpus.make_corpus(tmp_path / "a", megabytes=0.02, file_mb=0.005, seed=3)
    files = sorted((tmp_path / "a").iterdir())
    assert size == sum(p.stat().st_size for p in files) >= 20_000
    assert len(files) >= 4 and all(p.stat().st_size < 6_000 for p in files[:-1])
    assert all(p.read_text().endswith("\n") and "\n\n" in p.read_text() for p in files)
    ray_corpus.make_corpus(tmp_path / "b", megabytes=0.02, file_mb=0.005, seed=3)
    assert [p.read_text() for p in files] == [
        p.read_text() for p in sorted((tmp_path / "b").iterdir())]


def _output(folder: Path, name: str, ids: list[str]) -> None:
    folder.mkdir(exist_ok=True)
    pq.write_table(pa.table({"doc": ids, "tokens": [1] * len(ids)}), folder / f"{name}.parquet")


def test_the_check_finds_a_document_missing_or_twice(tmp_path):
    _output(tmp_path, "a.txt", ["a-0", "a-1"])
    _output(tmp_path, "b.txt", ["b-0", "b-0"])
    _output(tmp_path, "c.txt", ["c-0"])
    found = ray_corpus._check_documents(tmp_path, {"a.txt": 2, "b.txt": 2, "c.txt": 2})
    assert found["ok"] is False and set(found["wrong"]) == {"b.txt", "c.txt"}
    assert found["wrong"]["b.txt"] == {"rows": 2, "distinct": 1, "documents": 2}
    assert ray_corpus._check_documents(tmp_path, {"a.txt": 2})["ok"] is True


def test_a_kept_run_makes_its_corpus_once_and_adds_a_segment_per_invocation(tmp_path, monkeypatch):
    """The first invocation tags part of the corpus, the second the rest: the corpus is made
    once, each invocation appends its segment, and the finished output is checked."""
    calls: list[list[str]] = []

    def tag(command, log, head, interval):  # a stand-in tag-corpus: two inputs per call
        calls.append(command)
        corpus, output = Path(command[command.index("--output") - 1]), Path(
            command[command.index("--output") + 1])
        done = {p.name for p in output.glob("*.parquet")} if output.is_dir() else set()
        for path in [p for p in sorted(corpus.iterdir()) if f"{p.name}.parquet" not in done][:2]:
            count = path.read_text().count("\n\n") + 1
            _output(output, path.name, [f"{path.stem}-{k}" for k in range(count)])
        return {"returncode": 0, "seconds": 1.0, "command": command}

    heads = []
    monkeypatch.setattr(ray_corpus, "start_head", lambda temp, cpus, log, object_store_bytes:
                        heads.append(object_store_bytes) or (None, "h:1"))
    monkeypatch.setattr(ray_corpus, "stop_head", lambda head: None)
    monkeypatch.setattr(ray_corpus, "run_ray", tag)
    monkeypatch.setattr(ray_corpus, "corpus_tokens", lambda output: 7)
    args = argparse.Namespace(keep_dir=tmp_path / "keep", large_mb=0.016, file_mb=0.005,
                              model="conll03", out=tmp_path / "results.json",
                              object_store_bytes=80 * 2**20)
    (tmp_path / "keep").mkdir()
    assert ray_corpus.keep_large(args, ["tag-corpus"], tmp_path / "log") == 1  # not finished
    made = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "keep" / "corpus").iterdir()}
    assert len(made) == 4
    assert ray_corpus.keep_large(args, ["tag-corpus"], tmp_path / "log") == 0
    assert {p.name: p.stat().st_mtime_ns
            for p in (tmp_path / "keep" / "corpus").iterdir()} == made  # not made again
    record = json.loads(args.out.read_text())
    assert [(s["inputs_done_before"], s["inputs_done_after"]) for s in record["segments"]] == [
        (0, 2), (2, 4)]
    assert record["check"]["ok"] is True and record["corpus_files"] == 4
    assert record["check"]["documents"] == record["corpus_documents"] > 4
    assert all("--address" in c and "h:1" in c for c in calls)
    assert heads == [80 * 2**20] * 2 and record["object_store_bytes"] == 80 * 2**20


def test_sigterm_stops_the_run_under_way_and_any_retry(monkeypatch):
    monkeypatch.setattr(ray_corpus, "_STOPPED", [False])
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    monkeypatch.setattr(ray_corpus, "_RUNNING", [sleeper])
    ray_corpus._stop_run(signal.SIGTERM, None)
    assert sleeper.wait(timeout=30) == -signal.SIGTERM
    assert ray_corpus._STOPPED == [True]


def test_an_actors_private_memory_is_its_rss_less_its_shared_pages():
    rss = [(0.5, 100 * 2**20), (1.5, 150 * 2**20), (2.5, 200 * 2**20), (3.5, 220 * 2**20)]
    shared = [(0.5, 10 * 2**20), (1.5, 60 * 2**20), (2.5, 110 * 2**20), (3.5, 130 * 2**20)]
    memory = ray_corpus._actor_memory(rss, shared, 0.0, 4.0)
    assert memory["peak_rss_mb"] == 220.0
    assert memory["rss_mb_by_quarter"] == [100.0, 150.0, 200.0, 220.0]
    assert memory["peak_private_mb"] == 90.0  # the growth was all shared pages
    assert memory["private_mb_by_quarter"] == [90.0, 90.0, 90.0, 90.0]
    assert memory["shared_mb_by_quarter"] == [10.0, 60.0, 110.0, 130.0]


def test_the_sampler_records_the_shared_part_of_each_processs_memory():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with ray_corpus.TreeSampler([child.pid], interval=0.05) as sampler:
            time.sleep(0.3)
    finally:
        child.kill()
        child.wait()
    (t0, rss), *_ = sampler.rss[child.pid]
    (t1, shared), *_ = sampler.shared[child.pid]
    assert t0 == t1 and 0 < shared < rss  # the interpreter's mapped files are shared pages


def test_the_head_gets_the_object_store_asked_for(tmp_path, monkeypatch):
    started = []

    class Head:
        def __init__(self, command, **kwargs):
            started.append(command)
            (tmp_path / "head.log").write_text("Ray runtime started\n")

        def poll(self):
            return None

    monkeypatch.setattr(ray_corpus.subprocess, "Popen", Head)
    ray_corpus.start_head(tmp_path / "ray", 3, tmp_path / "head.log",
                          object_store_bytes=80 * 2**20)
    ray_corpus.start_head(tmp_path / "ray", 3, tmp_path / "head.log")
    with_store, default = started
    assert with_store[with_store.index("--object-store-memory") + 1] == str(80 * 2**20)
    assert "--object-store-memory" not in default
