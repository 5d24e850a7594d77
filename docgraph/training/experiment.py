"""Experiments: a training run from a configuration to its run directory, and runs over seeds.

:func:`run_experiment` loads the corpus, builds the vocabularies, the pretrained vectors and
(with ``--lm``) the contextual features, trains with :class:`~docgraph.training.loop.Trainer`,
selects on dev, scores dev and test once, and writes ``metrics.json`` and
``learning_curve.png`` beside the model directory the trainer keeps.
"""

from __future__ import annotations

import datetime as _dt
import logging
import statistics
import sys
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from docgraph.config import ExperimentConfig
from docgraph.config.experiment import run_dirs, seed_dir
from docgraph.config.init_from import fine_tune_line
from docgraph.config.train import small_corpus_line
from docgraph.data.augment import case_variant, variants_needed
from docgraph.data.contextual import ContextualEncoder, cached_features
from docgraph.data.document import Document
from docgraph.data.embeddings import load_embeddings
from docgraph.data.novel_names import SELECTION_SEED, cue_words, novel_name_seed, novel_names
from docgraph.data.registry import (
    dataset_files,
    load_corpus,
    located_corpus,
    read_labelled,
    split_off_dev,
)
from docgraph.data.vocab import Vocabularies
from docgraph.graph.splits import PreparedSplit, build_vocabularies, prepare_split
from docgraph.persistence.checkpoint import CheckpointError, atomic_write_json, load_checkpoint
from docgraph.persistence.lm_record import lm_record
from docgraph.persistence.model_dir import build_model, check_model_memory, load_model_weights
from docgraph.persistence.run_lock import LOCK_FILE, RunLock, run_directory
from docgraph.runtime.atomic import atomic_write, temporaries
from docgraph.runtime.determinism import deterministic_kernels
from docgraph.runtime.integrity import write_sealed_json
from docgraph.runtime.machine import cpu_model, resolve_device
from docgraph.runtime.processes import is_main_process
from docgraph.runtime.progress import Progress, Stages, log_to_file
from docgraph.runtime.progress import settings as progress_settings
from docgraph.tagging.inference import evaluate, split_consistency
from docgraph.training.anchor import WeightAnchor, fresh_entries
from docgraph.training.distil import Distiller
from docgraph.training.init_from import (
    Growth,
    InitModel,
    annotated_types,
    check_types,
    grow_vocabularies,
    initial_model,
    label_lattice,
    label_map,
    load_init_model,
    train_only_output,
    with_silver,
    without_types,
)
from docgraph.training.loop import Trainer, seed_everything, stop_reason, training_threads

log = logging.getLogger("docgraph")


def _command_line() -> str:
    return " ".join([Path(sys.argv[0]).name if sys.argv else "python", *sys.argv[1:]])


def learning_curve(history: list[dict[str, Any]], path: Path) -> None:
    """Plot training loss and dev F1 per epoch to a PNG (atomically).

    Uses a bare :class:`matplotlib.figure.Figure`, so the caller's pyplot backend is untouched.
    """
    # matplotlib for this figure only: the commands that tag (evaluate, predict) never load it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    epochs = [r["epoch"] for r in history]
    fig = Figure(figsize=(6, 3.5))
    FigureCanvasAgg(fig)
    ax1 = fig.add_subplot()
    ax1.plot(epochs, [r["loss"] for r in history], color="tab:gray", label="train loss")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("train loss")
    ax2 = ax1.twinx()
    ax2.plot(epochs, [r["dev_f1"] for r in history], color="tab:blue", marker="o", ms=3,
             label="dev F1")
    ax2.set_ylabel("dev F1 (%)")
    fig.legend(loc="lower center", ncol=2, frameon=False)
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=100))


