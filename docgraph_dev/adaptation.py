"""An adaptation curve: a shipped model on a domain it did not see, zero-shot, trained from
scratch on a few documents of it, and fine-tuned from the model on the same documents
(``train.py --init-from``).

The domain is one OntoNotes 5.0 genre (``bc``, broadcast conversation, by default), its types
taken to CoNLL-2003's four by :data:`~docgraph.data.type_maps.ONTONOTES_TO_CONLL`, optionally
keeping some OntoNotes types beside them (``--keep DATE``: a type the model lacks, which
fine-tuning adds). Each size ``n`` trains on the first ``n`` of the genre's training documents
in a seeded order (so the sizes are nested), early-stops on the genre's dev documents and is
scored on its test documents. Every corpus is written as CoNLL column files and trained by
``scripts/train.py --dataset column`` with the same preset and caps, one process of one
thread; each run's record keeps how it ended (early stopping, the epoch cap or the time
budget).

    python benchmarks/adaptation.py --data-dir DIR/ontonotes --work runs/adaptation \\
        --out benchmarks/results/measurements/adaptation --runs zero-shot scratch-5 finetune-5
    python benchmarks/adaptation.py --out benchmarks/results/measurements/adaptation --summarise

``--resume`` continues runs from their checkpoints under new caps (a longer ``--max-minutes``);
the new record keeps the earlier one's results (``before_resuming``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from docgraph.data.conll import write_conll
from docgraph.data.document import Document
from docgraph.data.type_maps import ONTONOTES_TO_CONLL, genre, map_document
from docgraph.metrics import score
from docgraph.runtime.atomic import atomic_write_json

__all__ = ["RUN_KINDS", "curve", "main", "markdown_table", "parse_run", "run_order",
           "select_documents", "train_command", "type_map", "write_corpus"]

ROOT = Path(__file__).resolve().parents[1]

#: The kinds of a run: the model as it is, trained from scratch, fine-tuned from the model.
RUN_KINDS = ("zero-shot", "scratch", "finetune")


def type_map(keep: Sequence[str] = ()) -> dict[str, str | None]:
    """:data:`ONTONOTES_TO_CONLL` with the OntoNotes types ``keep`` kept as they are."""
    mapping: dict[str, str | None] = dict(ONTONOTES_TO_CONLL)
    for kind in keep:
        if kind not in mapping:
            raise ValueError(f"--keep {kind}: not an OntoNotes type ({', '.join(mapping)})")
        mapping[kind] = kind
    return mapping


def run_order(documents: Sequence[Document], seed: int) -> list[Document]:
    """``documents`` in a seeded order: the first ``n`` of it are a size-``n`` training set, so
    a smaller set is part of every larger one."""
    order = list(documents)
    random.Random(seed).shuffle(order)
    return order


def select_documents(splits: Mapping[str, Sequence[Document]], domain: str, size: int,
                     seed: int, mapping: Mapping[str, str | None]
                     ) -> dict[str, list[Document]]:
    """The corpus of one size: ``size`` training documents of genre ``domain``
    (:func:`run_order`), and all its dev and test documents, their types mapped."""
    def of_genre(name: str) -> list[Document]:
        return [d for d in splits[name] if genre(d.doc_id) == domain]

    train = of_genre("train")
    if not train:
        raise ValueError(f"no training document of genre {domain!r}")
    if size > len(train):
        raise ValueError(f"size {size}: genre {domain!r} has {len(train)} training documents")
    chosen = {"train": run_order(train, seed)[:size], "dev": of_genre("dev"),
              "test": of_genre("test")}
    return {name: [map_document(d, mapping) for d in docs] for name, docs in chosen.items()}


def write_corpus(directory: Path, corpus: Mapping[str, Sequence[Document]]) -> Path:
    """Write ``corpus`` as the column files ``train.txt``, ``dev.txt`` and ``test.txt`` of a
    ``--dataset column`` corpus (IOB2)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, docs in corpus.items():
        write_conll(directory / f"{name}.txt", list(docs))
    return directory


def parse_run(name: str) -> tuple[str, int | None]:
    """``"finetune-20"`` -> ``("finetune", 20)``; ``"zero-shot"`` -> ``("zero-shot", None)``.

    Raises:
        ValueError: Not a run of :data:`RUN_KINDS`.
    """
    if name == "zero-shot":
        return name, None
    kind, _, size = name.rpartition("-")
    if kind not in RUN_KINDS[1:] or not size.isdigit() or int(size) < 1:
        raise ValueError(f"run {name!r}: expected zero-shot, scratch-N or finetune-N")
    return kind, int(size)


