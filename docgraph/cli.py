"""Scripts' argument parsing; flags map onto :class:`~docgraph.config.ExperimentConfig`.

Precedence: built-in defaults < the TOML preset (``--config FILE``, or ``configs/<dataset>.toml``
when it exists) < command-line flags.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from docgraph.presets import load_toml, preset_path
from docgraph.validation import check_field, check_values

if TYPE_CHECKING:
    from docgraph.config import ExperimentConfig
    from docgraph.data.document import Document

DATASETS = ("sample", "conll03", "ontonotes", "column")

# flag -> (section, key, type, help)
_VALUE_FLAGS: dict[str, tuple[str | None, str, Callable[[str], Any], str]] = {
    "--window": ("model", "window", int, "cross-sentence window k (0 disables the module)"),
    "--samples": ("model", "num_samples", int, "Monte-Carlo dropout passes T"),
    "--threshold": ("model", "threshold", float, "uncertainty threshold for pruning"),
    "--theta": ("model", "theta", float, "weight of the auxiliary relation loss"),
    "--hidden": ("model", "hidden", int, "word BiLSTM hidden size per direction"),
    "--char-hidden": ("model", "char_hidden", int, "character BiLSTM hidden size per direction"),
    "--char-dim": ("model", "char_dim", int, "character embedding size"),
    "--sent-dim": ("model", "sent_dim", int, "sentence representation size d_s"),
    "--uncertainty-hidden": ("model", "uncertainty_hidden", int,
                             "uncertainty tagger hidden size per direction"),
    "--dropout": ("model", "dropout", float, "dropout on BiLSTM inputs and outputs"),
    "--isolated": ("model", "isolated", str, "graph layer on tokens without neighbours: "
                   "identity|gate"),
    "--window-encoding": ("model", "window_encoding", str, "cross-sentence windows: "
                          "concat (paper) | per_sentence (faster approximation)"),
    "--mc-dropout": ("model", "mc_dropout", str, "Monte-Carlo dropout passes: "
                     "full (paper) | output (faster approximation, one BiLSTM pass)"),
    "--relation-labels": ("model", "relation_labels", str,
                          "positives of the auxiliary classifier: type (O is a type, paper) | "
                          "entity (O-O edges left out of L_a)"),
    "--unpruned-epochs": ("model", "unpruned_epochs", int,
                          "warm-up: the first N epochs run the graph unpruned"),
    "--neighbours": ("graph", "max_neighbours", int,
                     "neighbours p sampled per token (0 keeps all)"),
    "--graph-seed": ("graph", "seed", int, "seed of the neighbour sampling"),
    "--max-doc-tokens": ("graph", "max_doc_tokens", int,
                         "split longer documents into chunks of whole sentences"),
    "--epochs": ("train", "epochs", int, "maximum number of epochs"),
    "--patience": ("train", "patience", int, "early-stopping patience in epochs"),
    "--optimizer": ("train", "optimizer", str, "sgd (paper) or adam"),
    "--lr": ("train", "lr", float, "learning rate"),
    "--momentum": ("train", "momentum", float, "SGD momentum"),
    "--weight-decay": ("train", "weight_decay", float, "L2 regularisation"),
    "--clip-norm": ("train", "clip_norm", float, "gradient clipping norm (0 disables)"),
    "--lr-schedule": ("train", "lr_schedule", str, "none|inverse|cosine"),
    "--lr-decay": ("train", "lr_decay", float, "decay of the inverse schedule"),
    "--batch-tokens": ("train", "batch_tokens", int, "token budget of a training batch"),
    "--eval-batch-tokens": ("train", "eval_batch_tokens", int, "token budget when evaluating"),
    "--loss-reduction": ("train", "loss_reduction", str, "sum|sentence_mean"),
    "--threads": ("train", "threads", int,
                  "torch intra-op threads (0: one per CPU process; torch default on CUDA)"),
    "--processes": ("train", "processes", int,
                    "training processes on a CPU (0: one per core, at most 2; 1: one process)"),
    "--max-minutes": ("train", "max_minutes", float,
                      "wall-clock budget: start no epoch that would end past it (0: no limit)"),
}

_SWITCHES: dict[str, dict[str, dict[str, Any]]] = {
    "--no-cross-sentence": {"model": {"cross_sentence": False}},
    "--no-graph": {"model": {"graph": False}},
    "--no-pruning": {"model": {"pruning": False}},
    "--no-edge-weights": {"model": {"edge_weights": False}},
    "--previous-only": {"model": {"use_next": False}},
    "--next-only": {"model": {"use_previous": False}},
    "--current-sentence-only": {"model": {"use_previous": False, "use_next": False}},
    "--baseline": {"model": {"cross_sentence": False, "graph": False}},
    "--constrained-decoding": {"model": {"constrained_decoding": True}},
    "--attach-uncertainty-input": {"model": {"detach_uncertainty_input": False}},
    "--fast": {"model": {"window_encoding": "per_sentence", "mc_dropout": "output"}},
    "--freeze-embeddings": {"model": {"freeze_embeddings": True}},
}


class UsageError(ValueError):
    """A bad command-line argument."""


def fail(message: str) -> NoReturn:
    """Print one line to stderr and exit with status 2 (no traceback)."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def setup_logging(quiet: bool = False) -> None:
    """Log ``docgraph`` messages to stderr, one line each."""
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO,
                        format="%(message)s", stream=sys.stderr)


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """``--dataset`` and ``--data-dir``."""
    parser.add_argument("--dataset", choices=DATASETS, default=None,
                        help="corpus (default: sample, the bundled corpus)")
    parser.add_argument("--data-dir", default=None,
                        help="corpus directory (default: $DOCGRAPH_DATA_DIR/<dataset>)")


