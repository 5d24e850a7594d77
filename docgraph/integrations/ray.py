"""Tag a corpus bigger than one machine on Ray Data (``pip install docgraph[ray]``).

Example::

    from docgraph.config.corpus import CorpusConfig
    from docgraph.integrations.ray import corpus_inputs, tag_corpus

    report = tag_corpus(corpus_inputs(["lake/2026-12-06/"]), "tagged/2026-12-06",
                        CorpusConfig(actors=4, scores=True))
    assert not report.missing

How a job runs. The input files are read by Ray Data (:func:`ray.data.read_binary_files`,
one file a row) and tagged in a pool of actors (``map_batches`` with ``concurrency``), each a
process holding one loaded :class:`~docgraph.tagging.tagger.Tagger` that turns a file into its
documents by the readers of ``predict.py`` (:func:`~docgraph.tagging.prediction_io.read_chunks`;
a Parquet file's rows by the same rules as a raw string), tags them through the tagging core
and writes the file's output: one row per document (``doc``, ``tokens``, ``entities``), each
entity the record ``predict.py --format jsonl`` writes for it.

Exactly once. The output of an input file is one file whose name is derived from the input's
path (:func:`output_path`: the input's path under the corpus root, with ``.parquet`` or
``.jsonl`` added), written atomically (:func:`docgraph.runtime.atomic.atomic_write`): it is
there whole or not at all. A retried task or a second job writes the same bytes under the same
name, so no document is written twice. A job run again into the same directory tags only the
inputs whose output is missing (a Parquet output is checked by its sealed footer record, which
names its input and the input's size); the settings that decide what is written are recorded
in ``_job.json`` and a job with other settings is refused. A job that cannot finish writes the
inputs it did not tag, one a line with the reason, to ``_missing.txt`` and reports them
(:attr:`CorpusReport.missing`). One job at a time holds an output directory (``.lock``).

What it does not promise: an input changed in place without changing size after it was tagged
is not tagged again (delete its output); the output directory must be one file system seen by
every node (a local disk on one machine, NFS or a mounted bucket on a cluster), and two
attempts at the same input may both write it (the same content, the last rename wins).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import ray
import ray.data

from docgraph.config.corpus import MISSING_FILE, CorpusConfig
from docgraph.config.fields import UsageError
from docgraph.data.corpus_files import corpus_inputs
from docgraph.persistence.locate import locate_model_dir
from docgraph.persistence.manifest import model_label_consistency
from docgraph.persistence.run_lock import run_directory
from docgraph.runtime.atomic import atomic_write, atomic_write_text
from docgraph.runtime.integrity import (
    DamagedFileError,
    read_json_file,
    seal,
    unseal,
    write_sealed_json,
)
from docgraph.tagging.prediction_io import ReadOptions, read_chunks
from docgraph.tagging.result import TaggedDocument, entity_records
from docgraph.tagging.tagger import Tagger

__all__ = ["ENTITY_TYPE", "OUTPUT_SCHEMA", "CorpusReport", "corpus_inputs", "output_path",
           "read_output", "tag_corpus"]

log = logging.getLogger("docgraph")

#: An entity of an output row: the fields of a ``predict.py --format jsonl`` record
#: (``score`` null when not asked for).
ENTITY_TYPE = pa.struct([("doc", pa.string()), ("sentence", pa.int32()), ("start", pa.int32()),
                         ("end", pa.int32()), ("type", pa.string()), ("text", pa.string()),
                         ("start_char", pa.int64()), ("end_char", pa.int64()),
                         ("score", pa.float64())])

#: The rows of a Parquet output file, one per document in input order.
OUTPUT_SCHEMA = pa.schema([("doc", pa.string()), ("tokens", pa.int64()),
                           ("entities", pa.list_(ENTITY_TYPE))])

JOB_FILE = "_job.json"
_FOOTER_KEY = b"docgraph"
_ROWS_PER_GROUP = 512
_SUFFIXES = {"parquet": ".parquet", "jsonl": ".jsonl"}


@dataclass
class CorpusReport:
    """What a job did.

    Attributes:
        inputs: The input files of the job.
        done_before: Those whose output was already there.
        tagged: Those tagged by this job.
        documents, entities, tokens: What this job tagged.
        seconds: The job's wall-clock time.
        missing: The inputs without output at the end, each with the reason.
    """

    inputs: int
    done_before: int = 0
    tagged: int = 0
    documents: int = 0
    entities: int = 0
    tokens: int = 0
    seconds: float = 0.0
    missing: list[tuple[str, str]] = field(default_factory=list)


def output_path(input_path: Path, root: Path, output: Path, output_format: str) -> Path:
    """The output file of ``input_path``: its path under the corpus ``root`` placed under
    ``output``, with the format's suffix added (``root/a/b.txt`` -> ``output/a/b.txt.parquet``)."""
    return output / (str(input_path.relative_to(root)) + _SUFFIXES[output_format])


