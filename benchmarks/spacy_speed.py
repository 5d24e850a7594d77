"""Tagging speed of the ``docgraph_ner`` spaCy component against ``Tagger.predict`` and
``scripts/predict.py`` on the same texts (tokens/s on the CPU, one thread).

Settings, run ``--rounds`` times each, alternating, on every input file (CoNLL columns; the
documents and sentences of the file):

* ``tagger``: :meth:`Tagger.predict <docgraph.tagging.tagger.Tagger.predict>` on the documents as
token
  lists, in this process (the model loaded once, before timing);
* ``spacy-docs``: ``nlp.pipe`` over spaCy Docs of the same tokens and sentences
  (``spacy.blank("en")`` + ``docgraph_ner``); its entities are checked against ``tagger``'s;
* ``spacy-text``: ``nlp.pipe`` over each document's raw text (its tokens joined by spaces) with
  ``spacy.blank("en")`` + ``sentencizer`` + ``docgraph_ner``: spaCy's tokenizer and sentencizer
  included, so tokens and sentences differ a little from the file's;
* ``predict.py``: ``scripts/predict.py --processes 1 --device cpu`` on the file, a fresh
  process each time (start, imports, model loading included); its start-up, measured on a
  one-sentence file, is subtracted for its tagging rate.

Times are wall (``perf_counter``) and process CPU time (``process_time``; the children's
``rusage`` for ``predict.py``); on a shared machine the CPU time is the fairer comparison.

    OMP_NUM_THREADS=1 python benchmarks/spacy_speed.py --model runs/sample \\
        docgraph/data/sample/test.txt ../shared/data/conll2003/test.txt \\
        --out benchmarks/results/measurements/spacy/speed.json
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = ("tagger", "spacy-docs", "spacy-text", "predict.py")


def read_documents(path: Path) -> list[list[list[str]]]:
    """The documents of a CoNLL file as sentences of tokens (empty sentences left out)."""
    from docgraph.data.conll import read_conll

    return [[list(s.tokens) for s in doc.sentences if len(s)] for doc in read_conll(path)]


def timed(work: Callable[[], object]) -> tuple[float, float, object]:
    """Wall and process CPU seconds of ``work()``, and its result."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def run_predict(model: str, path: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the child's user + system time) of one ``predict.py`` run."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "predict.py"), "--model", model,
         "--processes", "1", "--device", "cpu", "--format", "jsonl", str(path)],
        capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"predict.py failed:\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def entity_keys(entities_per_doc: list[list]) -> list[tuple]:
    return [(d, e.sentence, e.start, e.end, e.type)
            for d, entities in enumerate(entities_per_doc) for e in entities]


def doc_entity_keys(docs: list, documents: list[list[list[str]]]) -> list[tuple]:
    """The entities of Docs built from ``documents`` as ``entity_keys`` gives them."""
    keys = []
    for d, (doc, sentences) in enumerate(zip(docs, documents)):
        where = [(s, k) for s, sent in enumerate(sentences) for k in range(len(sent))]
        for ent in doc.ents:
            s, a = where[ent.start]
            keys.append((d, s, a, a + len(ent), ent.label_))
    return keys


