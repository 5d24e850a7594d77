"""Training, evaluation and model directories.

A *model directory* holds everything needed to tag new text: ``model.pt`` (weights, written
atomically, read with ``weights_only=True``), ``config.json`` (the full
:class:`~docgraph.config.ExperimentConfig`) and ``vocab.json``.
A *run directory* additionally holds ``last.pt`` (the resumable state), ``train_log.jsonl``,
``metrics.json`` and ``learning_curve.png``.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import queue
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor, nn
from torch_geometric.data import Batch

from docgraph.batch_plan import buckets_for, plan_batch
from docgraph.checkpoint import (
    CheckpointError,
    atomic_write_json,
    load_checkpoint,
    save_checkpoint,
)
from docgraph.config import ExperimentConfig, TrainConfig
from docgraph.data.document import Document
from docgraph.data.embeddings import (
    build_embedding_matrix,
    load_embeddings,
    words_with_vectors,
)
from docgraph.data.registry import load_dataset
from docgraph.data.tags import bioes_to_iob2
from docgraph.data.vocab import Vocabularies, label_types
from docgraph.graph import (
    DocumentGraph,
    TokenBudgetBatchSampler,
    attach_token_features,
    documents_to_graphs,
    split_long_documents,
)
from docgraph.machine import cpu_model, peak_rss_mib
from docgraph.metrics import DocumentConsistency, Scores, document_consistency, score
from docgraph.model import GCDoc, GCDocConfig, bioes_transition_masks

log = logging.getLogger("docgraph")


class TrainingError(RuntimeError):
    """Training cannot go on (e.g. the loss became non-finite)."""


# ---------------------------------------------------------------------------- data
@dataclass
class PreparedSplit:
    """Documents of one split (after chunking) and their graphs, index-aligned."""

    documents: list[Document]
    graphs: list[DocumentGraph]

    @property
    def num_tokens(self) -> int:
        """Tokens in the split."""
        return sum(int(g.num_nodes) for g in self.graphs)


def build_vocabularies(
    splits: dict[str, list[Document]], embeddings: str
) -> tuple[Vocabularies, torch.Tensor | None, dict | None]:
    """Vocabularies from the training split and the rows of the pretrained vectors they need.

    Words of dev/test that have a pretrained vector are added to the word vocabulary (so
    their vectors are usable); words of the training data without one get a random vector.
    """
    vectors = load_embeddings(embeddings)
    extra: list[str] = []
    if vectors is not None:
        candidates = (w for name, docs in splits.items() if name != "train"
                      for doc in docs for w in doc.tokens)
        extra = words_with_vectors(candidates, vectors[0])
    vocabs = Vocabularies.build(splits["train"], extra_words=extra)
    if vectors is None:
        return vocabs, None, None
    matrix, coverage = build_embedding_matrix(vocabs.words, vectors[0], vectors[1], seed=0)
    return vocabs, matrix, coverage


def prepare_split(
    documents: Sequence[Document], vocabs: Vocabularies, config: ExperimentConfig,
    lm_features: Any = None, lm_encoder: Any = None,
) -> PreparedSplit:
    """Chunk long documents and build their graphs.

    With ``config.lm`` the graphs also get the contextual word features ``lm``, computed on the
    whole documents (before chunking): ``lm_features`` (``[T, H]`` rows in token order, e.g.
    from :func:`~docgraph.data.contextual.cached_features`) when given, else on the fly with
    ``lm_encoder`` (a :class:`~docgraph.data.contextual.ContextualEncoder`, loaded from
    ``config.lm`` when ``None``).
    """
    docs = split_long_documents(list(documents), config.graph.max_doc_tokens)
    graphs = documents_to_graphs(docs, vocabs, config.graph_config())
    if config.lm is not None:
        if lm_features is None:
            if lm_encoder is None:
                from docgraph.data.contextual import ContextualEncoder

                lm_encoder = ContextualEncoder.from_config(config)
            lm_features = lm_encoder.encode(list(documents))
        attach_token_features(graphs, lm_features)
    return PreparedSplit(docs, graphs)


def prepare_run_split(
    config: ExperimentConfig, vocabs: Vocabularies, split: str, data_dir: str | None = None
) -> PreparedSplit:
    """Split ``split`` of a trained run's data set, prepared as the run prepared it.

    Args:
        config: The run's configuration (from :func:`load_model_dir`).
        vocabs: The run's vocabularies.
        split: ``"train"``, ``"dev"`` or ``"test"``.
        data_dir: Corpus directory (default: the run's, else ``DOCGRAPH_DATA_DIR``).
    """
    documents = load_dataset(config.dataset, data_dir if data_dir is not None
                             else config.data_dir, splits=(split,))[split]
    return prepare_split(documents, vocabs, config)


def build_model(
    config: GCDocConfig, vocabs: Vocabularies, pretrained: torch.Tensor | None = None
) -> GCDoc:
    """A :class:`GCDoc` sized for ``vocabs``."""
    _, label_to_type = label_types(vocabs.labels)
    labels = vocabs.labels.lookup(list(range(len(vocabs.labels))))
    return GCDoc(
        config,
        num_words=len(vocabs.words),
        num_chars=len(vocabs.chars),
        num_labels=len(vocabs.labels),
        label_to_type=label_to_type,
        pretrained=pretrained,
        transition_masks=bioes_transition_masks(labels),
    )


# ---------------------------------------------------------------------------- model dirs
def save_model_dir(directory: str | Path, model: GCDoc, vocabs: Vocabularies,
                   config: ExperimentConfig) -> None:
    """Write ``model.pt``, ``config.json`` and ``vocab.json`` (each atomically)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocabs.save(directory)
    atomic_write_json(directory / "config.json", config.to_dict())
    save_checkpoint(directory / "model.pt", {"model": _unwrap(model).state_dict()})


def load_model_dir(directory: str | Path, map_location: str | torch.device = "cpu",
                   lm: str | Path | None = None
                   ) -> tuple[GCDoc, Vocabularies, ExperimentConfig]:
    """Load a model directory written by :func:`save_model_dir`.

    A model trained with contextual features records its language model in ``lm.json`` (path
    and hash of its files); the returned ``config.lm`` points at that directory, or at ``lm``
    when given (the language model was moved), after checking that its files are the same.

    Raises:
        CheckpointError: A file is missing, corrupt or incompatible, or the language model the
            model needs is missing or different.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"{directory}: model directory not found")
    try:
        config = ExperimentConfig.from_saved(json.loads((directory / "config.json").read_text()))
        vocabs = Vocabularies.load(directory)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CheckpointError(f"{directory}: unreadable model directory ({err})") from err
    if config.lm is not None or config.model.lm_dim:
        from docgraph.data.contextual import LanguageModelError, check_lm_record

        record_path = directory / "lm.json"
        try:
            record = json.loads(record_path.read_text())
            lm_dir = check_lm_record(record, lm, where=directory)
        except (OSError, ValueError, KeyError) as err:
            if not isinstance(err, LanguageModelError):
                err = f"{record_path}: unreadable record of the language model ({err})"
            raise CheckpointError(str(err)) from None
        config = replace(config, lm=str(lm_dir))
    model = build_model(config.model, vocabs)
    state = load_checkpoint(directory / "model.pt", map_location)
    try:
        model.load_state_dict(state["model"])
    except (RuntimeError, KeyError) as err:
        raise CheckpointError(f"{directory / 'model.pt'}: weights do not fit ({err})") from err
    model.eval()
    return model.to(map_location), vocabs, config


def _unwrap(model: nn.Module) -> GCDoc:
    return model.module if hasattr(model, "module") else model  # type: ignore[return-value]


# ---------------------------------------------------------------------------- evaluation
def collate(graphs: Sequence[DocumentGraph], indices: Sequence[int], device: torch.device,
            model: GCDoc | None = None) -> Batch:
    """Collate ``graphs[indices]`` into a batch on ``device``, with ``model``'s host-side plan
    (:meth:`GCDoc.plan`) attached as ``batch.plan``; on CUDA through pinned memory with
    non-blocking copies."""
    batch = Batch.from_data_list([graphs[i] for i in indices])
    plan = None
    if model is not None:
        plan = plan_batch(batch, model.config, buckets_for(device))
    if device.type == "cuda":
        batch = batch.pin_memory().to(device, non_blocking=True)
        if plan is not None:
            plan = plan.pin_memory().to(device, non_blocking=True)
    else:
        batch = batch.to(device)
    if plan is not None:
        batch.plan = plan
    return batch


def iterate_batches(graphs: Sequence[DocumentGraph], sampler: Sequence[list[int]] | Any,
                    device: torch.device, model: GCDoc | None = None, prefetch: int = 0):
    """Yield ``(indices, batch)`` for every list of graph indices the sampler gives.

    With ``model``, each batch carries the model's host-side plan (:func:`collate`). With
    ``prefetch > 0`` a background thread collates up to that many batches ahead, so the
    collation and the plan stay off the critical path of the step.
    """
    if prefetch <= 0:
        for indices in sampler:
            yield indices, collate(graphs, indices, device, model)
        return
    yield from _prefetched(graphs, list(sampler), device, model, prefetch)


def _prefetched(graphs: Sequence[DocumentGraph], batches: list, device: torch.device,
                model: GCDoc | None, depth: int):
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for indices in batches:
                item = (indices, collate(graphs, indices, device, model))
                while not stop.is_set():
                    try:
                        ready.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put(None)
        except BaseException as err:  # handed to the consumer
            ready.put(err)

    worker = threading.Thread(target=produce, name="collate", daemon=True)
    worker.start()
    try:
        while True:
            item = ready.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()


@torch.no_grad()
def predict_graphs(model: GCDoc, graphs: Sequence[DocumentGraph], vocabs: Vocabularies,
                   batch_tokens: int = 8000, device: torch.device | str = "cpu",
                   seed: int = 0) -> list[list[list[str]]]:
    """IOB2 predictions per graph, per sentence, per token (reproducible for ``seed``)."""
    model = _unwrap(model)
    device = torch.device(device)
    sampler = TokenBudgetBatchSampler([int(g.num_nodes) for g in graphs], batch_tokens,
                                      shuffle=False)
    labels = vocabs.labels.lookup(list(range(len(vocabs.labels))))
    out: list[list[list[str]] | None] = [None] * len(graphs)
    # The MC-dropout uncertainty is random even in eval mode: draw it from a fixed seed so that
    # predictions are reproducible, and leave the caller's (training) RNG stream untouched.
    cuda = device.type == "cuda"
    index = (device.index if device.index is not None else torch.cuda.current_device()
             ) if cuda else None
    with torch.random.fork_rng(devices=[index] if cuda else []):
        torch.default_generator.manual_seed(seed)
        if cuda:
            with torch.cuda.device(index):
                torch.cuda.manual_seed(seed)
        for indices, batch in iterate_batches(graphs, sampler, device, model):
            _store_predictions(model.predict(batch).tolist(), indices, graphs, labels, out)
    return out  # type: ignore[return-value]


def _store_predictions(pred: list[int], indices: list[int], graphs: Sequence[DocumentGraph],
                       labels: list[str], out: list) -> None:
    offset = 0
    for i in indices:
        sentences = []
        for length in graphs[i].sent_len.tolist():
            tags = [labels[t] for t in pred[offset:offset + length]]
            sentences.append(bioes_to_iob2(tags))
            offset += length
        out[i] = sentences


def predict_documents(documents: Sequence[Document], model_dir: str | Path,
                      lm: str | Path | None = None, threshold: float | None = None
                      ) -> list[list[list[str]]]:
    """Load a model directory and tag ``documents`` on the CPU, as :func:`evaluate` does.

    ``threshold``, if given, replaces the uncertainty threshold the model was trained with
    (:meth:`~docgraph.model.GCDoc.set_threshold`).

    The predictions are per graph of ``prepare_split(documents, ...)`` (a document split by
    ``max_doc_tokens`` gives one entry per chunk), so the results of consecutive shards of a
    document list concatenate to the result of the whole list. This is what the tagging
    processes of :func:`predict_in_processes` run.
    """
    model, vocabs, config = load_model_dir(model_dir, "cpu", lm=lm)
    if threshold is not None:
        model.set_threshold(threshold)
    prepared = prepare_split(documents, vocabs, config)
    return predict_graphs(model, prepared.graphs, vocabs, config.train.eval_batch_tokens)


def predict_in_processes(model_dir: str | Path, documents: Sequence[Document],
                         processes: int, lm: str | Path | None = None,
                         threshold: float | None = None) -> list[list[list[str]]]:
    """:func:`predict_documents` with the documents shared out over ``processes`` CPU
    processes (:func:`~docgraph.distributed.map_document_shards`: consecutive runs of
    documents with about equal numbers of tokens).

    Each process draws the Monte-Carlo dropout masks and the sampled graph neighbours of its
    own share from the same seeds as one process would for the whole list, so the tags are
    reproducible for a given number of processes; with pruning on or neighbours sampled they
    can differ in a few tokens from those of another number of processes (as between two
    seeds of the sampling).
    """
    from docgraph.distributed import map_document_shards

    return map_document_shards(predict_documents, documents, processes, str(model_dir), lm,
                               threshold)


def evaluate(model: GCDoc, split: PreparedSplit, vocabs: Vocabularies,
             batch_tokens: int = 8000, device: torch.device | str = "cpu"
             ) -> tuple[Scores, list[list[list[str]]]]:
    """Entity-level micro P/R/F1 (conlleval) of the model on a split, and its predictions."""
    predictions = predict_graphs(model, split.graphs, vocabs, batch_tokens, device)
    return score_predictions(split, predictions), predictions


def score_predictions(split: PreparedSplit, predictions: Sequence[list[list[str]]]) -> Scores:
    """Scores of per-graph, per-sentence IOB2 ``predictions`` against the split's gold tags."""
    gold = [list(s.tags) for doc in split.documents for s in doc.sentences]
    pred = [tags for doc_pred in predictions for tags in doc_pred]
    return score(gold, pred)


def split_consistency(split: PreparedSplit, predictions: Sequence[list[list[str]]]
                      ) -> DocumentConsistency:
    """Document-consistency metrics (:func:`~docgraph.metrics.document_consistency`) of
    per-graph predictions; a document split by ``max_doc_tokens`` counts as its chunks."""
    docs = split.documents
    return document_consistency([[list(s.tokens) for s in d.sentences] for d in docs],
                                [[list(s.tags) for s in d.sentences] for d in docs],
                                predictions)


def evaluate_sharded(model: GCDoc, split: PreparedSplit, vocabs: Vocabularies,
                     batch_tokens: int = 8000, device: torch.device | str = "cpu"
                     ) -> Scores | None:
    """:func:`evaluate` with the documents shared out over the processes of a DDP group.

    Every process tags every ``world``-th graph; rank 0 gathers the predictions and returns
    the scores (the other ranks return ``None``). Without a process group it is
    :func:`evaluate`.
    """
    world, rank = _world()
    if world == 1:
        return evaluate(model, split, vocabs, batch_tokens, device)[0]
    shard = list(range(rank, len(split.graphs), world))
    predictions = predict_graphs(model, [split.graphs[i] for i in shard], vocabs,
                                 batch_tokens, device)
    gathered: list[Any] | None = [None] * world if rank == 0 else None
    dist.gather_object((shard, predictions), gathered, dst=0)
    if gathered is None:
        return None
    merged: list[list[list[str]]] = [[] for _ in split.graphs]
    for indices, preds in gathered:
        for i, graph_predictions in zip(indices, preds):
            merged[i] = graph_predictions
    return score_predictions(split, merged)


# ---------------------------------------------------------------------------- training
def resolve_device(name: str) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was requested but CUDA is not available")
    if name not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda', not {name!r}")
    return torch.device(name)


def make_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.Optimizer:
    """SGD (the paper's) or Adam, as one fused kernel over all parameters (two operators a
    step instead of about ten per parameter tensor)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if config.optimizer == "adam":
        return torch.optim.Adam(params, lr=config.lr, weight_decay=config.weight_decay,
                                fused=True)
    return torch.optim.SGD(params, lr=config.lr, momentum=config.momentum,
                           weight_decay=config.weight_decay, fused=True)


def training_step(network: nn.Module, optimizer: torch.optim.Optimizer, batch: Batch,
                  clip: Sequence[Sequence[nn.Parameter]] = (), clip_norm: float = 0.0,
                  loss_reduction: str = "sentence_mean", world: int = 1
                  ) -> tuple[Tensor, Tensor | None]:
    """One optimisation step: forward, backward, clipping per parameter group, update.

    Reads nothing back from the device: returns the batch's summed loss and its number of
    pruned tokens (``None`` without pruning) as device tensors, for the caller to accumulate
    and check (see :meth:`Trainer._train_epoch`).

    Args:
        network: The model, or its DDP wrapper.
        optimizer: Its optimizer.
        batch: A batch (with its plan, :func:`collate`).
        clip: Parameter groups whose gradient norms are clipped apart (:func:`clip_groups`).
        clip_norm: Clipping threshold (0: none).
        loss_reduction: ``"sentence_mean"`` (divide by the batch's sentences) or ``"sum"``.
        world: Number of data-parallel processes (DDP averages gradients; a summed loss is
            scaled back up).
    """
    out = network(batch)
    loss = out.loss
    if loss_reduction == "sentence_mean":
        loss = loss / max(out.num_sentences, 1)
    elif world > 1:
        loss = loss * world
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip_norm > 0:
        for group in clip:
            nn.utils.clip_grad_norm_(group, clip_norm, foreach=True)
    optimizer.step()
    dropped = None if out.drop is None else out.drop.sum()
    return out.loss.detach(), dropped


def make_scheduler(optimizer: torch.optim.Optimizer, config: TrainConfig
                   ) -> torch.optim.lr_scheduler.LRScheduler:
    """Per-epoch learning-rate schedule."""
    if config.lr_schedule == "inverse":
        decay = config.lr_decay
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda e: 1.0 / (1.0 + decay * e))
    if config.lr_schedule == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=config.epochs)
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda e: 1.0)


@dataclass
class TrainState:
    """Early-stopping state and history, saved in every checkpoint."""

    epoch: int = 0
    best_f1: float = -1.0
    best_epoch: int = 0
    bad_epochs: int = 0
    train_seconds: float = 0.0
    history: list[dict[str, Any]] = field(default_factory=list)


def _rng_state() -> dict[str, Any]:
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": list(random.getstate()[1])}
    state["python_version"] = random.getstate()[0]
    state["python_pos"] = random.getstate()[2]
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate((state["python_version"], tuple(state["python"]), state["python_pos"]))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _gather_rng_states() -> list[dict[str, Any]] | None:
    """Every process's random-number state, rank by rank (a collective: all processes call it);
    ``None`` in a single process."""
    if not dist.is_initialized():
        return None
    states: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(states, _rng_state())
    return states


def seed_everything(seed: int) -> None:
    """Seed Python and torch."""
    random.seed(seed)
    torch.manual_seed(seed)


def stop_reason(state: TrainState, config: TrainConfig) -> str:
    """Why training ended: ``"early_stopping"`` (converged: ``patience`` epochs without a dev
    F1 improvement), ``"max_epochs"`` or ``"budget"`` (``max_minutes`` ran out)."""
    if state.bad_epochs >= config.patience:
        return "early_stopping"
    if state.epoch >= config.epochs:
        return "max_epochs"
    return "budget"


def clip_groups(model: GCDoc) -> list[list[nn.Parameter]]:
    """Parameter groups whose gradients are clipped separately.

    The uncertainty tagger is an independent sub-module with its own token-summed loss
    (paper, "Document Graph Pruning"); clipping one norm over all parameters would let its
    gradient shrink the main model's steps. So the tagger and the rest are clipped apart.
    """
    tagger = [p for p in model.uncertainty.parameters() if p.requires_grad] \
        if model.uncertainty is not None else []
    tagger_ids = {id(p) for p in tagger}
    main = [p for p in model.parameters() if p.requires_grad and id(p) not in tagger_ids]
    return [group for group in (main, tagger) if group]


#: Steps between two checks that the epoch's summed loss is finite (each check reads one value
#: back from the device; the epoch's end is always checked).
FINITE_CHECK_EVERY = 50


def _is_main() -> bool:
    return not dist.is_initialized() or dist.get_rank() == 0


def _world() -> tuple[int, int]:
    if dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


@dataclass
class Trainer:
    """The training loop: early stopping on dev F1, atomic checkpoints, resume, DDP.

    Args:
        model: The model (wrapped in DDP by the trainer when a process group is up).
        vocabs: Vocabularies (saved with the best model).
        config: Full experiment configuration.
        train: Training split.
        dev: Development split (model selection).
        output_dir: Run directory.
        progress: Show a tqdm bar per epoch.
        on_epoch_end: Optional callback receiving each epoch's log record.
    """

    model: GCDoc
    vocabs: Vocabularies
    config: ExperimentConfig
    train: PreparedSplit
    dev: PreparedSplit
    output_dir: Path
    progress: bool = False
    on_epoch_end: Callable[[dict[str, Any]], None] | None = None

    def __post_init__(self) -> None:
        self.output_dir = Path(self.output_dir)
        self.device = resolve_device(self.config.device)
        self.model.to(self.device)
        world, rank = _world()
        self.network: nn.Module = self.model
        if world > 1:
            self.network = nn.parallel.DistributedDataParallel(
                self.model, device_ids=[self.device.index] if self.device.type == "cuda" else None
            )
        tc = self.config.train
        self.optimizer = make_optimizer(self.model, tc)
        self.scheduler = make_scheduler(self.optimizer, tc)
        # batch_tokens is the global batch: each of the world's processes takes its share
        self.sampler = TokenBudgetBatchSampler(
            [int(g.num_nodes) for g in self.train.graphs], max(1, tc.batch_tokens // world),
            shuffle=True, seed=self.config.seed, num_replicas=world, rank=rank,
        )
        self.world = world
        self.clip_groups = clip_groups(self.model)
        self.state = TrainState()
        self.last_drop_rate = 0.0

    # -- checkpoints
    @property
    def checkpoint_path(self) -> Path:
        """The resumable state of the run."""
        return self.output_dir / "last.pt"

    def save_checkpoint(self, rng_ranks: list[dict[str, Any]] | None = None) -> None:
        """Atomically write model, optimizer, scheduler, RNG and early-stopping state.

        Args:
            rng_ranks: The random-number states of every process of a multi-process run
                (:func:`_gather_rng_states`, rank by rank); each process draws its own dropout
                and Monte-Carlo masks, so an exact resume restores each its own.
        """
        save_checkpoint(self.checkpoint_path, {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "rng": _rng_state(),
            **({"rng_ranks": rng_ranks} if rng_ranks is not None else {}),
            "world": self.world,
            "state": {k: v for k, v in vars(self.state).items()},
        })

    def load_checkpoint(self) -> None:
        """Restore everything :meth:`save_checkpoint` wrote."""
        # On the CPU first: the RNG states must stay CPU byte tensors (a CUDA map_location
        # moved them and broke resuming on the GPU); load_state_dict copies the weights and the
        # optimizer state onto the parameters' device.
        ckpt = load_checkpoint(self.checkpoint_path, "cpu")
        try:
            self.model.load_state_dict(ckpt["model"])
            self.optimizer.load_state_dict(ckpt["optimizer"])
            self.scheduler.load_state_dict(ckpt["scheduler"])
            # Checkpoints of earlier versions may hold state since derived from the history
            # (``wall_seconds``); only the fields TrainState still has are restored.
            known = {f.name for f in fields(TrainState)}
            self.state = TrainState(**{k: v for k, v in ckpt["state"].items() if k in known})
            _set_rng_state(self._own_rng_state(ckpt))
        except (RuntimeError, KeyError, ValueError, TypeError) as err:
            raise CheckpointError(
                f"{self.checkpoint_path}: does not fit this model/configuration ({err})"
            ) from err

    def _own_rng_state(self, ckpt: dict[str, Any]) -> dict[str, Any]:
        """This process's random-number state in ``ckpt``: its rank's when the checkpoint
        holds one per rank for the same number of processes; otherwise the first process's
        (checkpoints of one process, or of versions before 2026-11-27, which kept one state
        and so could not resume a multi-process run exactly)."""
        ranks = ckpt.get("rng_ranks")
        world, rank = _world()
        if ranks is not None and len(ranks) == world:
            return ranks[rank]
        if world > 1 and _is_main():
            log.warning("%s: no random-number state per process for %d processes; the resumed "
                        "run will differ from an uninterrupted one", self.checkpoint_path, world)
        return ckpt["rng"]

    # -- loop
    def _train_epoch(self, epoch: int) -> tuple[float, int, float]:
        tc = self.config.train
        self.model.set_epoch(epoch)  # pruning warm-up (GCDocConfig.unpruned_epochs)
        self.network.train()
        self.sampler.set_epoch(epoch)
        tokens = 0
        start = time.perf_counter()
        batches = iterate_batches(self.train.graphs, self.sampler, self.device, self.model,
                                  prefetch=2)
        if self.progress and _is_main():
            from tqdm import tqdm

            batches = tqdm(batches, total=len(self.sampler), desc=f"epoch {epoch}",
                           leave=False, file=sys.stderr)
        loss_sum = torch.zeros((), dtype=torch.float64, device=self.device)
        drop_sum = torch.zeros((), dtype=torch.long, device=self.device)
        for step, (_, batch) in enumerate(batches, start=1):
            loss, drop = training_step(self.network, self.optimizer, batch, self.clip_groups,
                                       tc.clip_norm, tc.loss_reduction, self.world)
            loss_sum += loss
            if drop is not None:
                drop_sum += drop
            tokens += int(batch.num_nodes)
            if step % FINITE_CHECK_EVERY == 0:
                self._check_finite(loss_sum, epoch, step)
        self._check_finite(loss_sum, epoch, len(self.sampler))
        total_loss, dropped = float(loss_sum), int(drop_sum)
        seconds = time.perf_counter() - start
        if self.world > 1:  # the epoch's figures over all processes
            counts = torch.tensor([tokens, dropped, total_loss], dtype=torch.float64)
            dist.all_reduce(counts)
            tokens, dropped, total_loss = int(counts[0]), int(counts[1]), float(counts[2])
        self.last_drop_rate = dropped / max(tokens, 1)
        return total_loss, tokens, seconds

    def _check_finite(self, loss_sum: Tensor, epoch: int, step: int) -> None:
        # One read-back every FINITE_CHECK_EVERY steps instead of one per step.
        if not torch.isfinite(loss_sum):
            raise TrainingError(
                f"non-finite loss in epoch {epoch} by step {step}; stopping. The last good "
                f"checkpoint is {self.checkpoint_path} (lower the learning rate or enable "
                "gradient clipping)"
            )

    def _log(self, record: dict[str, Any]) -> None:
        with (self.output_dir / "train_log.jsonl").open("a") as handle:
            handle.write(json.dumps(record) + "\n")
        log.info(
            "epoch %3d  loss %10.2f  dev P %.2f R %.2f F1 %.2f  %.1fs  %.0f tok/s  drop %.2f%s",
            record["epoch"], record["loss"], record["dev_precision"], record["dev_recall"],
            record["dev_f1"], record["epoch_seconds"], record["tokens_per_s"],
            record["drop_rate"],
            "  *" if record["best"] else "",
        )
        if self.on_epoch_end is not None:
            self.on_epoch_end(record)

    def fit(self, resume: bool = False) -> TrainState:
        """Train until ``epochs`` or early stopping; keep the best model (by dev F1)."""
        tc = self.config.train
        main = _is_main()
        if main:
            self.output_dir.mkdir(parents=True, exist_ok=True)
        if resume:
            self.load_checkpoint()
        elif main:
            (self.output_dir / "train_log.jsonl").unlink(missing_ok=True)
        def out_of_time() -> bool:
            # Predictive: stop before an epoch that would end past the budget, judging its
            # length (training, dev evaluation and checkpoint) by the last epoch's.
            if tc.max_minutes <= 0 or not self.state.history:
                return False
            walls = [r.get("wall_seconds", 0.0) for r in self.state.history]
            return sum(walls) + walls[-1] > 60 * tc.max_minutes

        while (self.state.epoch < tc.epochs and self.state.bad_epochs < tc.patience
               and not out_of_time()):
            epoch = self.state.epoch + 1
            epoch_start = time.perf_counter()
            loss, tokens, seconds = self._train_epoch(epoch)
            self.scheduler.step()
            stop = torch.zeros(1)
            scores = evaluate_sharded(self.model, self.dev, self.vocabs, tc.eval_batch_tokens,
                                      self.device)
            rng_ranks = _gather_rng_states()
            if main:
                assert scores is not None
                improved = scores.f1 > self.state.best_f1
                self.state.epoch = epoch
                self.state.train_seconds += seconds
                if improved:
                    self.state.best_f1, self.state.best_epoch = scores.f1, epoch
                    self.state.bad_epochs = 0
                    save_model_dir(self.output_dir, self.model, self.vocabs, self.config)
                else:
                    self.state.bad_epochs += 1
                record = {
                    "epoch": epoch, "loss": loss, "dev_precision": scores.precision,
                    "dev_recall": scores.recall, "dev_f1": scores.f1,
                    "epoch_seconds": seconds, "tokens_per_s": tokens / max(seconds, 1e-9),
                    "drop_rate": self.last_drop_rate,
                    "peak_rss_mb": peak_rss_mib(),
                    "lr": self.optimizer.param_groups[0]["lr"], "best": improved,
                }
                record["wall_seconds"] = time.perf_counter() - epoch_start
                self.state.history.append(record)
                self.save_checkpoint(rng_ranks)
                self._log(record)
                stop[0] = float(self.state.bad_epochs >= tc.patience or out_of_time())
            else:
                self.state.epoch = epoch
            if dist.is_initialized():
                dist.broadcast(stop, src=0)
                if stop.item():
                    break
        return self.state


# ---------------------------------------------------------------------------- experiments
def _command_line() -> str:
    return " ".join([Path(sys.argv[0]).name if sys.argv else "python", *sys.argv[1:]])


def learning_curve(history: list[dict[str, Any]], path: Path) -> None:
    """Plot training loss and dev F1 per epoch to a PNG (atomically).

    Uses a bare :class:`matplotlib.figure.Figure`, so the caller's pyplot backend is untouched.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from docgraph.atomic import atomic_write

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


def training_threads(requested: int, device: torch.device, distributed: bool = False) -> int:
    """The intra-op thread count a training run sets (0: leave torch's own count alone).

    An explicit count (``requested > 0``) wins. Otherwise one process on a CPU gets one thread:
    two intra-op threads were slower than one for both models, and a second job on the other
    core made a two-thread run 10-20x slower (``docs/design.md``, "Both cores"). Processes of a
    distributed run have their threads set when they are spawned.
    """
    if requested > 0:
        return requested
    if not distributed and device.type == "cpu":
        return 1
    return 0


def run_experiment(config: ExperimentConfig, resume: bool = False, progress: bool = False
                   ) -> dict[str, Any]:
    """Train, select on dev, evaluate once on test, and write the run directory.

    Returns:
        The content of ``metrics.json``.
    """
    threads = training_threads(config.train.threads, resolve_device(config.device),
                               distributed=dist.is_initialized())
    if threads > 0:
        torch.set_num_threads(threads)
    output_dir = Path(config.output_dir)
    if resume and not (output_dir / "last.pt").is_file():
        raise ValueError(f"--resume {output_dir}: no checkpoint last.pt to resume from")
    seed_everything(config.seed)
    splits = load_dataset(config.dataset, config.data_dir)
    vocabs, pretrained, coverage = build_vocabularies(splits, config.embeddings)
    if coverage is not None and _is_main():
        log.info("pretrained vector coverage: %s", coverage)
    if pretrained is not None and pretrained.size(1) != config.model.word_dim:
        config = replace(config, model=replace(config.model, word_dim=int(pretrained.size(1))))
    lm_features: dict[str, Any] = {}
    if config.lm is not None:
        from docgraph.data.contextual import ContextualEncoder, cached_features, lm_record

        encoder = ContextualEncoder.from_config(config, device=str(resolve_device(config.device)))
        # In a multi-process run the first process computes and caches the features while the
        # others wait, then read the cache (instead of every process computing them).
        if not _is_main():
            dist.barrier()
        lm_features = {
            name: cached_features(docs, encoder, config.lm_cache_dir,
                                  f"{config.dataset}-{name}", progress=progress and _is_main())
            for name, docs in splits.items()
        }
        if _is_main() and dist.is_initialized():
            dist.barrier()
        config = replace(config, model=replace(config.model, lm_dim=encoder.dim))
        if _is_main():
            atomic_write_json(output_dir / "lm.json", lm_record(encoder))
        del encoder
    elif config.model.lm_dim:
        raise ValueError(f"model.lm_dim is {config.model.lm_dim} but no language model is "
                         "given (--lm PATH)")
    prepared = {name: prepare_split(docs, vocabs, config, lm_features.get(name))
                for name, docs in splits.items()}
    seed_everything(config.seed)
    model = build_model(config.model, vocabs, pretrained)
    trainer = Trainer(model, vocabs, config, prepared["train"], prepared["dev"], output_dir,
                      progress=progress)
    state = trainer.fit(resume=resume)
    if not _is_main():
        return {}
    best, _, _ = load_model_dir(output_dir, trainer.device)
    best.set_epoch(state.best_epoch)  # as it was when selected (pruning warm-up)
    results: dict[str, Any] = {}
    consistency: dict[str, Any] = {}
    for name in ("dev", "test"):
        if name in prepared:
            scores, predictions = evaluate(best, prepared[name], vocabs,
                                           config.train.eval_batch_tokens, trainer.device)
            results[name] = scores.to_dict()
            consistency[name] = split_consistency(prepared[name], predictions).to_dict()
    metrics = {
        **results,
        "epochs": state.epoch,
        "best_epoch": state.best_epoch,
        "train_seconds": round(state.train_seconds, 2),
        "seed": config.seed,
        "config": config.to_dict(),
        "command": _command_line(),
        "embedding_coverage": coverage,
        "consistency": consistency,
        "torch": torch.__version__,
        "device": str(trainer.device),
        "stop_reason": stop_reason(state, config.train),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M"),
        "processes": trainer.world,
        "threads": torch.get_num_threads(),
        "cpu": cpu_model(),
        **({"hardware": torch.cuda.get_device_name(trainer.device)}
           if trainer.device.type == "cuda" else {}),
    }
    atomic_write_json(output_dir / "metrics.json", metrics)
    learning_curve(state.history, output_dir / "learning_curve.png")
    return metrics


def run_seeds(config: ExperimentConfig, seeds: Sequence[int], progress: bool = False
              ) -> dict[str, Any]:
    """Run the same configuration with several seeds; write ``summary.json`` (mean ± std)."""
    from dataclasses import replace

    base = Path(config.output_dir)
    runs = []
    for seed in seeds:
        cfg = replace(config, seed=seed, output_dir=str(base / f"seed-{seed}"))
        runs.append(run_experiment(cfg, progress=progress))
    if not _is_main():  # the other processes of a data-parallel run hold no results
        return {}
    summary: dict[str, Any] = {
        "seeds": list(seeds), "runs": [str(base / f"seed-{s}") for s in seeds]
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