def run_experiment(config: ExperimentConfig, resume: bool = False, progress: bool = True,
                   lock: RunLock | None = None) -> dict[str, Any]:
    """Train, select on dev, evaluate once on test, and write the run directory.

    The run holds its directory for its whole length (:mod:`docgraph.persistence.run_lock`):
    ``lock`` when that is the directory's (taken by the caller, e.g. ``train.py`` before it
    starts its processes), else a lock taken here; on taking it, temporary files that a killed
    write left (:data:`RUN_FILES`) are removed. Every stage is timed and logged
    (:class:`~docgraph.runtime.progress.Stages`), and the run's log lines are kept in
    ``train.log`` in the run directory; with ``progress`` the long stages (graphs, epochs,
    tagging) show their progress (:class:`~docgraph.runtime.progress.Progress`). A run that
    fails or is interrupted before its first checkpoint leaves no run directory it created
    behind. With ``config.train.deterministic`` the run holds deterministic kernels
    (:func:`~docgraph.runtime.determinism.deterministic_kernels`) and gives them back when it
    ends.

    Returns:
        The content of ``metrics.json``.

    Raises:
        RunDirectoryBusyError: Another run holds the directory.
    """
    threads = training_threads(config.train.threads, resolve_device(config.device),
                               distributed=dist.is_initialized())
    if threads > 0:
        torch.set_num_threads(threads)
    with deterministic_kernels(config.train.deterministic):
        return _run_experiment(config, resume, progress, lock)


def _run_experiment(config: ExperimentConfig, resume: bool, progress: bool,
                    lock: RunLock | None) -> dict[str, Any]:
    """:func:`run_experiment` with its kernels set."""
    output_dir = Path(config.output_dir)
    if resume and not (output_dir / "last.pt").is_file():
        raise ValueError(f"--resume {output_dir}: no checkpoint last.pt to resume from")
    if not is_main_process():
        return _run(config, resume, progress, output_dir, Stages(enabled=False))
    with run_directory(output_dir, lock) as held:
        try:
            with log_to_file(output_dir / "train.log"):
                for path in temporaries(output_dir, RUN_FILES):
                    log.info("removing %s, left by a write that was killed", path)
                    path.unlink(missing_ok=True)
                return _run(config, resume, progress, output_dir, Stages())
        except BaseException:
            if held.created:
                remove_unfinished_run(output_dir)
            raise


#: The files a run writes atomically (:func:`~docgraph.runtime.atomic.atomic_write`).
RUN_FILES = ("model.pt", "config.json", "vocab.json", "lm.json", "last.pt", "train_log.jsonl",
             "metrics.json", "learning_curve.png")

#: What a run writes before its first checkpoint (removed if it ends there).
EARLY_FILES = ("train.log", "lm.json")


def remove_previous_run(output_dir: str | Path, seeds: Sequence[int] | None = None
                        ) -> list[Path]:
    """Remove the files of the run in ``output_dir`` (and in its seeds' directories) before a
    new run replaces it (``train.py --overwrite``): :data:`RUN_FILES`, ``train.log`` and
    ``summary.json``; other files stay. Returns what was removed."""
    base = Path(output_dir)
    removed = []
    for directory in run_dirs(base, seeds):
        for name in (*RUN_FILES, "train.log", "summary.json"):
            path = directory / name
            if path.is_file():
                path.unlink()
                removed.append(path)
    if removed:
        log.info("--overwrite: removed the previous run's %s", ", ".join(map(str, removed)))
    return removed


def remove_unfinished_run(output_dir: Path) -> bool:
    """Remove the :data:`EARLY_FILES` of a run directory that holds no checkpoint and nothing
    else (but its lock, :data:`~docgraph.persistence.run_lock.LOCK_FILE`), and the directory
    when that leaves it empty (a locked one goes when its lock is released); returns whether
    it did."""
    if not output_dir.is_dir() or (output_dir / "last.pt").exists():
        return False
    if any(p.name not in (*EARLY_FILES, LOCK_FILE) for p in output_dir.iterdir()):
        return False
    for name in EARLY_FILES:
        (output_dir / name).unlink(missing_ok=True)
    if not (output_dir / LOCK_FILE).exists():
        output_dir.rmdir()
    return True


