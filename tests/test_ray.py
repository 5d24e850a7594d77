"""``docgraph tag-corpus`` on a real Ray cluster: a head and two worker nodes, each a separate
``ray start`` on 127.0.0.1 with one CPU, started and stopped here (every process of theirs
ended by its id, nothing left running, their folder removed).

A job tags text, span JSON lines, DocBin and Parquet inputs as ``predict.py`` tags them; a
worker node killed mid-job, or the driver killed and the job run again, still ends with every
input document in the output exactly once.
"""

from __future__ import annotations

import collections
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (pip install 'docgraph[ray]')")
psutil = pytest.importorskip("psutil", reason="psutil is not installed (it comes with Ray)")

from docgraph.config.corpus import CorpusConfig  # noqa: E402
from docgraph.config.fields import UsageError  # noqa: E402
from docgraph.integrations.ray import output_path, read_output, tag_corpus  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).with_name("ray"))
NAMES = ["Angela Merkel", "John Smith", "Maria Garcia", "Emmanuel Macron", "Kestrel United"]
PLACES = ["Berlin", "Paris", "New York", "London", "Madrid"]
ORGS = ["Google", "Reuters", "Siemens", "the United Nations", "Microsoft"]


def _text(seed: int, sentences: int) -> str:
    """Plain news-like sentences with names, places and organisations."""
    out = []
    for k in range(sentences):
        i = seed * 7 + k
        out.append(f"{NAMES[i % 5]} met officials of {ORGS[(i // 5) % 5]} in "
                   f"{PLACES[(i // 3) % 5]} on Monday, {NAMES[(i + 2) % 5]} said.")
    return " ".join(out)


class Cluster:
    """Three ``ray start`` nodes on 127.0.0.1; each node is a process session of its own."""

    def __init__(self) -> None:
        self.temp = Path(tempfile.mkdtemp(prefix="dgray-", dir="/tmp"))  # short: socket paths
        self.env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token",
                        RAY_AUTH_TOKEN=secrets.token_hex(32), PYTHONPATH=str(ROOT))
        self.address = f"127.0.0.1:{_free_port()}"
        self.nodes: list[subprocess.Popen] = []
        self.sessions: set[int] = set()

    def start_node(self, *args: str) -> subprocess.Popen:
        name = f"node{len(self.nodes)}"
        log = self.temp / f"{name}.log"
        with open(log, "w") as out:
            node = subprocess.Popen(
                [RAY, "start", *args, "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
                 "--object-store-memory", str(80 << 20), "--temp-dir", str(self.temp),
                 "--disable-usage-stats", "--block"],
                env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.nodes.append(node)
        self.sessions.add(node.pid)
        deadline = time.monotonic() + 180
        while "Ray runtime started" not in log.read_text():
            assert node.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.5)
        return node

    def processes(self) -> list:
        """The live processes of the cluster's sessions (and of drivers run here)."""
        found = []
        for process in psutil.process_iter():
            try:
                if (os.getsid(process.pid) in self.sessions
                        and process.status() != psutil.STATUS_ZOMBIE):
                    found.append(process)
            except (OSError, psutil.Error):
                continue
        return found

    def kill_session(self, session: int) -> None:
        for process in self.processes():
            try:
                if os.getsid(process.pid) == session:
                    process.kill()
            except (OSError, psutil.Error):
                continue

    def run(self, *args: str, **kwargs) -> subprocess.Popen:
        """``docgraph tag-corpus ARGS --address`` as a driver in a session of its own."""
        driver = subprocess.Popen(
            [sys.executable, "-m", "docgraph.integrations.tag_corpus", *args,
             "--address", self.address],
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True, **kwargs)
        self.sessions.add(driver.pid)
        return driver

    def stop(self) -> None:
        for session in list(self.sessions):
            self.kill_session(session)
        for node in self.nodes:
            node.wait(timeout=60)
        deadline = time.monotonic() + 30
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.5)
        shutil.rmtree(self.temp, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def cluster():
    cluster = Cluster()
    try:
        cluster.start_node("--head", "--port", cluster.address.split(":")[1],
                           "--include-dashboard", "false")
        cluster.start_node("--address", cluster.address)
        cluster.start_node("--address", cluster.address)
        yield cluster
    finally:
        cluster.stop()
        left = cluster.processes()
        assert not left, [p.pid for p in left]
        assert not cluster.temp.exists()


def _finish(driver: subprocess.Popen, timeout: float = 600) -> tuple[int, str]:
    out, _ = driver.communicate(timeout=timeout)
    return driver.returncode, out


def _ids(output: Path) -> collections.Counter:
    """How many times each (input, document) is in the output files."""
    counts: collections.Counter = collections.Counter()
    for path in output.rglob("*.parquet"):
        for row in read_output(path):
            counts[(str(path.relative_to(output)), row["doc"])] += 1
    return counts


def _text_corpus(folder: Path, files: int, documents: int, sentences: int) -> int:
    """Span JSON lines files of ``documents`` records each; the number of documents."""
    folder.mkdir(parents=True)
    for f in range(files):
        lines = [json.dumps({"id": f"f{f}-d{d}", "text": _text(f * 31 + d, sentences)})
                 for d in range(documents)]
        (folder / f"part-{f:03d}.jsonl").write_text("\n".join(lines) + "\n")
    return files * documents


def _job_under_way(cluster: Cluster, tmp_path: Path, actors: int, outputs: int
                   ) -> tuple[int, Path, tuple[str, ...], subprocess.Popen]:
    """A job over 12 span JSON lines files, once ``outputs`` of them are tagged: the number of
    documents, the output directory, the job's arguments and its driver."""
    documents = _text_corpus(tmp_path / "corpus", files=12, documents=2, sentences=8)
    output = tmp_path / "out"
    args = (str(tmp_path / "corpus"), "--output", str(output), "--actors", str(actors))
    driver = cluster.run(*args)
    deadline = time.monotonic() + 600
    while len(list(output.glob("*.parquet"))) < outputs:
        assert driver.poll() is None and time.monotonic() < deadline, driver.stdout.read()
        time.sleep(0.2)
    return documents, output, args, driver


def _predicted(path: Path, tmp: Path, *flags: str) -> dict[str, list[dict]]:
    """``predict.py --format jsonl --scores FLAGS``'s records of the file ``path`` (tagged
    alone, as an actor tags it: a file's documents share tagging batches), grouped by
    document."""
    out = tmp / f"{path.name}.predicted.jsonl"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "predict.py"), str(path),
                    "--model", "conll03", "--format", "jsonl", "--scores", "--processes", "1",
                    "--output", str(out), *flags], check=True, capture_output=True, text=True)
    grouped: dict[str, list[dict]] = collections.defaultdict(list)
    for line in out.read_text().splitlines():
        record = json.loads(line)
        grouped[record["doc"]].append(record)
    return grouped