def _corpus_root(inputs: Sequence[Path]) -> Path:
    """The deepest folder holding every input."""
    return Path(os.path.commonpath([str(p.parent) for p in inputs]))


def _job_root(output: Path, inputs: Sequence[Path], config: CorpusConfig) -> Path:
    """The corpus root of the job in ``output``: the one recorded there by an earlier run of
    the job, else the inputs' own (then recorded with the job's settings).

    Raises:
        UsageError: ``output`` holds a job with other settings, or inputs outside its root.
    """
    record = output / JOB_FILE
    settings = config.output_settings()
    if settings["consistency"] is None:  # recorded as decoded, so that a rerun decodes alike
        settings["consistency"] = model_label_consistency(locate_model_dir(config.model))
    if record.is_file():
        try:
            job = read_json_file(record)
        except DamagedFileError as err:
            raise UsageError(str(err), "--output", str(output)) from None
        if job.get("settings") != settings:
            changed = ", ".join(f"{k} {job['settings'].get(k)!r} -> {v!r}"
                                for k, v in settings.items()
                                if job.get("settings", {}).get(k) != v)
            raise UsageError(f"holds a job with other settings ({changed}); use another "
                             "directory", "--output", str(output))
        root = Path(job["root"])
        outside = [p for p in inputs if not p.is_relative_to(root)]
        if outside:
            raise UsageError(f"holds a job over {root}; {outside[0]} is not under it",
                             "--output", str(output))
        return root
    root = _corpus_root(inputs)
    write_sealed_json(record, {"settings": settings, "root": str(root)})
    return root


def _input_record(path: Path, root: Path, size: int, digest: str | None = None) -> dict:
    record = {"input": str(path.relative_to(root)), "input_bytes": size}
    if digest is not None:
        record["input_sha256"] = digest
    return record


def _is_done(path: Path, root: Path, target: Path) -> bool:
    """Whether ``target`` is the complete output of ``path`` (a Parquet file: its sealed
    footer names the input, at its present size)."""
    if not target.is_file():
        return False
    if target.suffix != ".parquet":
        return True
    try:
        meta = pq.read_metadata(target).metadata or {}
        footer = unseal(json.loads(meta[_FOOTER_KEY]), target)
    except (OSError, KeyError, ValueError, pa.ArrowException) as err:
        log.warning("%s: not a complete output (%s); its input is tagged again", target, err)
        return False
    expected = _input_record(path, root, path.stat().st_size)
    return all(footer.get(k) == v for k, v in expected.items())


def _read_options(config: CorpusConfig, tagger: Tagger) -> ReadOptions:
    input_format = "auto" if config.input_format == "parquet" else config.input_format
    return ReadOptions(input_format, config.tokenized, config.documents,
                       tagger.max_doc_tokens or sys.maxsize)


def _is_parquet(path: Path, config: CorpusConfig) -> bool:
    return config.input_format == "parquet" or (config.input_format == "auto"
                                                 and path.suffix == ".parquet")


def _parquet_texts(path: Path, data: bytes, config: CorpusConfig) -> Iterator[tuple[str, str]]:
    """``(id, text)`` of every row of a Parquet input, in order."""
    try:
        table = pq.ParquetFile(pa.BufferReader(data))
    except pa.ArrowException as err:
        raise ValueError(f"{path}: not a Parquet file ({err})") from None
    names = table.schema_arrow.names
    if config.text_column not in names:
        raise ValueError(f"{path}: no column {config.text_column!r} (columns: "
                         f"{', '.join(names)}; --text-column names it)")
    columns = [config.text_column] + ([config.id_column] if config.id_column in names else [])
    row = 0
    for batch in table.iter_batches(columns=columns, batch_size=1024):
        texts = batch.column(0).to_pylist()
        ids = batch.column(1).to_pylist() if batch.num_columns > 1 else [None] * len(texts)
        for text, doc_id in zip(texts, ids):
            yield (f"{path.stem}-{row}" if doc_id is None else str(doc_id)), text or ""
            row += 1


def _tag_input(tagger: Tagger, path: Path, data: bytes, options: ReadOptions,
               config: CorpusConfig) -> Iterator[TaggedDocument]:
    """The documents of one input file, tagged in this process by the tagging core
    (:meth:`Tagger.pipe <docgraph.tagging.tagger.Tagger.pipe>`): a Parquet file's rows as raw
    strings, any other file as the chunks ``predict.py``'s reader makes of it (offsets into the
    file's text)."""
    if _is_parquet(path, config):
        ids, texts = itertools.tee(_parquet_texts(path, data, config))
        return tagger.pipe((text for _, text in texts), doc_ids=(i for i, _ in ids),
                           tokenized=config.tokenized, scores=config.scores)
    return tagger.pipe(read_chunks(path, options, data), scores=config.scores)


