"""What the scripts do once their arguments are parsed and checked.

:mod:`docgraph.cli` parses and checks the command line with :mod:`docgraph.cli.arguments`, which
does not import torch (a bad flag is rejected in a fraction of a second), and imports this
module, which imports torch and the library, only then; :func:`train`, :func:`evaluate` and
:func:`predict` do the work.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from docgraph.cli.arguments import (
    TaggingInputs,
    UsageError,
    fail,
    is_tty,
    setup_logging,
)
from docgraph.config import ExperimentConfig, check_processes, section_settings
from docgraph.config.errors import DocgraphError
from docgraph.config.fields import settings_of
from docgraph.config.tagging import TaggingConfig, approximation_of
from docgraph.data.conll import (
    first_line_of_type,
    write_conll,
)
from docgraph.data.document import Document
from docgraph.data.registry import (
    corpus_files,
    labelled_format,
    load_dataset,
    read_labelled,
    run_split_file,
)
from docgraph.data.stats import GRAPH_KEYS, corpus_statistics, format_statistics
from docgraph.graph import graph_statistics
from docgraph.metrics import consistency_text, format_table
from docgraph.persistence.checkpoint import atomic_write_json, atomic_write_text
from docgraph.persistence.model_dir import OverrideError
from docgraph.persistence.run_lock import RunLock, run_directory
from docgraph.persistence.speeds import model_speeds
from docgraph.runtime.atomic import WriteError, atomic_write
from docgraph.runtime.lifetime import exit_status, interruption, stop_on_signals
from docgraph.runtime.machine import resolve_device
from docgraph.runtime.processes import (
    ProcessError,
    ProcessFailedError,
    WorkerError,
    available_cores,
    cleanup_distributed,
    default_processes,
    init_distributed,
    launched_by_torchrun,
    spawn,
)
from docgraph.runtime.progress import ProgressSettings, is_rank_zero
from docgraph.runtime.progress import configure as configure_progress
from docgraph.tagging.prediction_io import (
    ProgressReport,
    ReadOptions,
    read_documents,
    write_predictions,
)
from docgraph.tagging.tagger import Tagger, UnknownTypeError
from docgraph.training.experiment import (
    interrupted_message,
    remove_previous_run,
    run_experiment,
    run_seeds,
    saved_message,
)
from docgraph.training.loop import TrainingError
from docgraph.viz.edges import format_edge_table, inspection_words, noisy_edges, repeated_words
from docgraph.viz.html import page_title, to_html

#: Errors a command reports in one line instead of a traceback: every error of docgraph's
#: own (the faults it tells apart, a dead process or a failed write, are caught before
#: these), and the ``ValueError`` / ``FileNotFoundError`` of the libraries underneath.
BAD_INPUT: tuple[type[BaseException], ...] = (DocgraphError, ValueError, FileNotFoundError)


def _train(config: ExperimentConfig, seeds: Sequence[int] | None, resume: bool,
           settings: ProgressSettings, lock: RunLock | None = None) -> None:
    """Train one run (or one per seed) in the output directory that ``lock`` holds (else
    the run takes it) and print the result line (rank 0 only); only the first process of a
    data-parallel run logs more than warnings and shows progress (``DOCGRAPH_LOG_RANKS=all``:
    every process logs)."""

    every_rank = os.environ.get("DOCGRAPH_LOG_RANKS") == "all"
    setup_logging(not settings.enabled or not (is_rank_zero() or every_rank))
    configure_progress(**vars(settings))
    if seeds:
        summary = run_seeds(config, seeds, progress=settings.enabled, lock=lock)
        split = "test" if "test_f1_mean" in summary else "dev"  # no test file of one's own
        if summary:
            print(f"{split} F1 over seeds {list(seeds)}: {summary[f'{split}_f1_mean']:.2f} ± "
                  f"{summary[f'{split}_f1_std']:.2f}", flush=True)
        return
    metrics = run_experiment(config, resume=resume, progress=settings.enabled, lock=lock)
    if metrics:
        print(f"best epoch {metrics['best_epoch']}/{metrics['epochs']} ({metrics['stop_reason']})"
              f"  dev F1 {metrics['dev']['f1']:.2f}  "
              + (f"test F1 {metrics['test']['f1']:.2f}  " if "test" in metrics else "no test "
                 "file  ") + f"({config.output_dir})", flush=True)


def _train_exit_code(err: BaseException) -> int:
    """Exit status of a failed training: 2 for bad input, 1 when training itself failed."""

    return 1 if isinstance(err, TrainingError) else 2


def _spawned_train(config: ExperimentConfig, seeds: Sequence[int] | None, resume: bool,
                   settings: ProgressSettings, lock: RunLock | None = None) -> None:
    """One process of :func:`docgraph.runtime.processes.spawn`: train; an error of bad
    input, of training or of writing is handed to the launcher, which says it in one line
    (:class:`~docgraph.runtime.processes.ProcessError`); ``lock`` is its share of the
    launcher's lock of the output directory."""

    try:
        _train(config, seeds, resume, settings, lock)
    except WriteError as err:
        raise ProcessError(str(err), 1) from None
    except BAD_INPUT as err:
        raise ProcessError(str(err), _train_exit_code(err)) from None