def _novel_name_variants(config: ExperimentConfig, train: list[Document], vocabs: Vocabularies,
                         features: Any, progress: bool) -> dict[str, PreparedSplit]:
    """The invented-name versions of the training split (``"novel-0"``, ...), none without
    ``[train] novel_name_share``. Invented words avoid the pretrained table's words and the
    vocabulary's, so each is an unknown word to the model; the odd-numbered versions keep the
    cue words of ``[train] novel_name_cues``."""
    tc = config.train
    if tc.novel_name_share == 0:
        return {}
    avoid = _avoided_words(config, vocabs)
    cues = cue_words(train, tc.novel_name_cues, common=tc.novel_name_common_cues) \
        if tc.novel_name_cues else frozenset()
    return {f"novel-{v}": prepare_in_parts(
        [novel_names(d, novel_name_seed(config.seed, v), avoid,
                     kept_words=cues if v % 2 else frozenset()) for d in train], vocabs,
        config, features, f"building graphs (train, invented names {v})" if progress else None)
        for v in range(tc.novel_name_variants)}


def _avoided_words(config: ExperimentConfig, vocabs: Vocabularies) -> set[str]:
    """The words an invented name must not be: the vocabulary's and the pretrained table's,
    lowercased."""
    table = load_embeddings(config.embeddings)
    return {w.lower() for w in (*vocabs.words.tokens, *(table[0] if table else ()))}


def _selection_variants(config: ExperimentConfig, dev: list[Document], vocabs: Vocabularies,
                        features: Any, progress: bool) -> dict[str, PreparedSplit]:
    """The dev split lowercased and with invented names, which ``[train] selection =
    "robust_dev"`` scores beside it; none otherwise."""
    if config.train.selection != "robust_dev":
        return {}
    avoid = _avoided_words(config, vocabs)
    forms = {"lower": [case_variant(d, "lower") for d in dev],
             "novel": [novel_names(d, SELECTION_SEED, avoid) for d in dev]}
    return {name: prepare_in_parts(docs, vocabs, config, features,
                                   f"building graphs (dev, {name})" if progress else None)
            for name, docs in forms.items()}