def train_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/train.py``."""
    p = argparse.ArgumentParser(
        prog="train.py", description="Train GCDoc (or an ablation / the BiLSTM-CRF baseline).")
    add_data_arguments(p)
    p.add_argument("--output-dir", default=None, help="run directory (default: runs/<dataset>)")
    p.add_argument("--config", default=None, help="TOML preset (default: configs/<dataset>.toml)")
    p.add_argument("--seed", type=int, default=None,
                   help="random seed of the run (default: the preset's, else 1)")
    p.add_argument("--seeds", type=int, nargs="+", default=None,
                   help="run once per seed and summarise test F1 as mean ± std")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None,
                   help="where to train (default: auto, a GPU when there is one)")
    p.add_argument("--embeddings", default=None, help="glove-6b-50d | none | PATH to vectors")
    p.add_argument("--lm", default=None, metavar="PATH",
                   help="Hugging Face encoder directory: add its frozen states as contextual "
                   "word features (pip install 'docgraph[lm]')")
    p.add_argument("--lm-context", type=int, default=None, metavar="N",
                   help="subwords of same-document context on each side of a sentence for "
                   "--lm (default 64; 0: sentence alone)")
    p.add_argument("--lm-pack", action="store_true", default=None,
                   help="encode consecutive sentences of a document in shared --lm windows "
                   "(each keeps at least --lm-context subwords per side; several times faster)")
    p.add_argument("--resume", metavar="DIR", default=None,
                   help="continue the interrupted run in DIR from its last checkpoint")
    p.add_argument("--quiet", action="store_true", help="no progress bar, warnings only")
    for flag, (_, _, kind, help_) in _VALUE_FLAGS.items():
        p.add_argument(flag, type=kind, default=None, help=help_)
    for flag, values in _SWITCHES.items():
        p.add_argument(flag, action="store_true", help=f"set {values}")
    return p


def config_from_args(args: argparse.Namespace, base: ExperimentConfig | None = None
                     ) -> ExperimentConfig:
    """Defaults < preset < flags; with ``base`` (a resumed run's saved config), base < flags."""
    from docgraph.config import ExperimentConfig, apply_overrides

    dataset = args.dataset or "sample"
    if base is not None:
        config = base
    else:
        config = ExperimentConfig(dataset=dataset, output_dir=f"runs/{dataset}")
        preset = Path(args.config) if args.config else preset_path(dataset)
        if args.config and not preset.is_file():
            raise UsageError(f"--config {args.config}: file not found")
        if preset is not None:
            config = apply_overrides(config, load_toml(preset), where=str(preset))
            if args.dataset and config.dataset != args.dataset:
                config = apply_overrides(config, {"dataset": args.dataset})
    overrides: dict[str, Any] = {}
    for key in ("data_dir", "output_dir", "seed", "device", "embeddings", "lm", "lm_context",
                "lm_pack"):
        value = getattr(args, key, None)
        if value is not None:
            overrides[key] = value
    for flag, (section, key, _, _) in _VALUE_FLAGS.items():
        value = getattr(args, flag.lstrip("-").replace("-", "_"))
        if value is not None:
            overrides.setdefault(section, {})[key] = value
    for flag, values in _SWITCHES.items():
        if getattr(args, flag.lstrip("-").replace("-", "_")):
            for section, kv in values.items():
                overrides.setdefault(section, {}).update(kv)
    if args.resume is not None:
        overrides["output_dir"] = args.resume
    return apply_overrides(config, overrides, where="command line")


def is_tty() -> bool:
    """Whether stderr is an interactive terminal (progress bars only then)."""
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


def _train(config: ExperimentConfig, seeds: Sequence[int] | None, resume: bool,
           progress: bool, quiet: bool) -> None:
    """Train one run (or one per seed) and print the result line (rank 0 only)."""
    from docgraph.experiment import run_experiment, run_seeds

    setup_logging(quiet)
    if seeds:
        summary = run_seeds(config, seeds, progress=progress)
        if summary:
            print(f"test F1 over seeds {list(seeds)}: {summary['test_f1_mean']:.2f} ± "
                  f"{summary['test_f1_std']:.2f}", flush=True)
        return
    metrics = run_experiment(config, resume=resume, progress=progress)
    if metrics:
        print(f"best epoch {metrics['best_epoch']}/{metrics['epochs']} ({metrics['stop_reason']})"
              f"  dev F1 {metrics['dev']['f1']:.2f}  test F1 {metrics['test']['f1']:.2f}  "
              f"({config.output_dir})", flush=True)


def _train_exit_code(err: BaseException) -> int:
    """Exit status of a failed training: 2 for bad input, 1 when training itself failed."""
    from docgraph.training import TrainingError

    return 1 if isinstance(err, TrainingError) else 2


def _spawned_train(config: ExperimentConfig, seeds: Sequence[int] | None, resume: bool,
                   progress: bool, quiet: bool) -> None:
    """One process of :func:`docgraph.distributed.spawn`: train, or exit with a clean error."""
    import torch.distributed as dist

    try:
        _train(config, seeds, resume, progress and dist.get_rank() == 0, quiet)
    except _train_errors() as err:
        if dist.get_rank() == 0:
            print(f"error: {err}", file=sys.stderr, flush=True)
        raise SystemExit(_train_exit_code(err)) from None


def _train_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that end training with a one-line error instead of a traceback."""
    from docgraph.checkpoint import CheckpointError
    from docgraph.data.errors import CorpusFormatError
    from docgraph.training import TrainingError

    return (UsageError, ValueError, FileNotFoundError, CheckpointError, CorpusFormatError,
            TrainingError)


def check_arguments(args: argparse.Namespace) -> None:
    """Check every configuration value of the command line and of its TOML preset before
    any work (and before torch is imported), naming the flag or the file and key.

    Raises:
        ConfigError: For the first value its field does not accept.
        UsageError: For a ``--config`` file that does not exist.
    """
    for flag, (section, key, _, _) in _VALUE_FLAGS.items():
        value = getattr(args, flag.lstrip("-").replace("-", "_"), None)
        if value is not None:
            check_field(section or "", key, value, flag)
    for key in ("seed", "lm_context"):
        value = getattr(args, key, None)
        if value is not None:
            check_field("", key, value, "--" + key.replace("_", "-"))
    for seed in getattr(args, "seeds", None) or ():
        check_field("", "seed", seed, "--seeds")
    if getattr(args, "resume", None):
        return  # the run's saved configuration is checked when it is read
    preset = Path(args.config) if args.config else preset_path(args.dataset or "sample")
    if args.config and not preset.is_file():
        raise UsageError(f"--config {args.config}: file not found")
    if preset is not None:
        check_values(load_toml(preset), str(preset))


def train_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/train.py``.

    On a CPU the run is data-parallel over ``config.train.processes`` processes (automatic:
    one per core, at most 2), started here; under ``torchrun`` the processes already exist.
    Every argument is checked before torch is imported (:func:`check_arguments`).
    """
    args = train_parser().parse_args(argv)
    try:
        check_arguments(args)
    except ValueError as err:  # ConfigError, UsageError, unreadable TOML
        fail(str(err))
    from docgraph import distributed
    from docgraph.config import ExperimentConfig

    setup_logging(args.quiet)
    torchrun = distributed.launched_by_torchrun()
    try:
        if args.resume and args.seeds:
            raise UsageError("--resume and --seeds cannot be combined")
        if args.resume and not Path(args.resume, "last.pt").is_file():
            raise UsageError(f"--resume {args.resume}: no checkpoint last.pt in that directory")
        base = None
        if args.resume:
            import json

            saved = Path(args.resume, "config.json")
            if saved.is_file():
                # the run's own configuration; flags given now (e.g. --epochs) override it
                base = ExperimentConfig.from_saved(json.loads(saved.read_text()))
        config = config_from_args(args, base)
        progress = is_tty() and not args.quiet
        processes = config.train.processes or distributed.default_processes(config.device)
        if not torchrun and processes > 1:
            from docgraph.machine import resolve_device

            if resolve_device(config.device).type == "cuda":
                raise UsageError("--processes > 1 is for CPU training; use torchrun on GPUs")
            from docgraph.data.registry import dataset_files

            dataset_files(config.dataset, config.data_dir)  # missing data: fail here, once
            threads = config.train.threads or max(
                1, distributed.available_cores() // processes)
            logging.getLogger("docgraph").info(
                "training in %d processes with %d thread(s) each (--processes 1: one process)",
                processes, threads)
            import torch.multiprocessing as mp

            # the worker printed the one-line error; torch would add a line per process it stops
            logging.getLogger("torch.multiprocessing.spawn").setLevel(logging.ERROR)
            try:
                distributed.spawn(_spawned_train, processes, config, args.seeds,
                                  bool(args.resume), progress, args.quiet, threads=threads)
            except mp.ProcessExitedException as err:
                raise SystemExit(err.exit_code if err.exit_code > 0 else 1) from None
            return 0
        if torchrun:
            distributed.init_distributed(config.device)
        _train(config, args.seeds, bool(args.resume), progress, args.quiet)
    except _train_errors() as err:
        if _train_exit_code(err) == 1:
            print(f"error: {err}", file=sys.stderr)
            return 1
        fail(str(err))
    finally:
        if torchrun:
            distributed.cleanup_distributed()
    return 0


def evaluate_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/evaluate.py``."""
    p = argparse.ArgumentParser(
        prog="evaluate.py",
        description="Score a trained model (conlleval P/R/F1 overall and per type).")
    p.add_argument("--model", required=True, help="model directory written by train.py")
    add_data_arguments(p)
    p.add_argument("--split", choices=("dev", "test"), default="test",
                   help="split to score (default: test)")
    p.add_argument("--data", default=None,
                   help="a labelled CoNLL column file to score instead of a dataset split")
    p.add_argument("--output-dir", default=None,
                   help="where to write <name>_metrics.json and <name>_predictions.conll "
                        "(default: the model directory)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where to tag (default: auto, a GPU when there is one)")
    p.add_argument("--threshold", type=float, default=None,
                   help="uncertainty threshold to prune the document graph with, instead of "
                        "the one the model was trained with (a value above ln(#labels), e.g. "
                        "100, prunes nothing)")
    add_processes_argument(p)
    return p


def add_processes_argument(p: argparse.ArgumentParser) -> None:
    """``--processes`` of the tagging tools (``evaluate.py``, ``predict.py``)."""
    p.add_argument("--processes", type=int, default=0, metavar="N",
                   help="tagging processes on a CPU (0: one per core, at most 2, when each "
                        "gets at least 20000 tokens, 160000 for a BiLSTM-CRF; 1: one process)")


def evaluate_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/evaluate.py``."""
    from docgraph import distributed
    from docgraph.checkpoint import CheckpointError, atomic_write_json
    from docgraph.data.conll import read_conll, write_conll
    from docgraph.data.errors import CorpusFormatError
    from docgraph.data.registry import load_dataset
    from docgraph.graph import split_long_documents
    from docgraph.inference import (
        evaluate,
        predict_in_processes,
        score_predictions,
        split_consistency,
    )
    from docgraph.machine import resolve_device
    from docgraph.metrics import format_table
    from docgraph.model_dir import ModelOverrides, load_model_dir, read_model_dir
    from docgraph.splits import PreparedSplit, prepare_split

    args = evaluate_parser().parse_args(argv)
    setup_logging()
    try:
        device = resolve_device(args.device)
        overrides = ModelOverrides(threshold=args.threshold)
        config, vocabs = read_model_dir(args.model)
        try:
            overrides.check(config, args.model)
        except ValueError as err:
            raise UsageError(f"--{err}") from None
        if args.data:
            if not Path(args.data).exists():
                raise UsageError(f"--data {args.data}: file not found")
            name, documents = Path(args.data).stem, read_conll(args.data)
        else:
            dataset = args.dataset or config.dataset
            data_dir = args.data_dir if args.data_dir is not None else (
                config.data_dir if dataset == config.dataset else None)
            name = args.split
            documents = load_dataset(dataset, data_dir, splits=(args.split,))[args.split]
        processes = distributed.tagging_processes(
            sum(d.num_tokens for d in documents), device, args.processes,
            min_tokens=distributed.min_tagging_tokens(config.model.graph,
                                                      config.model.cross_sentence))
        if processes > 1:  # the processes load the model; this one only scores
            logging.getLogger("docgraph").info(
                "tagging in %d processes (--processes 1: one process)", processes)
            prepared = PreparedSplit(
                split_long_documents(documents, config.graph.max_doc_tokens), [])
            predictions = predict_in_processes(args.model, documents, processes, overrides)
            scores = score_predictions(prepared, predictions)
        else:
            model, vocabs, config = load_model_dir(args.model, device, overrides)
            prepared = prepare_split(documents, vocabs, config)
            scores, predictions = evaluate(model, prepared, vocabs,
                                           config.train.eval_batch_tokens, device)
        consistency = split_consistency(prepared, predictions)
    except (ValueError, FileNotFoundError, distributed.WorkerError, CheckpointError,
            CorpusFormatError) as err:
        fail(str(err))
    out_dir = Path(args.output_dir or args.model)
    print(format_table(scores, title=f"{name} ({len(documents)} documents)"))
    print(f"document consistency: F1 on mentions with a recurring word "
          f"{consistency.recurrent.f1:.2f}, on once-seen mentions {consistency.singleton.f1:.2f};"
          f" string groups with more than one type {100 - consistency.pred.consistency:.1f}% "
          f"(gold {100 - consistency.gold.consistency:.1f}%); entities against their string's "
          f"majority type {consistency.pred.disagreement:.2f}%")
    override = {} if args.threshold is None else {"threshold": args.threshold}
    atomic_write_json(out_dir / f"{name}_metrics.json",
                      {name: scores.to_dict(), "consistency": consistency.to_dict(), **override})
    write_conll(out_dir / f"{name}_predictions.conll", prepared.documents, predictions)
    print(f"wrote {out_dir / f'{name}_metrics.json'} and {out_dir / f'{name}_predictions.conll'}")
    return 0


def predict_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/predict.py``."""
    p = argparse.ArgumentParser(
        prog="predict.py",
        description="Tag documents with a trained model. Inputs are CoNLL column files "
                    "(documents split at -DOCSTART-) or plain-text files (one file = one "
                    "document).")
    p.add_argument("--model", required=True, help="model directory written by train.py")
    p.add_argument("inputs", nargs="+", help="input files")
    p.add_argument("--input-format", choices=("auto", "conll", "text"), default="auto",
                   help="auto: CoNLL when the file has -DOCSTART- or a tag (O, B-X, I-X, E-X, "
                        "S-X) in the last column of nearly every non-blank line, else text")
    p.add_argument("--tokenized", action="store_true",
                   help="text input is pre-tokenised: one sentence per line, tokens split "
                        "on whitespace")
    p.add_argument("--format", choices=("conll", "jsonl", "html"), default="jsonl",
                   help="output: CoNLL columns (word, predicted tag), JSON lines of spans, or "
                        "an interactive HTML page of the documents and their graphs "
                        "(default: jsonl)")
    p.add_argument("--output", default=None, help="output file (default: stdout)")
    p.add_argument("--threshold", type=float, default=None,
                   help="uncertainty threshold to prune the document graph with, instead of "
                        "the trained one (as evaluate.py --threshold)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where to tag (default: auto, a GPU when there is one)")
    add_processes_argument(p)
    return p


CONLL_TAGGED_SHARE = 0.9
"""Share of non-blank lines whose last column must be a tag for a file to be read as CoNLL."""


def _is_tag(field: str) -> bool:
    """Whether ``field`` is a NER tag: ``O`` or ``B-X``, ``I-X``, ``E-X``, ``S-X``."""
    return field == "O" or (len(field) > 2 and field[0] in "BIES" and field[1] == "-")


def _looks_like_conll(text: str, max_lines: int = 200) -> bool:
    """Whether ``text`` is a CoNLL column file rather than prose.

    It is when a line starts with ``-DOCSTART-``, or when (nearly) all of its first
    ``max_lines`` non-blank lines have at least two columns and a tag (``O``, ``B-X``, ``I-X``,
    ``E-X``, ``S-X``) in the last one. Plain or pre-tokenised text (``... went well.``) is not.
    """
    rows = (line.split() for line in text.split("\n"))
    content = list(itertools.islice((cols for cols in rows if cols), max_lines))
    if not content:
        return False
    if any(cols[0] == "-DOCSTART-" for cols in content):
        return True
    tagged = sum(len(cols) >= 2 and _is_tag(cols[-1]) for cols in content)
    return tagged >= CONLL_TAGGED_SHARE * len(content)


def _read_input(path: Path, input_format: str, tokenized: bool) -> list[Document]:
    """The documents of one ``predict.py`` input file (``auto``, ``conll`` or ``text``).

    Raises:
        UsageError: The file does not exist or is not a file.
        CorpusFormatError: The file is not UTF-8, or not a valid CoNLL file when read as one.
    """
    from docgraph.data.conll import read_conll, read_text
    from docgraph.tagger import as_document

    if not path.exists():
        raise UsageError(f"{path}: input file not found")
    if not path.is_file():
        raise UsageError(f"{path}: expected an input file, got a directory")
    text = read_text(path)
    kind = input_format
    if kind == "auto":
        kind = "conll" if _looks_like_conll(text) else "text"
    if kind == "conll":
        return read_conll(path)
    document = as_document(text, path.stem, tokenized)
    if not document.sentences:
        logging.getLogger(__name__).warning("%s: no tokens, nothing to tag", path)
    return [document]


def predict_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``scripts/predict.py``."""
    import json

    from docgraph.checkpoint import CheckpointError, atomic_write_text
    from docgraph.data.errors import CorpusFormatError
    from docgraph.distributed import WorkerError
    from docgraph.machine import resolve_device
    from docgraph.tagger import Tagger

    args = predict_parser().parse_args(argv)
    setup_logging(quiet=True)
    try:
        tagger = Tagger.load(args.model, resolve_device(args.device), threshold=args.threshold)
        documents = [doc for name in args.inputs
                     for doc in _read_input(Path(name), args.input_format, args.tokenized)]
        if args.format == "jsonl":
            entities = tagger.predict(documents, processes=args.processes)
        elif args.format == "html":
            page = tagger.to_html(documents, title=" ".join(args.inputs))
        else:
            docs, tags = tagger.tag(documents, processes=args.processes)
    except (ValueError, FileNotFoundError, WorkerError, CheckpointError,
            CorpusFormatError) as err:
        fail(str(err))
    lines: list[str] = []
    if args.format == "html":
        if args.output:
            atomic_write_text(args.output, page)
        else:
            sys.stdout.write(page)
        return 0
    if args.format == "jsonl":
        lines = [json.dumps(e.to_dict()) for doc_entities in entities for e in doc_entities]
    else:
        for doc, doc_tags in zip(docs, tags):
            lines.append("-DOCSTART- O")
            lines.append("")
            for sentence, sent_tags in zip(doc.sentences, doc_tags):
                lines.extend(f"{w} {t}" for w, t in zip(sentence.tokens, sent_tags))
                lines.append("")
    text = "\n".join(lines) + ("\n" if lines else "")
    if args.output:
        atomic_write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0