def _stopped(config: ExperimentConfig | None, seeds: Sequence[int] | None, first: str) -> None:
    """Say on stderr why training stopped (``first``) and, when the run directory is known,
    what it holds and how to resume (rank 0 only)."""
    if not is_rank_zero():
        return
    lines = [first]
    if config is not None:
        lines.append(saved_message(config.output_dir, seeds))
    print("\n".join(lines), file=sys.stderr, flush=True)


def train(args: argparse.Namespace, config: ExperimentConfig) -> int:
    """``scripts/train.py`` after its arguments were checked (:func:`docgraph.cli.train_main`),
    with the configuration that check built.

    On a CPU the run is data-parallel over ``config.train.processes`` processes (automatic:
    one per core, at most 2), started here; under ``torchrun`` the processes already exist.
    The output directory (or the one of ``--resume``) is locked here before any process is
    started or anything written (:mod:`docgraph.persistence.run_lock`), and the processes share
    the lock: a second run into it fails at once with a one-line error (exit status 2).

    However the run ends, stderr says so in a line or two: the error (the first of any
    process: a process's error, the signal that killed it, a file that could not be written,
    with its cause), what ``last.pt`` and ``model.pt`` hold and the command that resumes the
    run. SIGTERM stops it as Ctrl-C does (exit status 143, 130 for Ctrl-C).
    """
    with stop_on_signals():
        return _train_command(args, config)