def _run(config: ExperimentConfig, resume: bool, progress: bool, output_dir: Path,
         stages: Stages) -> dict[str, Any]:
    """:func:`run_experiment` once its run directory and log are set up."""
    seed_everything(config.seed)
    with stages("reading the corpus") as info:
        splits = load_corpus(config)  # the data set's files, or --train/--dev/--test
        if config.dev_fraction > 0:
            splits["train"], splits["dev"] = split_off_dev(splits["train"], config.dev_fraction,
                                                           config.seed)
            log.info("dev: %d of the %d training documents, held out (--dev-fraction %g)",
                     len(splits["dev"]), len(splits["dev"]) + len(splits["train"]),
                     config.dev_fraction)
        info["result"] = ", ".join(f"{name} {len(docs)} documents"
                                   for name, docs in splits.items())
    if config.init_from is not None:
        small: str | None = fine_tune_line(config.init_from, config.train)
    else:
        small = small_corpus_line(len(splits["train"]),
                                  sum(d.num_tokens for d in splits["train"]), config.train)
    if small is not None and is_main_process():
        log.info("%s", small)  # the settings in effect, and what differs from the rule's
    # where the corpus was read from (its directory, or the files), so evaluate.py finds it
    config = located_corpus(config)
    cases = variants_needed(config.train.lowercase_share, config.train.uppercase_share)
    init: InitModel | None = None
    growth: Growth | None = None
    if config.init_from is not None:
        with stages(f"reading the model to start from ({config.init_from})"):
            init = load_init_model(config.init_from)
        if init.config.lm is not None:  # where its language model is now (lm.json, checked)
            config = replace(config, lm=init.config.lm)
        if not config.new_types:
            check_types(init, splits, _split_files(config))
        splits, free_types, rehearsed_tokens = _keep_types(config, init, splits)
        with stages("vocabularies grown from the model's"):
            vocabs, word_rows, growth = grow_vocabularies(init, splits, config.embeddings,
                                                          config.vocab_eval_words, cases)
        pretrained, coverage = None, growth.word_vectors
        if is_main_process():
            _log_growth(growth)
    else:
        with stages("vocabularies and pretrained vectors"):
            vocabs, pretrained, coverage = build_vocabularies(splits, config.embeddings,
                                                              config.vocab_eval_words, cases)
    if coverage is not None and is_main_process():
        log.info("pretrained vector coverage%s: %s",
                 " of the added words" if init is not None else "", coverage)
    if pretrained is not None and pretrained.size(1) != config.model.word_dim:
        config = replace(config, model=replace(config.model, word_dim=int(pretrained.size(1))))
    lm_features: dict[str, Any] = {}
    if config.lm is not None:
        with stages("language-model features", heartbeat=False):
            config, lm_features = _lm_features(config, splits, output_dir, progress)
    elif config.model.lm_dim:
        raise ValueError(f"model.lm_dim is {config.model.lm_dim} but no language model is "
                         "given (--lm PATH)")
    with stages("building graphs", heartbeat=False):
        prepared = {name: prepare_in_parts(docs, vocabs, config, lm_features.get(name),
                                           f"building graphs ({name})" if progress else None)
                    for name, docs in splits.items()}
        # the case variants of the training split (the features of an uncased encoder are the
        # same for every variant; those of the cased text are used for all)
        variants = {case: prepare_in_parts([case_variant(d, case) for d in splits["train"]],
                                           vocabs, config, lm_features.get("train"),
                                           f"building graphs (train, {case})" if progress
                                           else None)
                    for case in cases if case != "cased"}
        variants |= _novel_name_variants(config, splits["train"], vocabs,
                                         lm_features.get("train"), progress)
        dev_variants = _selection_variants(config, splits["dev"], vocabs,
                                           lm_features.get("dev"), progress)
    device = resolve_device(config.device)
    world = dist.get_world_size() if dist.is_initialized() else 1
    with stages("building the model"):
        check_model_memory(config.model, config.train.optimizer, config.train.momentum,
                           world, device, vocabs)
        seed_everything(config.seed)
        anchor: WeightAnchor | None = None
        distiller: Distiller | None = None
        if init is not None:
            model = initial_model(init, config.model, vocabs, word_rows)
            partial = None
            first_rehearsed = prepared["train"].num_tokens - rehearsed_tokens
            if config.fine_tune.rehearse_partial and growth is not None and growth.added_types:
                marked = _mark_rehearsal(prepared["train"], variants, first_rehearsed, "partial")
                partial = label_lattice(vocabs.labels, [*free_types, *growth.added_types])
                log.info("--rehearse-partial: in the %d graphs of the --rehearse documents a "
                         "token tagged O may carry any label of %s in the loss", marked,
                         ", ".join(growth.added_types))
            elif config.fine_tune.rehearse_partial:
                log.info("--rehearse-partial: the run adds no type; the --rehearse documents' "
                         "O is taken as it is")
            if free_types or partial is not None:
                model.set_label_lattice(
                    label_lattice(vocabs.labels, free_types) if free_types else None, partial)
            if config.fine_tune.tune == "output":
                log.info("--tune output: %s weights train (the emission layer and the CRF); the "
                         "rest keeps %s's", f"{train_only_output(model):,}", init.name)
            if config.fine_tune.anchor > 0:
                anchor = WeightAnchor(model, config.fine_tune.anchor, fresh_entries(
                    model.state_dict(), init.vocabs.labels, vocabs.labels,
                    {k: v.shape for k, v in init.state.items()}))
            if config.fine_tune.distil > 0:
                distiller = Distiller(model, label_map(init.vocabs.labels, vocabs.labels)[0],
                                      config.fine_tune.distil)
                if config.fine_tune.distil_on == "rehearsal":
                    _mark_rehearsal(prepared["train"], variants, first_rehearsed, "distilled")
                log.info("--distil %g: each %s token keeps %s's distribution over its %d labels "
                         "(a frozen copy reads every batch)", config.fine_tune.distil,
                         "training" if config.fine_tune.distil_on == "all" else "--rehearse",
                         init.name, distiller.labels.numel())
        else:
            model = build_model(config.model, vocabs, pretrained)
    # under --keep-types model the dev labels of the model's types are its own predictions:
    # the starting model agrees with them by construction, so it is no candidate
    trainer = Trainer(model, vocabs, config, prepared["train"], prepared["dev"], output_dir,
                      progress=progress, train_variants=variants, dev_variants=dev_variants,
                      evaluate_start=init is not None and config.fine_tune.keep_types != "model",
                      anchor=anchor, distiller=distiller)
    with stages("training", heartbeat=False, done=False):
        state = trainer.fit(resume=resume)
    if not is_main_process():
        return {}
    with stages("final evaluation", heartbeat=False):
        # the trainer saved this config and vocabulary beside the weights: read only the weights
        best = load_model_weights(output_dir, config, vocabs, trainer.device)
        if state.best_epoch > 0:  # epoch 0: the starting model of --init-from, as it was read
            best.set_epoch(state.best_epoch)  # as it was when selected (pruning warm-up)
        results: dict[str, Any] = {}
        consistency: dict[str, Any] = {}
        for name in ("dev", "test"):
            if name in prepared:
                scores, predictions = evaluate(best, prepared[name], vocabs,
                                               config.train.eval_batch_tokens, trainer.device,
                                               progress=f"tagging {name}" if progress else None)
                results[name] = scores.to_dict()
                consistency[name] = split_consistency(prepared[name], predictions).to_dict()
    log.info("%s", stages.summary())
    metrics = {
        **results,
        "epochs": state.epoch,
        "best_epoch": state.best_epoch,
        "train_seconds": round(state.train_seconds, 2),
        "seed": config.seed,
        "config": config.to_dict(),
        "command": _command_line(),
        "embedding_coverage": coverage,
        **({"init_from": {**growth.to_dict(), "start_dev_f1": state.start_dev_f1}}
           if growth is not None else {}),
        "consistency": consistency,
        "torch": torch.__version__,
        "device": str(trainer.device),
        "stop_reason": stop_reason(state, config.train, trainer.min_steps),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M"),
        "processes": trainer.world,
        "threads": torch.get_num_threads(),
        "cpu": cpu_model(),
        **({"hardware": torch.cuda.get_device_name(trainer.device)}
           if trainer.device.type == "cuda" else {}),
        "stage_seconds": {name: round(s, 2) for name, s in stages.seconds.items()},
    }
    atomic_write_json(output_dir / "metrics.json", metrics)
    learning_curve(state.history, output_dir / "learning_curve.png")
    return metrics