def main() -> None:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("inputs", nargs="+", help="CoNLL files")
    p.add_argument("--model", default="runs/sample")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--settings", nargs="+", choices=SETTINGS, default=list(SETTINGS))
    p.add_argument("--out", default=None, help="JSON file for the results")
    args = p.parse_args()

    import spacy
    import torch
    from spacy.tokens import Doc

    import docgraph.integrations.spacy_component  # noqa: F401  (registers the factory)
    from docgraph.runtime.machine import cpu_model
    from docgraph.tagging.tagger import Tagger

    torch.set_num_threads(1)
    tagger = Tagger.load(args.model, "cpu")
    config = {"model": args.model, "device": "cpu"}
    on_docs = spacy.blank("en")
    on_docs.add_pipe("docgraph_ner", config=config)
    on_text = spacy.blank("en")
    on_text.add_pipe("sentencizer")
    on_text.add_pipe("docgraph_ner", config=config)
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "one.conll"
        one.write_text("Kestrel O\nbeat O\nCarrow O\n. O\n", encoding="utf-8")
        startup = [run_predict(args.model, one) for _ in range(args.rounds)]
    startup_wall = statistics.median(w for w, _ in startup)
    startup_cpu = statistics.median(c for _, c in startup)
    print(f"predict.py start-up (one sentence): {startup_wall:.2f} s wall, "
          f"{startup_cpu:.2f} s CPU", flush=True)

    results = []
    for name in args.inputs:
        path = Path(name)
        label = f"{path.parent.name}/{path.name}"
        documents = read_documents(path)
        tokens = sum(len(s) for doc in documents for s in doc)
        texts = [" ".join(w for s in doc for w in s) for doc in documents]

        def make_docs(documents: list[list[list[str]]] = documents) -> list[Doc]:
            return [Doc(on_docs.vocab, words=[w for s in doc for w in s],
                        sent_starts=[k == 0 for s in doc for k in range(len(s))] or None)
                    for doc in documents]

        work = {
            "tagger": lambda documents=documents: tagger.predict(documents),
            "spacy-docs": lambda: list(on_docs.pipe(make_docs())),
            "spacy-text": lambda texts=texts: list(on_text.pipe(texts)),
        }
        # warm-up on a few documents, untimed
        tagger.predict(documents[:3])
        list(on_docs.pipe(make_docs(documents[:3])))
        list(on_text.pipe(texts[:3]))
        times: dict[str, list[tuple[float, float]]] = {s: [] for s in args.settings}
        outputs: dict[str, object] = {}
        text_tokens = None
        for r in range(args.rounds):
            for setting in args.settings:
                if setting == "predict.py":
                    times[setting].append(run_predict(args.model, path))
                else:
                    wall, cpu, out = timed(work[setting])
                    times[setting].append((wall, cpu))
                    outputs[setting] = out
                print(f"{label} round {r + 1} {setting}: {times[setting][-1][0]:.2f} s "
                      f"wall, {times[setting][-1][1]:.2f} s CPU", flush=True)
        record: dict = {"input": path.as_posix(), "documents": len(documents),
                        "tokens": tokens, "settings": {}}
        for setting, runs in times.items():
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            counted = tokens
            if setting == "spacy-text":
                spacy_docs: list = outputs[setting]  # type: ignore[assignment]
                counted = text_tokens = sum(not t.is_space for d in spacy_docs for t in d)
            entry = {"tokens": counted, "wall_seconds": [w for w, _ in runs],
                     "cpu_seconds": [c for _, c in runs], "median_wall_seconds": wall,
                     "median_cpu_seconds": cpu, "tokens_per_second_wall": counted / wall,
                     "tokens_per_second_cpu": counted / cpu}
            if setting == "predict.py":
                entry["startup_wall_seconds"] = startup_wall
                entry["startup_cpu_seconds"] = startup_cpu
                # the start-up subtracted, when the input is long enough to tell (the
                # tagging takes at least half of the run); else null
                for kind, total, fixed in (("wall", wall, startup_wall), ("cpu", cpu, startup_cpu)):
                    rest = total - fixed
                    entry[f"tagging_tokens_per_second_{kind}"] = (
                        counted / rest if rest >= 0.5 * total else None)
            record["settings"][setting] = entry
        if "tagger" in outputs and "spacy-docs" in outputs:
            expected = entity_keys(outputs["tagger"])  # type: ignore[arg-type]
            got = doc_entity_keys(outputs["spacy-docs"], documents)  # type: ignore[arg-type]
            record["entities"] = len(expected)
            record["spacy_docs_entities_identical"] = got == expected
        if "spacy-text" in outputs:
            record["spacy_text_tokens"] = text_tokens
            record["spacy_text_entities"] = sum(len(d.ents) for d in outputs["spacy-text"])
        results.append(record)
        for setting, entry in record["settings"].items():
            extra = ""
            if setting == "predict.py" and entry["tagging_tokens_per_second_cpu"]:
                extra = (f" (start-up subtracted: {entry['tagging_tokens_per_second_cpu']:,.0f}"
                         " tokens/s CPU)")
            print(f"{label} {setting}: {entry['tokens_per_second_cpu']:,.0f} tokens/s CPU, "
                  f"{entry['tokens_per_second_wall']:,.0f} tokens/s wall{extra}", flush=True)
        if "spacy_docs_entities_identical" in record:
            print(f"{label}: spacy-docs entities identical to Tagger.predict: "
                  f"{record['spacy_docs_entities_identical']} ({record['entities']} entities)")

    summary = {
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "model": args.model, "rounds": args.rounds, "threads": 1, "cpu": cpu_model(),
        "cores": os.cpu_count(), "spacy": spacy.__version__, "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "results": results,
    }
    if args.out:
        from docgraph.runtime.atomic import atomic_write_json

        atomic_write_json(args.out, summary)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