def _train_command(args: argparse.Namespace, config: ExperimentConfig) -> int:
    """:func:`train` with SIGTERM taken as Ctrl-C."""
    setup_logging(args.quiet)
    settings = ProgressSettings(enabled=not args.quiet, interval=args.progress_interval,
                                tty=is_tty())
    torchrun = launched_by_torchrun()
    try:
        if not torchrun:
            check_processes(config.train.processes, "--processes" if args.processes is not None
                            else "[train] processes")
        processes = 1 if torchrun else config.train.processes or default_processes(config.device)
        if processes > 1:
            if resolve_device(config.device).type == "cuda":
                raise UsageError("--processes > 1 is for CPU training; use torchrun on GPUs")
            corpus_files(config)  # fail here
        if torchrun:  # the first process locks the directory (run_experiment, run_seeds)
            init_distributed(config.device)
        with contextlib.nullcontext() if torchrun else run_directory(config.output_dir) as lock:
            if args.overwrite and is_rank_zero():
                remove_previous_run(config.output_dir, args.seeds)
            if processes > 1:
                threads = config.train.threads or max(1, available_cores() // processes)
                logging.getLogger("docgraph").info(
                    "training in %d processes with %d thread(s) each (--processes 1: one "
                    "process)", processes, threads)
                spawn(_spawned_train, processes, config, args.seeds, bool(args.resume),
                      settings, lock, threads=threads, name="training process")
            else:
                _train(config, args.seeds, bool(args.resume), settings, lock)
    except ProcessFailedError as err:
        if err.status == 2:  # bad input: the process's own one-line error, as in one process
            fail(err.detail or str(err))
        if err.traceback:  # an unexpected error (a bug): where it happened
            print(err.traceback.rstrip(), file=sys.stderr)
        _stopped(config, args.seeds, f"error: {err}")
        return err.status
    except WriteError as err:
        _stopped(config, args.seeds, f"error: {err}")
        return 1
    except BAD_INPUT as err:
        if _train_exit_code(err) == 1:
            print(f"error: {err}", file=sys.stderr)
            return 1
        fail(str(err))
    except KeyboardInterrupt:
        if is_rank_zero():
            print("\n" + interrupted_message(config.output_dir, args.seeds, interruption()),
                  file=sys.stderr, flush=True)
        return exit_status()
    finally:
        if torchrun:
            cleanup_distributed()
    return 0


_TAGGING_SETTINGS = dict(settings_of(TaggingConfig))


def _load_tagger(args: argparse.Namespace, checked: TaggingInputs,
                 default_speed: str | None = None) -> Tagger:
    """The model of a tagging command (the directory ``--model`` was found to stand for,
    ``--device``) with its overrides (``--lm``, ``--threshold``, ``--precision``, ``--speed``
    (else ``default_speed``, else the model's default) and the approximations over it) and
    ``--consistency``; an override the model cannot take is a usage error naming its flag."""
    device = resolve_device(args.device)
    speed = approximation_of(args.speed or default_speed, mc_dropout=args.mc_dropout,
                             window_encoding=args.window_encoding, mc_samples=args.mc_samples,
                             int8=None if args.int8 is None else args.int8 == "on",
                             device=device.type, model=model_speeds(checked.model_dir))
    try:
        return Tagger.load(checked.model_dir, device, lm=args.lm,
                           threshold=args.threshold, precision=args.precision,
                           max_doc_tokens=getattr(args, "max_doc_tokens", None), speed=speed,
                           consistency=args.consistency)
    except OverrideError as err:
        flag = next((setting.flag for settings in (section_settings("model"),
                                                   section_settings(""), _TAGGING_SETTINGS)
                     if (setting := settings.get(err.setting)) is not None
                     and setting.flag), None)
        if flag is None:  # an override no flag sets (Python API only)
            raise
        raise UsageError(err.reason, flag, err.value) from None


def _dataset_split(args: argparse.Namespace, config: ExperimentConfig
                   ) -> tuple[str, list[Document]]:
    """``(dataset, documents)`` of ``--split`` of ``--dataset`` in ``--data-dir``; by default
    the model's corpus, in its directory when the dataset is the model's (for a model trained
    on files of its own, ``--train``, its file of that split)."""
    if args.dataset is None and args.data_dir is None:
        own = run_split_file(config.to_dict(), args.split)
        if own is not None:
            return own.name, read_labelled(own)
    dataset = args.dataset or config.dataset
    data_dir = args.data_dir if args.data_dir is not None else (
        config.data_dir if dataset == config.dataset else None)
    return dataset, load_dataset(dataset, data_dir, splits=(args.split,))[args.split]


def _evaluation_dir(model: str, checked: TaggingInputs) -> Path:
    """Where ``evaluate.py`` writes by default: the model directory, or, for a shipped model
    given by name (whose directory is part of the installed package),
    ``<name>-evaluation`` in the working directory."""
    return Path(f"{model}-evaluation") if checked.shipped else checked.model_dir


def evaluate(args: argparse.Namespace, checked: TaggingInputs) -> int:
    """``scripts/evaluate.py`` with its parsed arguments (:func:`docgraph.cli.evaluate_main`):
    the model's :meth:`Tagger.evaluate <docgraph.tagging.tagger.Tagger.evaluate>` on a split
    of its corpus or a CoNLL file, printed and written to ``<name>_metrics.json`` and
    ``<name>_predictions.conll``.

    Building the graphs and tagging show their progress (:mod:`docgraph.runtime.progress`; none
    with ``--quiet``). Ctrl-C and SIGTERM stop it with one line naming what was not written
    (exit status 130 or 143): its tagging processes end at once and no temporary file stays.
    """
    name = Path(args.data).stem if args.data else args.split
    out_dir = Path(args.output_dir or _evaluation_dir(args.model, checked))
    files = [out_dir / f"{name}_metrics.json", out_dir / f"{name}_predictions.conll"]
    written: list[Path] = []
    with stop_on_signals():
        try:
            return _evaluate(args, checked, name, files, written)
        except KeyboardInterrupt:
            missing = [str(f) for f in files if f not in written]
            verb = "was" if len(missing) == 1 else "were"
            print(f"\n{interruption()}: {' and '.join(missing)} {verb} not written",
                  file=sys.stderr, flush=True)
            return exit_status()


def _evaluate(args: argparse.Namespace, checked: TaggingInputs, name: str, files: list[Path],
              written: list[Path]) -> int:
    """:func:`evaluate` with SIGTERM taken as Ctrl-C: scores ``--data`` or ``--split`` and
    writes ``files`` (metrics, predictions), each added to ``written`` once it is whole."""
    setup_logging(args.quiet)
    configure_progress(enabled=not args.quiet, interval=args.progress_interval, tty=is_tty())
    try:
        tagger = _load_tagger(args, checked, default_speed="faithful")  # what the cards report
        if args.data:
            documents = read_labelled(args.data)
        else:
            _, documents = _dataset_split(args, tagger.config)
        processes = tagger.processes_for(documents, args.processes)
        if processes > 1:
            logging.getLogger("docgraph").info(
                "tagging in %d processes (--processes 1: one process)", processes)
        result = tagger.evaluate(documents, processes, args.mc_seed,
                                 progress=None if args.quiet else name)
    except UnknownTypeError as err:
        line = (first_line_of_type(args.data, err.kind)
                if args.data and labelled_format(args.data) == "conll" else None)
        fail(f"{args.data}:{line}: {err.reason}" if line is not None else str(err))
    except WorkerError as err:
        return _worker_died(err, f"{' and '.join(str(f) for f in files)} were not written")
    except BAD_INPUT as err:
        fail(str(err))
    scores, consistency = result.scores, result.consistency
    metrics_file, predictions_file = files
    print(format_table(scores, title=f"{name} ({len(documents)} documents)"))
    print(consistency_text(consistency))
    override = {} if args.threshold is None else {"threshold": args.threshold}
    if args.mc_seed:
        override["mc_seed"] = args.mc_seed
    atomic_write_json(metrics_file,
                      {name: scores.to_dict(), "consistency": consistency.to_dict(), **override})
    written.append(metrics_file)
    write_conll(predictions_file, result.documents, result.predictions)
    written.append(predictions_file)
    print(f"wrote {metrics_file} and {predictions_file}")
    return 0


def _worker_died(err: WorkerError, intact: str) -> int:
    """Say that a tagging process died (which, how) and what is intact; the exit status of
    a fault (1), not of bad input."""
    print(f"error: {err}: {intact}; run the command again (--processes 1 tags in this "
          "process)", file=sys.stderr, flush=True)
    return 1


def predict(args: argparse.Namespace, checked: TaggingInputs) -> int:
    """``scripts/predict.py`` with its parsed arguments (:func:`docgraph.cli.predict_main`).

    JSON lines and CoNLL are written as the input is tagged, a few thousand tokens at a time
    (:mod:`docgraph.tagging.prediction_io`, :meth:`Tagger.tag_chunks
    <docgraph.tagging.tagger.Tagger.tag_chunks>`); the HTML page is built
    whole. Ctrl-C and SIGTERM stop it with one line (exit status 130 or 143): its tagging
    processes end at once and ``--output`` is left as it was.
    """
    with stop_on_signals():
        try:
            return _predict(args, checked)
        except KeyboardInterrupt:
            kept = (f"{args.output} was left as it was" if args.output
                    else "the output above is incomplete")
            print(f"\n{interruption()}: {kept}", file=sys.stderr, flush=True)
            return exit_status()


def _predict(args: argparse.Namespace, checked: TaggingInputs) -> int:
    """:func:`predict` with SIGTERM taken as Ctrl-C."""
    setup_logging(quiet=True)
    try:
        tagger = _load_tagger(args, checked)
        paths = list(checked.inputs)
        options = ReadOptions(args.input_format, args.tokenized, args.documents,
                              tagger.max_doc_tokens or sys.maxsize)
        if args.format == "html":
            documents = [doc for path in paths for doc in read_documents(path, options)]
            page = tagger.to_html(documents, title=page_title(args.inputs), mc_seed=args.mc_seed,
                                  scores=args.scores or args.min_score is not None)
            if args.output:
                atomic_write_text(args.output, page)
            else:
                sys.stdout.write(page)
            return 0
        if args.output:
            atomic_write(args.output, lambda tmp: _stream_predictions(tagger, args, paths,
                                                                      options, tmp))
        else:
            _stream_predictions(tagger, args, paths, options, None)
    except WorkerError as err:
        return _worker_died(err, f"{args.output} was left as it was" if args.output
                            else "the output above is incomplete")
    except WriteError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except BAD_INPUT as err:
        fail(str(err))
    return 0


def _stream_predictions(tagger: Tagger, args: argparse.Namespace, paths: list[Path],
                        options: ReadOptions, output: str | None) -> None:
    """Tag the input files chunk by chunk, writing each chunk's records to ``output`` (a
    file; stdout when ``None``) as soon as it is tagged, with progress on stderr
    (:func:`~docgraph.tagging.prediction_io.write_predictions`)."""
    progress = ProgressReport(paths, enabled=not args.quiet, interval=args.progress_interval)
    with (open(output, "w", encoding="utf-8", newline="") if output
          else contextlib.nullcontext(sys.stdout)) as out:
        write_predictions(tagger, paths, options, args.format, out, args.processes,
                          args.mc_seed, args.scores, args.min_score, progress)


def stats(args: argparse.Namespace) -> int:
    """``scripts/stats.py`` with its parsed arguments (:func:`docgraph.cli.stats_main`):
    corpus statistics and the size of the document graphs, split by split."""
    try:
        data = load_dataset(args.dataset, args.data_dir)
        found = {}
        for split, documents in data.items():
            graphs = graph_statistics(documents, max_neighbours=args.neighbours, seed=args.seed)
            found[split] = {**corpus_statistics(documents),
                            **{key: graphs[key] for key in GRAPH_KEYS}}
    except BAD_INPUT as err:
        fail(str(err))
    if args.json:
        print(json.dumps(found, indent=2))
    else:
        print("\n".join(format_statistics(split, values) for split, values in found.items()))
    return 0


def visualize(args: argparse.Namespace, checked: TaggingInputs) -> int:
    """``scripts/visualize.py`` with its parsed arguments (:func:`docgraph.cli.visualize_main`):
    a drawing of one document's graph, the interactive HTML page, and/or the noisiest edges,
    from the documents as :meth:`Tagger.inspect <docgraph.tagging.tagger.Tagger.inspect>` sees
    them. ``--threshold`` and ``--lm`` are applied to the model's configuration before it is
    built (:meth:`Tagger.load <docgraph.tagging.tagger.Tagger.load>`), so the page shows the
    threshold the model prunes with."""
    from docgraph.viz.draw import draw_document_graph  # matplotlib: for this command only

    try:
        tagger = _load_tagger(args, checked)
        if args.data:  # any input predict.py reads; raw text has no gold tags to show
            source = Path(args.data).name
            documents = read_documents(Path(args.data), ReadOptions(), labelled=True)
        else:
            dataset, documents = _dataset_split(args, tagger.config)
            source = f"{dataset} {args.split}"
        labelled = any(t != "O" for d in documents for s in d.sentences for t in s.tags)
        chunks = tagger.chunks(documents)
        if args.doc is not None and args.doc >= len(chunks):
            where = args.data if args.data else f"the {args.split} split"
            fail(f"--doc {args.doc}: {where} has {len(chunks)} documents "
                 f"(0..{len(chunks) - 1})")
        selected = [chunks[args.doc]] if args.doc is not None else chunks
        graphs = tagger.inspect(selected, mc_seed=args.mc_seed,
                                gold=True if labelled or not args.data else None,
                                scores=args.scores)
        if args.out is not None:
            words = args.word
            repeated = repeated_words(graphs[0])
            if words is None and 0 < args.max_words < len(repeated):
                words = inspection_words(graphs[0], args.max_words) or None
                if words is None:
                    print("no repeated word is an entity or a predicted mention: drawing every "
                          "word")
                else:
                    print(f"drawing the {len(words)} of {len(repeated)} repeated words that are "
                          "entities or predicted mentions, most inconsistently tagged first "
                          f"({', '.join(words)}); --max-words 0 draws all, --word W one word")
            draw_document_graph(graphs[0], args.out, word=words, layout=args.layout)
        if args.html is not None:
            atomic_write_text(args.html, to_html(
                graphs, title=f"{Path(args.model).name}: {source}"))
    except BAD_INPUT as err:
        fail(str(err))
    if args.out is not None:
        print(f"wrote {args.out}")
    if args.html is not None:
        print(f"wrote {args.html} ({len(graphs)} documents)")
    if args.noisy is not None:
        print(format_edge_table(noisy_edges(graphs, args.noisy)))
    return 0