def _rows(documents: Iterable[TaggedDocument], counts: dict[str, int]) -> Iterator[dict]:
    """The output row of each document (its entities as :func:`entity_records` gives them);
    ``counts`` adds up documents, tokens, entities."""
    for document in documents:
        tokens = sum(len(s.tokens) for s in document.sentences)
        entities = entity_records(document)
        counts["documents"] += 1
        counts["tokens"] += tokens
        counts["entities"] += len(entities)
        yield {"doc": document.doc, "tokens": tokens, "entities": entities}


def _batched(rows: Iterable[dict], size: int) -> Iterator[list[dict]]:
    batch: list[dict] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _write_output(target: Path, documents: Iterable[TaggedDocument], output_format: str,
                  record: dict) -> dict[str, int]:
    """Write the output file of one input atomically; its counts. A Parquet file carries
    ``record`` and the counts, sealed, in its footer."""
    counts = {"documents": 0, "tokens": 0, "entities": 0}

    def parquet(tmp: str) -> None:
        with pq.ParquetWriter(tmp, OUTPUT_SCHEMA, compression="zstd",
                              write_page_checksum=True) as writer:
            for batch in _batched(_rows(documents, counts), _ROWS_PER_GROUP):
                writer.write_table(pa.Table.from_pylist(batch, schema=OUTPUT_SCHEMA))
            footer = json.dumps(seal({**record, **counts}))
            writer.add_key_value_metadata({_FOOTER_KEY: footer.encode()})

    def jsonl(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as out:
            for row in _rows(documents, counts):
                out.write(json.dumps(row, ensure_ascii=False) + "\n")

    atomic_write(target, parquet if output_format == "parquet" else jsonl)
    return counts


def read_output(path: str | Path) -> Iterator[dict]:
    """The rows of an output file, in order: ``{"doc", "tokens", "entities"}``, each entity
    the record ``predict.py --format jsonl`` writes (no ``score`` when not scored)."""
    path = Path(path)
    if path.suffix == ".jsonl":
        with open(path, encoding="utf-8") as lines:
            yield from (json.loads(line) for line in lines)
        return
    for batch in pq.ParquetFile(path).iter_batches():
        for row in batch.to_pylist():
            row["entities"] = [{k: v for k, v in e.items() if k != "score" or v is not None}
                               for e in row["entities"]]
            yield row


class _InputTagger:
    """An actor of the pool: one loaded model; tags one input file per call and writes its
    output."""

    def __init__(self, config: CorpusConfig, root: str, output: str) -> None:
        threads = max(1, int(config.cpus_per_actor))
        device = "cuda" if config.gpus_per_actor > 0 else "cpu"
        self.tagger = Tagger.load(config.model, device=device, threads=threads,
                                  max_doc_tokens=config.max_doc_tokens,
                                  consistency=config.consistency)
        self.config, self.root, self.output = config, Path(root), Path(output)
        self.options = _read_options(config, self.tagger)

    def __call__(self, batch: pa.Table) -> pa.Table:
        results = []
        for path_text, data in zip(batch["path"].to_pylist(), batch["bytes"].to_pylist()):
            results.append(self._tag_file(Path(path_text), data))
        return pa.Table.from_pylist(results)

    def _tag_file(self, path: Path, data: bytes) -> dict:
        start = time.monotonic()
        record = _input_record(path, self.root, len(data), hashlib.sha256(data).hexdigest())
        target = output_path(path, self.root, self.output, self.config.output_format)
        result = {"input": record["input"], "documents": 0, "tokens": 0, "entities": 0,
                  "error": None}
        try:
            documents = _tag_input(self.tagger, path, data, self.options, self.config)
            result |= _write_output(target, documents, self.config.output_format, record)
        except (ValueError, OSError) as err:  # a bad input file: reported, the job goes on
            result["error"] = str(err).splitlines()[0] if str(err) else type(err).__name__
        result["seconds"] = time.monotonic() - start
        return result


@contextmanager
def _ray_session(config: CorpusConfig) -> Iterator[None]:
    """Ray for the block: the session already open in this process, the cluster of
    ``config.address``, or a local Ray started for the block (its files in a temporary folder
    removed after it)."""
    if ray.is_initialized():
        yield
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    temp = None
    # ray.init makes SIGTERM exit the process at once; the caller's handler is put back
    on_sigterm = signal.getsignal(signal.SIGTERM)
    try:
        if config.address is None:
            temp = tempfile.mkdtemp(prefix="docgraph-ray-")
            # logical CPUs for every actor and one for reading and the driver
            cpus = max(os.cpu_count() or 1, math.ceil(config.actors * config.cpus_per_actor) + 1)
            ray.init(num_cpus=cpus, object_store_memory=config.object_store_memory,
                     include_dashboard=False, logging_level=logging.WARNING,
                     configure_logging=False, _temp_dir=temp)
        else:
            ray.init(address=config.address, logging_level=logging.WARNING,
                     configure_logging=False)
        if on_sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, on_sigterm)
        yield
    finally:
        ray.shutdown()
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)