def train_command(kind: str, corpus: Path, run_dir: Path, model: str, preset: str,
                  epochs: int, patience: int, max_minutes: float, seed: int,
                  more: Sequence[str] = ()) -> list[str]:
    """The ``scripts/train.py`` command of a ``scratch`` or ``finetune`` run (``more``: further
    ``train.py`` arguments, last)."""
    command = [sys.executable, str(ROOT / "scripts" / "train.py"), "--dataset", "column",
               "--data-dir", str(corpus), "--config", preset, "--output-dir", str(run_dir),
               "--epochs", str(epochs), "--patience", str(patience), "--max-minutes",
               str(max_minutes), "--seed", str(seed), "--processes", "1", "--threads", "1",
               "--device", "cpu", "--overwrite", "--quiet"]
    if kind == "finetune":
        command += ["--init-from", model]
    return command + list(more)


def test_scores(tagger: Any, documents: Sequence[Document],
                types: Sequence[str] | None = None) -> dict[str, Any]:
    """Scores of a loaded :class:`~docgraph.tagging.tagger.Tagger` on ``documents`` (tagged
    whole, gold tokens); with ``types``, its predictions of any other type count as ``O``."""
    from docgraph.data.tags import entity_type

    predictions = tagger.tag(list(documents), processes=1)[1]
    gold = [list(s.tags) for d in documents for s in d.sentences]
    found = [[t if types is None or entity_type(t) in types else "O" for t in s]
             for doc in predictions for s in doc]
    return score(gold, found).to_dict()


def _start_types_scores(tagger: Any, documents: Sequence[Document],
                        types: Sequence[str]) -> dict[str, Any]:
    """A record's ``start_types_<split>``: the starting model's ``types`` and the scores of
    ``tagger`` on ``documents`` in them."""
    return {"types": list(types), **test_scores(tagger, documents, types)}


def _add_start_types_dev(record_path: Path, run_dir: Path,
                         conll: Mapping[str, Sequence[Document]],
                         types: Sequence[str]) -> None:
    """Add the CoNLL-2003 dev scores (``start_types_dev``) to a run's record that lacks
    them, from its trained run directory."""
    from docgraph.tagging.tagger import Tagger

    record = json.loads(record_path.read_text())
    if "start_types_dev" in record or "start_types_test" not in record:
        print(f"{record_path.name}: nothing to add", flush=True)
        return
    tagger = Tagger.load(run_dir, speed="faithful", consistency=False)  # as the curve decodes
    record["start_types_dev"] = _start_types_scores(tagger, conll["dev"], types)
    atomic_write_json(record_path, record)
    print(f"{record_path.name}: CoNLL-2003 dev F1 {record['start_types_dev']['f1']:.2f}",
          flush=True)


def _run_record(run_dir: Path) -> dict[str, Any]:
    """What a training run's ``metrics.json`` says of how it went."""
    metrics = json.loads((run_dir / "metrics.json").read_text())
    keys = ("epochs", "best_epoch", "stop_reason", "train_seconds", "init_from")
    return {"dev_f1": metrics["dev"]["f1"], **{k: metrics[k] for k in keys if k in metrics},
            "train_config": metrics["config"]["train"]}