@pytest.mark.timeout(900)  # a cluster job on a loaded machine may take minutes
def test_a_job_tags_every_format_as_predict_does_and_lists_a_bad_input(cluster, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "news.txt").write_text(_text(1, 4) + "\n\n" + _text(2, 3) + "\n")
    records = [{"id": f"r{k}", "text": _text(10 + k, 2)} for k in range(3)]
    (corpus / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    pq.write_table(pa.table({"id": [r["id"] for r in records],
                             "text": [r["text"] for r in records]}), corpus / "rows.parquet")
    inputs = [corpus / "news.txt", corpus / "records.jsonl"]
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    docbin = DocBin()
    docbin.add(nlp(_text(20, 3)))
    docbin.to_disk(corpus / "docs.spacy")
    inputs.append(corpus / "docs.spacy")
    (corpus / "bad.txt").write_bytes(b"Berlin \xff\xfe is not UTF-8\n")

    output = tmp_path / "out"
    code, log = _finish(cluster.run(str(corpus), "--output", str(output), "--actors", "2",
                                    "--scores"))
    assert code == 1, log
    missing = (output / "_missing.txt").read_text().splitlines()
    assert len(missing) == 1 and missing[0].startswith("bad.txt\t") and "UTF-8" in missing[0]
    assert "bad.txt" in log

    expected = {path.name: _predicted(path, tmp_path) for path in inputs}
    for path in inputs:
        rows = list(read_output(output_path(path, corpus, output, "parquet")))
        assert [r["doc"] for r in rows] == list(expected[path.name])  # each has entities
        for row in rows:
            assert row["entities"] == expected[path.name][row["doc"]], (path, row["doc"])
    # a Parquet file's rows are tagged as the same texts in span JSON lines
    rows = list(read_output(output / "rows.parquet.parquet"))
    assert [r["doc"] for r in rows] == ["r0", "r1", "r2"]
    assert [r["entities"] for r in rows] == [expected["records.jsonl"][r["doc"]] for r in rows]
    assert sum(len(r["entities"]) for r in rows) > 3

    # the bad input fixed, the same command tags it alone
    (corpus / "bad.txt").write_text("Berlin is now UTF-8.\n")
    before = {p: p.stat().st_mtime_ns for p in output.rglob("*.parquet")}
    code, log = _finish(cluster.run(str(corpus), "--output", str(output), "--actors", "2",
                                    "--scores"))
    assert code == 0, log
    assert "4 done before, 1 tagged now" in log
    assert not (output / "_missing.txt").exists()
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())