def _split_files(config: ExperimentConfig) -> dict[str, Path]:
    """The file each split of the run was read from (for messages; none when unknown)."""
    own = {split: getattr(config, f"{split}_file", None) for split in ("train", "dev", "test")}
    if any(own.values()):
        return {split: Path(path) for split, path in own.items() if path}
    try:
        return dataset_files(config.dataset, config.data_dir, config.file_splits)
    except (ValueError, OSError):
        return {}


def _keep_types(config: ExperimentConfig, init: InitModel,
                splits: dict[str, list[Document]]
                ) -> tuple[dict[str, list[Document]], list[str], int]:
    """The splits of a run that starts from ``init`` as ``config.fine_tune`` keeps the
    model's types that the training documents do not annotate (silver labels of the model's
    in the training and dev documents, or in dev alone for partial annotation), the
    ``--rehearse`` documents joining the training split; and the types that a token tagged
    ``O`` may carry in the loss (partial annotation; none otherwise); and the tokens of the
    ``--rehearse`` documents, which end the training split."""
    keep = config.fine_tune.keep_types
    missing = [t for t in init.types if t not in annotated_types(splits["train"])]
    if keep == "model":  # every type of the model, annotated or not, labelled by the model
        missing = list(init.types)
        splits = {**splits, **{name: [without_types(doc, missing) for doc in splits[name]]
                               for name in ("train", "dev")}}
    main = is_main_process()
    if missing and keep == "off" and main:
        log.info("--init-from %s: its types %s are not annotated in the training documents, "
                 "and --fully-annotated takes their words there as O: the run learns not to "
                 "tag them (--keep-types silver or partial keeps them)", init.name,
                 ", ".join(missing))
    free: list[str] = []
    if missing and keep != "off":
        from docgraph.tagging.tagger import Tagger  # only for a run that keeps types

        # the trained computation, whatever speed the model tags at by default
        tagger = Tagger.load(init.directory, lm=init.config.lm, speed="faithful")
        names = ("dev",) if keep == "partial" else ("train", "dev")
        found = []
        for name in names:
            predicted = tagger.tag(splits[name], processes=1)[1]
            merged = [with_silver(doc, tags, missing)
                      for doc, tags in zip(splits[name], predicted)]
            splits = {**splits, name: [doc for doc, _ in merged]}
            found.append(f"{sum(n for _, n in merged)} in the {len(merged)} {name} documents")
        free = missing if keep == "partial" else []
        if main:
            how = ("are labelled by the model alone (the data's own spans of them taken out)"
                   if keep == "model" else "are not annotated in the training documents: "
                   + ("a token tagged O may carry any of their labels in the loss (partial "
                      "annotation)" if free else "kept as silver labels"))
            log.info("--init-from %s: its types %s %s; the model's own entities of them where "
                     "the data has no span: %s (--keep-types %s; --fully-annotated for data "
                     "that annotates every type it holds)", init.name, ", ".join(missing), how,
                     ", ".join(found), keep)
    rehearsed_tokens = 0
    if config.fine_tune.rehearse is not None:
        extra = read_labelled(config.fine_tune.rehearse)
        rehearsed_tokens = sum(d.num_tokens for d in extra)
        own, repeats = splits["train"], config.fine_tune.own_repeats
        splits = {**splits, "train": [*(own * repeats), *extra]}
        if main:
            log.info("--rehearse %s: %d documents, %d tokens, join the %d training documents%s",
                     config.fine_tune.rehearse, len(extra), rehearsed_tokens, len(own),
                     f" (each seen {repeats} times per epoch: --own-repeats)"
                     if repeats > 1 else "")
    return splits, free, rehearsed_tokens