def curve(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The adaptation curve of the per-run records: test F1 by size and kind, and whether
    the targets hold (fine-tuned >= both others at every size, >= zero-shot + 5 at the
    largest)."""
    zero = records.get("zero-shot", {}).get("test", {}).get("f1")
    sizes = sorted({parse_run(n)[1] for n in records if n != "zero-shot"})
    rows = []
    for size in sizes:
        row: dict[str, Any] = {"size": size, "zero-shot": zero}
        for kind in RUN_KINDS[1:]:
            record = records.get(f"{kind}-{size}")
            row[kind] = None if record is None else record["test"]["f1"]
            row[f"{kind}_stop"] = None if record is None else record.get("stop_reason")
        rows.append(row)
    complete = [r for r in rows if None not in (r["zero-shot"], r["scratch"], r["finetune"])]
    targets = {
        "finetune_at_least_both": all(r["finetune"] >= max(r["scratch"], r["zero-shot"])
                                      for r in complete) if complete else None,
        "finetune_gain_at_largest": (complete[-1]["finetune"] - complete[-1]["zero-shot"]
                                     if complete else None),
    }
    return {"rows": rows, "targets": targets}


def _cell(row: Mapping[str, Any], kind: str) -> str:
    value = row[kind]
    if value is None:
        return "–"
    stop = row.get(f"{kind}_stop")
    return f"{value:.2f}" + (f" ({stop})" if stop else "")


def markdown_table(summary: Mapping[str, Any]) -> str:
    """The curve as a Markdown table: test F1 per size and kind, how each run ended."""
    lines = ["| training documents | zero-shot | from scratch | fine-tuned |",
             "|---|---|---|---|"]
    for row in summary["rows"]:
        cells = {kind: _cell(row, kind) for kind in RUN_KINDS}
        lines.append(f"| {row['size']} | {cells['zero-shot']} | {cells['scratch']} | "
                     f"**{cells['finetune']}** |")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    """The command line of ``benchmarks/adaptation.py``."""
    p = argparse.ArgumentParser(
        allow_abbrev=False, prog="adaptation.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", help="the OntoNotes directory (train/dev/test.gold_conll.gz)")
    p.add_argument("--genre", default="bc", help="OntoNotes genre of the new domain")
    p.add_argument("--keep", nargs="*", default=[], metavar="TYPE",
                   help="OntoNotes types kept beside the four mapped ones (e.g. DATE)")
    p.add_argument("--runs", nargs="*", default=[], metavar="RUN",
                   help="zero-shot, scratch-N, finetune-N (N training documents)")
    p.add_argument("--model", default="conll03", help="the model to adapt")
    p.add_argument("--preset", default=str(ROOT / "configs" / "sample.toml"),
                   help="train.py preset of every run")
    p.add_argument("--epochs", type=int, default=30, help="epoch cap of every run")
    p.add_argument("--patience", type=int, default=5, help="early-stopping patience")
    p.add_argument("--max-minutes", type=float, default=15.0, help="time budget of a run")
    p.add_argument("--seed", type=int, default=1, help="document order and training seed")
    p.add_argument("--work", default="runs/adaptation", help="corpora and run directories")
    p.add_argument("--out", required=True, help="measurement folder: one JSON and log per run")
    p.add_argument("--name", default="adaptation",
                   help="the summary's file name in --out (<name>.json)")
    p.add_argument("--resume", action="store_true",
                   help="a run whose directory holds a checkpoint goes on from it "
                        "(train.py --resume) under the --epochs and --max-minutes given")
    p.add_argument("--reuse", action="store_true",
                   help="a run whose directory holds a finished run (metrics.json) is scored "
                        "without training it again")
    p.add_argument("--variant", default="",
                   help="a name for runs trained with more train.py arguments (after --): "
                        "their records and directories are <genre>[+TYPE]~<variant>-<run>")
    p.add_argument("--start-types-test", default=None, metavar="DIR",
                   help="also score each trained run on the CoNLL-2003 dev and test splits "
                        "in DIR, the starting model's types only (its other predictions: O)")
    p.add_argument("--add-start-types-dev", action="store_true",
                   help="with --start-types-test: a recorded run whose record lacks the "
                        "CoNLL-2003 dev scores gets them (nothing else in it changes); "
                        "nothing is trained")
    p.add_argument("train_args", nargs="*", help="more train.py arguments (after --)")
    p.add_argument("--summarise", action="store_true",
                   help="write <name>.json from the runs' records in --out and print the table")
    return p


def _end_with_parent() -> None:
    from docgraph.runtime.lifetime import set_parent_death_signal

    set_parent_death_signal(signal.SIGTERM)


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=ROOT, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _domain(args: argparse.Namespace) -> str:
    """The records' and run directories' prefix: genre, kept types, variant."""
    variant = f"~{args.variant}" if args.variant else ""
    return f"{args.genre}{''.join('+' + k for k in args.keep)}{variant}"


def _summarise(args: argparse.Namespace, out: Path) -> int:
    prefix = f"{_domain(args)}-"
    records = {p.stem[len(prefix):]: json.loads(p.read_text())
               for p in sorted((out / "runs").glob(f"{prefix}*.json"))}
    summary = {"genre": args.genre, "keep": args.keep, "model": args.model,
               **curve(records), "runs": records}
    atomic_write_json(out / f"{args.name}.json", summary)
    print(markdown_table(summary))
    print(json.dumps(summary["targets"]))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Train and score the runs asked for (one JSON record each in ``--out/runs``; a run
    with a record is skipped), or ``--summarise`` them."""
    args = parser().parse_args(argv)
    out = Path(args.out)
    if args.summarise:
        return _summarise(args, out)
    if not args.data_dir:
        parser().error("--data-dir is required to train or score runs")
    for name in args.runs:
        parse_run(name)
    if args.train_args and not args.variant:
        parser().error("more train.py arguments (after --) need --variant to name their runs")
    from docgraph.data.registry import load_dataset
    from docgraph.runtime.machine import cpu_model
    from docgraph.tagging.tagger import Tagger

    splits = load_dataset("ontonotes", args.data_dir)
    start_test = None  # (CoNLL-2003 dev and test, the starting model's types), read once
    if args.start_types_test:
        start_test = (load_dataset("conll03", args.start_types_test, splits=("dev", "test")),
                      Tagger.load(args.model).entity_types)
    mapping = type_map(args.keep)
    domain = _domain(args)
    work = Path(args.work)
    for name in args.runs:
        record_path = out / "runs" / f"{domain}-{name}.json"
        earlier: dict[str, Any] | None = None
        if args.add_start_types_dev:  # scores added to recorded runs; nothing trained
            if record_path.is_file() and start_test is not None:
                _add_start_types_dev(record_path, work / f"{domain}-{name}", *start_test)
            else:
                print(f"{name}: no record ({record_path}) or no --start-types-test", flush=True)
            continue
        if record_path.is_file():
            if not (args.resume and parse_run(name)[0] != "zero-shot"):
                print(f"{name}: recorded already ({record_path})", flush=True)
                continue
            earlier = json.loads(record_path.read_text())  # kept in the new record
        kind, size = parse_run(name)
        corpus = select_documents(splits, args.genre, size or 1, args.seed, mapping)
        record: dict[str, Any] = {
            "run": name, "kind": kind, "size": size, "genre": args.genre, "keep": args.keep,
            "train_documents": [d.doc_id for d in corpus["train"]] if size else [],
            "train_tokens": sum(d.num_tokens for d in corpus["train"]) if size else 0,
            "dev_documents": len(corpus["dev"]), "test_documents": len(corpus["test"]),
            "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M"),
            "commit": _commit(), "cpu": cpu_model(),
        }
        start = time.perf_counter()
        if kind == "zero-shot":
            model: str | Path = args.model
        else:
            data = write_corpus(work / f"{domain}-{size}", corpus)
            model = work / f"{domain}-{name}"
            if args.reuse and (model / "metrics.json").is_file():  # trained: score it
                command = []
            elif args.resume and (model / "last.pt").is_file():  # go on, with the new caps
                command = [sys.executable, str(ROOT / "scripts" / "train.py"), "--resume",
                           str(model), "--epochs", str(args.epochs), "--max-minutes",
                           str(args.max_minutes), "--quiet"]
            else:
                command = train_command(kind, data, model, args.model, args.preset,
                                        args.epochs, args.patience, args.max_minutes,
                                        args.seed, args.train_args)
            if command:
                record["command"] = " ".join(command[1:])
                print(f"{name}: {record['command']}", flush=True)
                # the training ends with this tool (it checkpoints on SIGTERM): none outlives it
                done = subprocess.run(command, capture_output=True, text=True,
                                      preexec_fn=_end_with_parent)
                if done.returncode != 0:
                    print(done.stderr, file=sys.stderr)
                    return done.returncode
            else:
                record["command"] = json.loads((model / "metrics.json").read_text())["command"]
                print(f"{name}: trained already ({model}), scored", flush=True)
            record.update(_run_record(model))
            if earlier is not None:
                record["before_resuming"] = {k: earlier.get(k) for k in (
                    "command", "epochs", "best_epoch", "stop_reason", "dev_f1", "test",
                    "train_config")}
            (out / "runs").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(model / "train.log", out / "runs" / f"{domain}-{name}.log")
        # each sentence decoded alone, as every record of the curve (whatever the model's default)
        tagger = Tagger.load(model, speed="faithful", consistency=False)
        record["test"] = test_scores(tagger, corpus["test"])
        if start_test is not None and kind != "zero-shot":
            conll, start_types = start_test
            for split in ("dev", "test"):  # dev chooses between settings
                record[f"start_types_{split}"] = _start_types_scores(tagger, conll[split],
                                                                     start_types)
        record["seconds"] = round(time.perf_counter() - start, 1)
        atomic_write_json(record_path, record)
        print(f"{name}: test F1 {record['test']['f1']:.2f} ({record['seconds']} s)",
              flush=True)
    return 0