def tag_corpus(inputs: Sequence[Path], output: str | Path,
               config: CorpusConfig | None = None,
               progress: Callable[[CorpusReport], None] | None = None) -> CorpusReport:
    """Tag the files ``inputs`` (:func:`corpus_inputs`) into ``output``, each input once (see
    the module docstring): only those without a complete output are read.

    Args:
        inputs: The input files.
        output: The output directory (created; held by this job while it runs).
        config: The job's settings (default: :class:`CorpusConfig`'s).
        progress: Called with the report so far after each tagged input.

    Returns:
        The report; :attr:`CorpusReport.missing` lists the inputs left untagged (also in
        ``output/_missing.txt``; that file is removed once every input is tagged).

    Raises:
        UsageError: ``output`` holds a job with other settings or over another corpus root.
        RunDirectoryBusyError: Another job holds ``output``.
    """
    config = config or CorpusConfig()
    output = Path(output).absolute()
    inputs = [Path(p).absolute() for p in inputs]
    report = CorpusReport(len(inputs))
    start = time.monotonic()
    with run_directory(output):
        root = _job_root(output, inputs, config)
        targets = {p: output_path(p, root, output, config.output_format) for p in inputs}
        pending = [p for p in inputs if not _is_done(p, root, targets[p])]
        report.done_before = len(inputs) - len(pending)
        errors: dict[str, str] = {}
        stopped = ""
        try:
            if pending:
                with _ray_session(config):
                    _run(pending, root, output, config, report, errors, progress)
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM under the command: list, then stop
            stopped = "interrupted"
            raise
        except Exception as err:  # Ray's own errors are not all RayError: report, list
            stopped = (str(err).splitlines() or [type(err).__name__])[0]
            log.error("tag-corpus: the job stopped: %s", stopped)
        finally:
            _list_missing(inputs, root, targets, output, errors, stopped, report)
            report.seconds = time.monotonic() - start
    return report


def _list_missing(inputs: Sequence[Path], root: Path, targets: dict[Path, Path], output: Path,
                  errors: dict[str, str], stopped: str, report: CorpusReport) -> None:
    """Fill ``report.missing`` with the inputs that have no complete output, and write them to
    ``output/_missing.txt`` (removed when there are none)."""
    for path in inputs:
        if not _is_done(path, root, targets[path]):
            name = str(path.relative_to(root))
            why = "not tagged" + (f" (the job stopped: {stopped})" if stopped else "")
            report.missing.append((name, errors.get(name, why)))
    missing = output / MISSING_FILE
    if report.missing:
        atomic_write_text(missing, "".join(f"{n}\t{why}\n" for n, why in report.missing))
    else:
        missing.unlink(missing_ok=True)


def _run(pending: Sequence[Path], root: Path, output: Path, config: CorpusConfig,
         report: CorpusReport, errors: dict[str, str],
         progress: Callable[[CorpusReport], None] | None) -> None:
    """Read and tag ``pending`` on Ray Data, counting into ``report``."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    files = ray.data.read_binary_files([str(p) for p in pending], include_paths=True,
                                       override_num_blocks=len(pending), num_cpus=0,
                                       concurrency=max(2, config.actors))
    gpus: dict[str, Any] = {"num_gpus": config.gpus_per_actor} if config.gpus_per_actor else {}
    tagged = files.map_batches(
        _InputTagger, fn_constructor_args=(config, str(root), str(output)), batch_size=1,
        batch_format="pyarrow", compute=ray.data.ActorPoolStrategy(size=config.actors),
        num_cpus=config.cpus_per_actor, **gpus)
    for row in tagged.iter_rows():
        if row["error"] is not None:
            errors[row["input"]] = row["error"]
            log.error("tag-corpus: %s: %s", row["input"], row["error"])
            continue
        report.tagged += 1
        report.documents += row["documents"]
        report.tokens += row["tokens"]
        report.entities += row["entities"]
        if progress is not None:
            progress(report)