@pytest.mark.timeout(900)
def test_a_job_with_consistency_tags_as_predict_with_it(cluster, tmp_path):
    """``--consistency`` reaches the actors: the biography of invented names, whose tags it
    changes, comes out as ``predict.py --consistency`` writes it."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(ROOT / "benchmarks" / "data" / "novel-names" / "biography.jsonl", corpus)
    path = corpus / "biography.jsonl"
    expected = _predicted(path, tmp_path, "--consistency")
    (tmp_path / "plain").mkdir()
    assert expected != _predicted(path, tmp_path / "plain", "--no-consistency")
    output = tmp_path / "out"
    code, log = _finish(cluster.run(str(corpus), "--output", str(output), "--actors", "1",
                                    "--scores", "--consistency"))
    assert code == 0, log
    rows = list(read_output(output_path(path, corpus, output, "parquet")))
    assert {row["doc"]: row["entities"] for row in rows} == expected


@pytest.mark.timeout(900)
def test_a_worker_node_killed_mid_job_leaves_complete_output(cluster, tmp_path):
    documents, output, _, driver = _job_under_way(cluster, tmp_path, actors=3, outputs=3)
    done_at_kill = len(list(output.glob("*.parquet")))
    victim = cluster.nodes[2]
    cluster.kill_session(victim.pid)  # the node's raylet, its workers and its actor
    victim.wait(timeout=60)
    code, log = _finish(driver)
    assert code == 0, log
    assert done_at_kill < 12, "the job ended before the node was killed"
    ids = _ids(output)
    assert len(ids) == documents and set(ids.values()) == {1}
    cluster.start_node("--address", cluster.address)  # the cluster whole again


@pytest.mark.timeout(900)
def test_the_driver_killed_and_the_job_run_again_gives_each_document_once(cluster, tmp_path):
    documents, output, args, driver = _job_under_way(cluster, tmp_path, actors=2, outputs=2)
    cluster.kill_session(driver.pid)
    driver.wait(timeout=60)
    first = {p: p.stat().st_mtime_ns for p in output.glob("*.parquet")}
    assert 0 < len(first) < 12

    code, log = _finish(cluster.run(*args))
    assert code == 0, log
    ids = _ids(output)
    assert len(ids) == documents and set(ids.values()) == {1}
    assert not list(output.glob(".*.tmp"))
    # what the first run wrote is kept, not tagged again
    assert all(p.stat().st_mtime_ns == t for p, t in first.items())
    assert f"{len(first)} done before" in log


@pytest.mark.timeout(900)
def test_a_job_stopped_by_sigterm_says_what_is_whole_and_the_rest_is_tagged_again(cluster,
                                                                                   tmp_path):
    documents, output, args, driver = _job_under_way(cluster, tmp_path, actors=2, outputs=2)
    driver.terminate()
    code, log = _finish(driver, timeout=120)
    assert code == 143, log
    done = len(list(output.glob("*.parquet")))
    listed = (output / "_missing.txt").read_text().splitlines()
    assert 0 < done < 12 and len(listed) == 12 - done, log
    assert (f"tag-corpus: stopped by SIGTERM: every output in {output} is whole; "
            f"{12 - done} inputs not tagged") in log
    assert "Traceback" not in log

    code, log = _finish(cluster.run(*args))
    assert code == 0, log
    ids = _ids(output)
    assert len(ids) == documents and set(ids.values()) == {1}
    assert not (output / "_missing.txt").exists()


def test_an_output_directory_keeps_its_settings(tmp_path):
    source = tmp_path / "a.txt"
    source.write_text("Berlin.\n")
    (tmp_path / "out").mkdir()
    from docgraph.runtime.integrity import write_sealed_json

    # recorded as decoded: conll03's default, label consistency, not "the model's"
    settings = CorpusConfig().output_settings() | {"consistency": True}
    write_sealed_json(tmp_path / "out" / "_job.json", {"settings": settings, "root": str(tmp_path)})
    with pytest.raises(UsageError, match=r"other settings \(scores False -> True\)"):
        tag_corpus([source], tmp_path / "out", CorpusConfig(scores=True))
    with pytest.raises(UsageError, match=r"other settings \(consistency True -> False\)"):
        tag_corpus([source], tmp_path / "out", CorpusConfig(consistency=False))
    with pytest.raises(UsageError, match="is not under it"):
        tag_corpus([Path("/etc/hostname")], tmp_path / "out")


def test_output_names_follow_their_inputs():
    root, out = Path("/lake"), Path("/tagged")
    assert output_path(Path("/lake/a/b.txt"), root, out, "parquet") == Path(
        "/tagged/a/b.txt.parquet")
    assert output_path(Path("/lake/b.txt"), root, out, "jsonl") == Path("/tagged/b.txt.jsonl")
    with pytest.raises(ValueError):
        output_path(Path("/elsewhere/b.txt"), root, out, "parquet")


def test_a_local_ray_gets_the_object_store_asked_for(monkeypatch):
    import ray

    import docgraph.integrations.ray as engine

    started = {}
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kwargs: started.update(kwargs))
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    with engine._ray_session(CorpusConfig(object_store_memory=100_000_000)):
        assert started["object_store_memory"] == 100_000_000
        assert Path(started["_temp_dir"]).is_dir()
    assert not Path(started["_temp_dir"]).exists()  # its files removed with it
    started.clear()
    with engine._ray_session(CorpusConfig()):
        assert started["object_store_memory"] is None  # Ray's own default