def _mark_rehearsal(train: PreparedSplit, variants: Mapping[str, PreparedSplit],
                    first_token: int, attribute: str) -> int:
    """Mark the training graphs from token ``first_token`` on (the ``--rehearse`` documents')
    and their index-aligned ``variants`` by a node mask ``attribute`` (``partial`` or
    ``distilled``, :class:`~docgraph.graph.build.DocumentGraph`); returns how many graphs are
    marked."""
    flags, seen = [], 0
    for graph in train.graphs:
        if seen < first_token < seen + int(graph.num_nodes):  # a graph is one document's
            raise RuntimeError(f"token {first_token} of the training split is inside a graph")
        flags.append(seen >= first_token)
        seen += int(graph.num_nodes)
    for split in (train, *variants.values()):
        for graph, flag in zip(split.graphs, flags, strict=True):
            setattr(graph, attribute,
                    torch.full((int(graph.num_nodes),), flag, dtype=torch.bool))
    return sum(flags)


def _log_growth(growth: Growth) -> None:
    """Say what a run adds to the model it starts from (``--init-from``)."""
    log.info("--init-from %s: %d words added to its vocabulary (their pretrained rows), %d "
             "characters", growth.model, growth.words, growth.characters)
    for kind in growth.added_types:
        log.info("--init-from %s: entity type %s of the data is not among the model's (%s): "
                 "added (the emission layer, the uncertainty tagger's dense layer and the CRF "
                 "extended)", growth.model, kind, ", ".join(growth.model_types))
    if growth.types_not_in_data:
        log.info("--init-from %s: its types %s are not in the training data (kept)",
                 growth.model, ", ".join(growth.types_not_in_data))


def _lm_features(config: ExperimentConfig, splits: dict[str, list[Document]],
                 output_dir: Path, progress: bool) -> tuple[ExperimentConfig, dict[str, Any]]:
    """The contextual features of every split (computed once, cached) and the configuration
    with their size."""
    encoder = ContextualEncoder.from_config(config, device=str(resolve_device(config.device)))
    # In a multi-process run the first process computes and caches the features while the
    # others wait, then read the cache (instead of every process computing them).
    if not is_main_process():
        dist.barrier()
    # a bar on a terminal; otherwise the encoder logs every tenth of the words
    show = progress and is_main_process() and progress_settings().enabled \
        and progress_settings().bars
    lm_features = {
        name: cached_features(docs, encoder, config.lm_cache_dir,
                              f"{config.dataset}-{name}", progress=show)
        for name, docs in splits.items()
    }
    if is_main_process() and dist.is_initialized():
        dist.barrier()
    config = replace(config, model=replace(config.model, lm_dim=encoder.dim))
    if is_main_process():
        write_sealed_json(output_dir / "lm.json", lm_record(encoder))
    return config, lm_features


#: Tokens whose graphs are built between two progress updates.
GRAPH_PART_TOKENS = 50_000


def prepare_in_parts(documents: Sequence[Document], vocabs: Vocabularies,
                     config: ExperimentConfig, lm_features: Any = None,
                     progress: str | None = None) -> PreparedSplit:
    """:func:`~docgraph.graph.splits.prepare_split` over consecutive parts of about
    :data:`GRAPH_PART_TOKENS` tokens, its progress shown under the name ``progress``; the
    same result (every document's graph depends on that document alone, and the rows of
    ``lm_features`` follow the documents' tokens)."""
    documents = list(documents)
    lengths = [d.num_tokens for d in documents]
    total = sum(lengths)
    if lm_features is not None and lm_features.shape[0] != total:
        raise ValueError(f"token features of shape {tuple(lm_features.shape)} do not fit "
                         f"{len(documents)} documents with {total} tokens")
    out = PreparedSplit([], [])
    start, row = 0, 0
    with Progress(progress or "", total=total, unit="token",
                  enabled=progress is not None) as bar:
        while start < len(documents):
            end, size = start, 0
            while end < len(documents) and (end == start or size < GRAPH_PART_TOKENS):
                size += lengths[end]
                end += 1
            features = None if lm_features is None else lm_features[row:row + size]
            part = prepare_split(documents[start:end], vocabs, config, features)
            out.documents.extend(part.documents)
            out.graphs.extend(part.graphs)
            bar.update(size)
            start, row = end, row + size
    return out


def run_seeds(config: ExperimentConfig, seeds: Sequence[int], progress: bool = True,
              lock: RunLock | None = None) -> dict[str, Any]:
    """Run the same configuration with several seeds, each in ``seed-<seed>`` of the output
    directory, which the runs hold together (``lock`` when that is its lock, else one taken
    here; each run holds its own directory too); write ``summary.json`` (mean ± std).

    Raises:
        RunDirectoryBusyError: Another run holds the directory or one of the seeds'.
    """
    base = Path(config.output_dir)
    runs = []
    with (run_directory(base, lock) if is_main_process() else nullcontext()):
        for seed in seeds:
            cfg = replace(config, seed=seed, output_dir=str(seed_dir(base, seed)))
            runs.append(run_experiment(cfg, progress=progress))
        return _summary(base, seeds, runs)


def _summary(base: Path, seeds: Sequence[int], runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Write and return the ``summary.json`` of :func:`run_seeds` (on the first process)."""
    if not is_main_process():  # the other processes of a data-parallel run hold no results
        return {}
    summary: dict[str, Any] = {
        "seeds": list(seeds), "runs": [str(seed_dir(base, s)) for s in seeds]
    }
    for split in ("dev", "test"):
        for key in ("precision", "recall", "f1"):
            values = [r[split][key] for r in runs if split in r]
            if values:
                summary[f"{split}_{key}_mean"] = statistics.fmean(values)
                summary[f"{split}_{key}_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    summary["command"] = _command_line()
    atomic_write_json(base / "summary.json", summary)
    return summary


def interrupted_message(output_dir: str | Path, seeds: Sequence[int] | None = None,
                        reason: str = "interrupted") -> str:
    """What an interrupted ``train.py`` left in ``output_dir`` and how to go on, in a few
    lines (``seeds``: the runs of ``--seeds``, one directory each), after ``reason``."""
    return f"{reason}: {saved_message(output_dir, seeds)}"


def saved_message(output_dir: str | Path, seeds: Sequence[int] | None = None) -> str:
    """What a stopped ``train.py`` left in ``output_dir``: what ``last.pt`` and ``model.pt``
    hold and the command that resumes the run (one line; one per seed with ``seeds``)."""
    base = Path(output_dir)
    script = _script()
    if not seeds:
        return _saved(base, script)
    lines = ["no summary.json written"]
    for seed in seeds:
        run = seed_dir(base, seed)
        if (run / "metrics.json").is_file():
            lines.append(f"  seed {seed}: finished ({run / 'metrics.json'})")
        elif run.exists():
            lines.append(f"  seed {seed}: {_saved(run, script)}")
        else:
            lines.append(f"  seed {seed}: not started")
    return "\n".join(lines)


def _script() -> str:
    name = sys.argv[0] if sys.argv and sys.argv[0].endswith("train.py") else "scripts/train.py"
    return f"python {name}"


def _saved(run: Path, script: str) -> str:
    """What a run directory holds after an interruption, and the command that resumes it."""
    checkpoint = run / "last.pt"
    if not checkpoint.is_file():
        if not run.exists():
            return f"no epoch had finished, nothing was saved ({run} was not kept)"
        kept = sorted(p.name for p in run.iterdir() if not p.name.startswith("."))
        held = f"it holds only {', '.join(kept)}" if kept else "it is empty"
        return (f"no checkpoint was saved: nothing to resume in {run} ({held}); run the "
                "command again with --overwrite")
    try:
        state = load_checkpoint(checkpoint)["state"]
        epoch, best, best_f1 = state["epoch"], state["best_epoch"], state["best_f1"]
    except (CheckpointError, KeyError, TypeError) as err:
        return f"{checkpoint} cannot be read back ({err})"
    model = run / "model.pt"
    try:  # written before the checkpoint: newer when the checkpoint of its epoch failed
        later = model.stat().st_mtime_ns > checkpoint.stat().st_mtime_ns
    except OSError:
        later = False
    best_text = (f"{model} holds epoch {epoch + 1}, which resuming trains again" if later else
                 f"the best so far, epoch {best} with dev F1 {best_f1:.2f}, is in {model}")
    return (f"{checkpoint} holds the run after epoch {epoch} ({best_text}); every file was "
            f"written whole. Resume with: {script} --resume {run}")
