"""Training: the optimisation step, the loop with early stopping, checkpoints and exact
resume, over one process or a data-parallel group.

:class:`Trainer` trains a :class:`~docgraph.model.GCDoc` on prepared splits
(:mod:`docgraph.graph.splits`) and keeps the best model by dev F1 in its run directory
(:func:`~docgraph.persistence.model_dir.save_model_dir`);
:func:`~docgraph.training.experiment.run_experiment`
builds everything a run needs and calls it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor, nn
from torch_geometric.data import Batch

from docgraph.batching.loader import iterate_batches
from docgraph.batching.sampler import TokenBudgetBatchSampler
from docgraph.config import ExperimentConfig, TrainConfig
from docgraph.config.errors import DocgraphError
from docgraph.data.augment import epoch_cases
from docgraph.data.vocab import Vocabularies
from docgraph.graph.build import DocumentGraph
from docgraph.graph.masking import mask_tokens, mention_mask, word_dropout_mask
from docgraph.graph.splits import PreparedSplit
from docgraph.metrics import Scores
from docgraph.model import GCDoc
from docgraph.persistence.checkpoint import (
    CheckpointError,
    changed_rows,
    full_rows,
    load_checkpoint,
    save_checkpoint,
)
from docgraph.persistence.model_dir import save_model_dir, weights_mismatch
from docgraph.runtime.atomic import WriteError, atomic_write_text
from docgraph.runtime.determinism import kernel_settings
from docgraph.runtime.lifetime import restore_handlers
from docgraph.runtime.machine import peak_rss_mib, resolve_device
from docgraph.runtime.processes import is_main_process, world_and_rank
from docgraph.runtime.progress import Progress
from docgraph.tagging.inference import evaluate_sharded
from docgraph.training.anchor import WeightAnchor
from docgraph.training.distil import Distiller

log = logging.getLogger("docgraph")


class TrainingError(DocgraphError, RuntimeError):
    """Training cannot go on (e.g. the loss became non-finite)."""


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
                  loss_reduction: str = "sentence_mean", world: int = 1,
                  distiller: Distiller | None = None) -> tuple[Tensor, Tensor | None]:
    """One optimisation step: forward, backward, clipping per parameter group, update.

    Reads nothing back from the device: returns the batch's summed loss and its number of
    pruned tokens (``None`` without pruning) as device tensors, for the caller to accumulate
    and check (see :meth:`Trainer._train_epoch`).

    Args:
        network: The model, or its DDP wrapper.
        optimizer: Its optimizer.
        batch: A batch (with its plan, :func:`~docgraph.batching.loader.collate`).
        clip: Parameter groups whose gradient norms are clipped apart (:func:`clip_groups`).
        clip_norm: Clipping threshold (0: none).
        loss_reduction: ``"sentence_mean"`` (divide by the batch's sentences) or ``"sum"``.
        world: Number of data-parallel processes (DDP averages gradients; a summed loss is
            scaled back up).
        distiller: Adds the starting model's distillation term to the loss (``--distil``).
    """
    out = network(batch)
    total = out.loss if distiller is None else out.loss + distiller.loss(batch, out)
    loss = total
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
    return total.detach(), dropped


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
    """Early-stopping state and history, saved in every checkpoint (``start_dev_f1``: the dev
    F1 of the starting model of a run that starts from one, its epoch 0)."""

    epoch: int = 0
    best_f1: float = -1.0
    best_epoch: int = 0
    bad_epochs: int = 0
    train_seconds: float = 0.0
    history: list[dict[str, Any]] = field(default_factory=list)
    start_dev_f1: float | None = None


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


def weights_digest(weights: dict[str, Tensor]) -> str:
    """The sha256 of ``weights`` (their names, shapes and bytes, in name order)."""
    digest = hashlib.sha256()
    for name in sorted(weights):
        tensor = weights[name].detach().contiguous().cpu()
        digest.update(f"{name}{list(tensor.shape)}{tensor.dtype}".encode())
        digest.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    return digest.hexdigest()


def seed_everything(seed: int) -> None:
    """Seed Python and torch."""
    random.seed(seed)
    torch.manual_seed(seed)


def steps_taken(state: TrainState) -> int:
    """The optimiser steps of the epochs of ``state``'s history (their records' ``steps``)."""
    return sum(int(record.get("steps", 0)) for record in state.history)


def effective_min_steps(config: TrainConfig, steps_per_epoch: int) -> int:
    """``min_steps`` as early stopping applies it: at most the steps of half the epoch cap
    (``epochs // 2`` epochs of ``steps_per_epoch``), so that early stopping can end a run of
    any corpus size before its cap."""
    return min(config.min_steps, steps_per_epoch * (config.epochs // 2))


def early_stopped(state: TrainState, config: TrainConfig, min_steps: int | None = None) -> bool:
    """Whether early stopping ends the run: ``patience`` epochs without a dev F1 improvement,
    and at least ``min_steps`` optimiser steps taken (``config.min_steps`` unless given:
    :func:`effective_min_steps`)."""
    least = config.min_steps if min_steps is None else min_steps
    return state.bad_epochs >= config.patience and steps_taken(state) >= least


#: A run whose dev F1 stays below :data:`NO_ENTITY_F1` in each of its first
#: :data:`NO_ENTITY_EPOCHS` epochs is warned about (:func:`no_entity_warning`).
NO_ENTITY_EPOCHS = 3
NO_ENTITY_F1 = 1.0


def no_entity_warning(history: Sequence[dict[str, Any]], dev_entities: int,
                      config: TrainConfig) -> str | None:
    """The warning of a run whose dev F1 has stayed below :data:`NO_ENTITY_F1` in each of its
    first :data:`NO_ENTITY_EPOCHS` epochs, once, after that epoch (``None`` otherwise): why,
    and what to try. ``dev_entities`` counts the gold entities of the dev split."""
    first = [r for r in history if 1 <= r["epoch"] <= NO_ENTITY_EPOCHS]
    if (not history or history[-1]["epoch"] != NO_ENTITY_EPOCHS or len(first) != NO_ENTITY_EPOCHS
            or any(r["dev_f1"] >= NO_ENTITY_F1 for r in first)):
        return None
    if dev_entities == 0:
        return (f"dev F1 0.00 in each of the first {NO_ENTITY_EPOCHS} epochs: the dev split has "
                "no entity, so its F1 is 0 whatever the model tags; give a dev file with "
                "entities, or --dev-fraction to hold out training documents")
    steps = sum(int(r.get("steps", 0)) for r in first)
    return (f"dev F1 below {NO_ENTITY_F1:g} in each of the first {NO_ENTITY_EPOCHS} epochs "
            f"({steps} optimiser steps of --batch-tokens {config.batch_tokens}): the model "
            "finds no dev entity yet. A small corpus needs more, smaller steps: a smaller "
            "--batch-tokens, more --epochs and --min-steps, a larger --lr (or --optimizer adam "
            "--lr 0.005 --loss-reduction sentence_mean); without a preset, a corpus under "
            "--small-corpus-tokens trains with the small-corpus settings (docs/training.md)")


def stop_reason(state: TrainState, config: TrainConfig, min_steps: int | None = None) -> str:
    """Why training ended: ``"early_stopping"`` (converged: ``patience`` epochs without a dev
    F1 improvement, after ``min_steps`` optimiser steps), ``"max_epochs"`` or ``"budget"``
    (``max_minutes`` ran out)."""
    if early_stopped(state, config, min_steps):
        return "early_stopping"
    if state.epoch >= config.epochs:
        return "max_epochs"
    return "budget"


def stop_line(state: TrainState, config: TrainConfig, min_steps: int | None = None) -> str:
    """Why a run stopped, in one line (the log's last word on its training)."""
    reason = stop_reason(state, config, min_steps)
    best = (f"the best epoch is {state.best_epoch} (dev F1 {state.best_f1:.2f})"
            if state.best_epoch or state.start_dev_f1 is None
            else f"the best is the starting model (dev F1 {state.best_f1:.2f})")
    steps = steps_taken(state)
    if reason == "early_stopping":
        why = (f"early stopping: no better dev F1 in the last {state.bad_epochs} epochs "
               f"(--patience {config.patience}) after {steps:,} optimiser steps")
    elif reason == "max_epochs":
        why = (f"the epoch cap (--epochs {config.epochs}), {state.bad_epochs} epochs after the "
               f"best (--patience {config.patience})")
    else:
        why = f"the time budget (--max-minutes {config.max_minutes:g})"
    return f"training stopped after epoch {state.epoch} by {why}; {best}"


def clip_groups(model: GCDoc) -> list[list[nn.Parameter]]:
    """Parameter groups whose gradients are clipped separately.

    The uncertainty tagger is an independent sub-module with its own token-summed loss
    (paper, "Document Graph Pruning"); clipping one norm over all parameters would let its
    gradient shrink the main model's steps. So the tagger and the rest are clipped apart.
    """
    graph = model.document_graph
    uncertainty = graph.uncertainty if graph is not None else None
    tagger = [] if uncertainty is None else [p for p in uncertainty.parameters()
                                            if p.requires_grad]
    tagger_ids = {id(p) for p in tagger}
    main = [p for p in model.parameters() if p.requires_grad and id(p) not in tagger_ids]
    return [group for group in (main, tagger) if group]


@contextmanager
def interrupt_after() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) and SIGTERM back until the block has run, then act on them: the
    files a block writes together (the best model, the checkpoint, the log record) stay
    consistent.

    Only in the main thread of a process (where Python handles signals); elsewhere the block
    just runs.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, lambda signum, frame: received.append(signum))
                for signum in held}
    try:
        yield
    finally:
        restore_handlers(previous)
    if received:
        signum = received[0]
        handler = previous[signum]
        if callable(handler):
            handler(signum, None)
        elif handler == signal.SIG_DFL:
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            os.kill(os.getpid(), signum)  # what the signal would have done


#: Steps between two checks that the epoch's summed loss is finite (each check reads one value
#: back from the device; the epoch's end is always checked).
FINITE_CHECK_EVERY = 50


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
        progress: Show the progress of every epoch and dev evaluation
            (:class:`~docgraph.runtime.progress.Progress`: a bar on a terminal, a line every few
            seconds otherwise).
        on_epoch_end: Optional callback receiving each epoch's log record.
        train_variants: The training split in other cases (:mod:`docgraph.data.augment`),
            index-aligned with ``train``: each epoch the documents that
            :func:`~docgraph.data.augment.epoch_cases` draws are taken from these.
        evaluate_start: Score the model on dev before the first epoch (a model that a run
            starts from, ``--init-from``) and count it as epoch 0: the best so far, saved and
            checkpointed, which an epoch must beat to replace it.
        dev_variants: Other forms of the dev split (``"lower"``, ``"novel"``) scored beside
            it each epoch; with any, the mean of the F1 scores selects the best epoch.
        anchor: Pulls the weights towards the starting model's after each step (built on
            the model at its starting weights; ``--anchor``).
        distiller: Adds the frozen starting model's distillation term to each step's loss
            (``--distil``).
    """

    model: GCDoc
    vocabs: Vocabularies
    config: ExperimentConfig
    train: PreparedSplit
    dev: PreparedSplit
    output_dir: Path
    progress: bool = True
    on_epoch_end: Callable[[dict[str, Any]], None] | None = None
    train_variants: dict[str, PreparedSplit] = field(default_factory=dict)
    evaluate_start: bool = False
    dev_variants: dict[str, PreparedSplit] = field(default_factory=dict)
    anchor: WeightAnchor | None = None
    distiller: Distiller | None = None

    def __post_init__(self) -> None:
        self.output_dir = Path(self.output_dir)
        self.device = resolve_device(self.config.device)
        self.model.to(self.device)
        if self.distiller is not None:
            self.distiller.to(self.device)
        world, rank = world_and_rank()
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
        self.min_steps = effective_min_steps(tc, len(self.sampler))
        if self.min_steps < tc.min_steps and is_main_process():
            log.info("--min-steps %d is more than the %d steps of half the epoch cap (--epochs "
                     "%d, %d step%s an epoch of --batch-tokens %d): early stopping waits for %d "
                     "steps", tc.min_steps, self.min_steps, tc.epochs, len(self.sampler),
                     "" if len(self.sampler) == 1 else "s", tc.batch_tokens, self.min_steps)
        self.clip_groups = clip_groups(self.model)
        # the run's starting weights: a checkpoint stores the rows of a table that differ
        # from them (a resumed run builds the same ones first; their digest checks it)
        self.start_weights = {k: v.detach().clone() for k, v in self.model.state_dict().items()
                              if v.dim() == 2 and v.is_floating_point()}
        self.start_digest = weights_digest(self.start_weights)
        self.state = TrainState()
        self.last_drop_rate = 0.0
        self.last_kernels = kernel_settings()

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
        optimizer = self.optimizer.state_dict()
        optimizer["state"] = {index: {name: changed_rows(value) if torch.is_tensor(value)
                                      else value for name, value in entry.items()}
                              for index, entry in optimizer["state"].items()}
        save_checkpoint(self.checkpoint_path, {
            "model": {k: changed_rows(v, self.start_weights.get(k))
                      for k, v in self.model.state_dict().items()},
            "start_digest": self.start_digest,
            "optimizer": optimizer,
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
        self._full_tensors(ckpt)
        mismatch = (weights_mismatch(self.model, ckpt["model"], self.config.model, self.vocabs)
                    if isinstance(ckpt.get("model"), dict) else None)
        if mismatch is not None:
            raise CheckpointError(f"{self.checkpoint_path}: does not fit this "
                                  f"model/configuration: {mismatch}")
        try:
            self.model.load_state_dict(ckpt["model"])
            self.optimizer.load_state_dict(ckpt["optimizer"])
            self.scheduler.load_state_dict(ckpt["scheduler"])
            # A checkpoint's state may hold fields that are derived from the history instead
            # (``wall_seconds``); only the fields TrainState has are restored.
            known = {f.name for f in fields(TrainState)}
            self.state = TrainState(**{k: v for k, v in ckpt["state"].items() if k in known})
            _set_rng_state(self._own_rng_state(ckpt))
        except (RuntimeError, KeyError, ValueError, TypeError) as err:
            raise CheckpointError(
                f"{self.checkpoint_path}: does not fit this model/configuration ({err})"
            ) from err

    def _full_tensors(self, ckpt: dict[str, Any]) -> None:
        """Rebuild in place the tensors that ``ckpt`` stores by their changed rows
        (:func:`~docgraph.persistence.checkpoint.changed_rows`): the model's on the run's
        starting weights, which must be those the checkpoint was written against; the
        optimiser's on zeros."""
        model = ckpt.get("model")
        if isinstance(model, dict) and any(isinstance(v, dict) for v in model.values()):
            if ckpt.get("start_digest") != self.start_digest:
                raise CheckpointError(
                    f"{self.checkpoint_path}: it stores the weights that changed from the "
                    "run's starting weights, and this run starts from other ones (another "
                    "corpus, seed, vocabulary or --init-from model)")
            ckpt["model"] = {k: full_rows(v, self.start_weights.get(k))
                             for k, v in model.items()}
        optimizer = ckpt.get("optimizer")
        if isinstance(optimizer, dict) and isinstance(optimizer.get("state"), dict):
            optimizer["state"] = {
                index: {name: full_rows(value) for name, value in entry.items()}
                if isinstance(entry, dict) else entry
                for index, entry in optimizer["state"].items()}

    def _own_rng_state(self, ckpt: dict[str, Any]) -> dict[str, Any]:
        """This process's random-number state in ``ckpt``: its rank's when the checkpoint
        holds one per rank for the same number of processes; otherwise the first process's
        (checkpoints of one process, or with a single state, which cannot resume a
        multi-process run exactly)."""
        ranks = ckpt.get("rng_ranks")
        world, rank = world_and_rank()
        if ranks is not None and len(ranks) == world:
            return ranks[rank]
        if world > 1 and is_main_process():
            log.warning("%s: no random-number state per process for %d processes; the resumed "
                        "run will differ from an uninterrupted one", self.checkpoint_path, world)
        return ckpt["rng"]

    def epoch_graphs(self, epoch: int) -> list[DocumentGraph]:
        """The training graphs of ``epoch``: each document in the form the epoch draws for it
        (:func:`~docgraph.data.augment.epoch_cases`; all as they are without augmentation),
        with the word dropout and mention masking of ``[train]`` drawn for the epoch."""
        tc = self.config.train
        graphs = self.train.graphs
        if self.train_variants:
            cases = epoch_cases(len(graphs), tc.lowercase_share, tc.uppercase_share,
                                self.config.seed, epoch, tc.novel_name_share)
            version = f"novel-{epoch % tc.novel_name_variants}"
            graphs = [graph if case == "cased" else
                      self.train_variants[version if case == "novel" else case].graphs[i]
                      for i, (case, graph) in enumerate(zip(cases, graphs))]
        if tc.word_dropout == 0 and tc.mention_masking == 0:
            return graphs
        # one generator per epoch and seed: every process and a resumed run draw the same
        generator = torch.Generator().manual_seed(
            int.from_bytes(hashlib.sha256(f"masking:{self.config.seed}:{epoch}".encode())
                           .digest()[:8], "little") >> 1)
        words, chars = self.vocabs.words.unk_index, self.vocabs.chars.unk_index
        outside = self.vocabs.labels.index("O")
        masked = []
        for graph in graphs:
            mentions = mention_mask(graph, tc.mention_masking, generator, outside)
            dropped = word_dropout_mask(graph, tc.word_dropout, generator) | mentions
            masked.append(mask_tokens(graph, dropped, mentions, words, chars))
        return masked

    # -- loop
    def _train_epoch(self, epoch: int) -> tuple[float, int, float]:
        tc = self.config.train
        self.model.set_epoch(epoch)  # pruning warm-up (GCDocConfig.unpruned_epochs)
        self.network.train()
        self.sampler.set_epoch(epoch)
        tokens = 0
        start = time.perf_counter()
        batches = iterate_batches(self.epoch_graphs(epoch), self.sampler, self.device,
                                  self.model.plan_settings(), prefetch=2)
        loss_sum = torch.zeros((), dtype=torch.float64, device=self.device)
        drop_sum = torch.zeros((), dtype=torch.long, device=self.device)

        counts = [0, 0]  # steps, tokens
        world = self.world
        kernels = kernel_settings()  # what the steps run with, for the epoch's record

        def stats() -> dict[str, str]:
            # called only when a progress line is due (one read-back from the device); it
            # refers to neither the trainer nor the bar: a cycle through the bar would keep the
            # trainer, its DDP wrapper and the process group alive past the group's end
            elapsed = time.perf_counter() - start
            return {"tok/s": f"{counts[1] * world / max(elapsed, 1e-9):,.0f}",
                    "mean loss": f"{float(loss_sum) / max(counts[0], 1):.4g}"}

        with Progress(f"epoch {epoch}", total=len(self.sampler), unit="step", stats=stats,
                      enabled=self.progress) as bar:
            for step, (_, batch) in enumerate(batches, start=1):
                loss, drop = training_step(self.network, self.optimizer, batch,
                                           self.clip_groups, tc.clip_norm, tc.loss_reduction,
                                           self.world, self.distiller)
                if self.anchor is not None:
                    self.anchor.pull(self.optimizer.param_groups[0]["lr"])
                loss_sum += loss
                if drop is not None:
                    drop_sum += drop
                tokens += int(batch.num_nodes)
                counts[:] = step, tokens
                if step % FINITE_CHECK_EVERY == 0:
                    self._check_finite(loss_sum, epoch, step)
                bar.update()
        self._check_finite(loss_sum, epoch, len(self.sampler))
        total_loss, dropped = float(loss_sum), int(drop_sum)
        seconds = time.perf_counter() - start
        if self.world > 1:  # the epoch's figures over all processes
            counts = torch.tensor([tokens, dropped, total_loss], dtype=torch.float64)
            dist.all_reduce(counts)
            tokens, dropped, total_loss = int(counts[0]), int(counts[1]), float(counts[2])
        self.last_drop_rate = dropped / max(tokens, 1)
        self.last_kernels = kernels
        return total_loss, tokens, seconds

    def _check_finite(self, loss_sum: Tensor, epoch: int, step: int) -> None:
        # One read-back every FINITE_CHECK_EVERY steps instead of one per step.
        if not torch.isfinite(loss_sum):
            raise TrainingError(
                f"non-finite loss in epoch {epoch} by step {step}; stopping. The last good "
                f"checkpoint is {self.checkpoint_path} (lower the learning rate or enable "
                "gradient clipping)"
            )

    @property
    def log_path(self) -> Path:
        """The run's epoch records, one JSON line each (``train_log.jsonl``)."""
        return self.output_dir / "train_log.jsonl"

    def _rebuild_log(self) -> None:
        """Rewrite the epoch log from the checkpoint's history (atomically), so that a line
        lost to a crash between the checkpoint and the log comes back; a history that lacks
        epochs leaves the log as it is."""
        history = self.state.history
        if [r.get("epoch") for r in history] != list(range(1, self.state.epoch + 1)):
            return
        atomic_write_text(self.log_path, "".join(json.dumps(r) + "\n" for r in history))

    def _log(self, record: dict[str, Any]) -> None:
        try:
            with self.log_path.open("a") as handle:
                handle.write(json.dumps(record) + "\n")
        except OSError as err:
            raise WriteError.from_os_error(err, self.log_path) from err
        forms = {key[len("dev_f1_"):]: value for key, value in record.items()
                 if key.startswith("dev_f1_")}
        log.info(
            "epoch %3d  loss %10.2f  dev P %.2f R %.2f F1 %.2f%s  %.1fs  %.0f tok/s  drop %.2f%s",
            record["epoch"], record["loss"], record["dev_precision"], record["dev_recall"],
            record["dev_f1"], _forms_text(record["dev_f1"], forms), record["epoch_seconds"],
            record["tokens_per_s"], record["drop_rate"],
            "  *" if record["best"] else "",
        )
        if self.on_epoch_end is not None:
            self.on_epoch_end(record)

    def fit(self, resume: bool = False) -> TrainState:
        """Train until ``epochs`` or early stopping; keep the best model (by dev F1)."""
        tc = self.config.train
        main = is_main_process()
        if main:
            self.output_dir.mkdir(parents=True, exist_ok=True)
        if resume:
            self.load_checkpoint()
            if main:
                self._rebuild_log()
        else:
            if main:
                self.log_path.unlink(missing_ok=True)
            if self.evaluate_start:
                self._evaluate_start()

        def out_of_time() -> bool:
            # Predictive: stop before an epoch that would end past the budget, judging its
            # length (training, dev evaluation and checkpoint) by the last epoch's.
            if tc.max_minutes <= 0 or not self.state.history:
                return False
            walls = [r.get("wall_seconds", 0.0) for r in self.state.history]
            return sum(walls) + walls[-1] > 60 * tc.max_minutes

        while (self.state.epoch < tc.epochs and not early_stopped(self.state, tc, self.min_steps)
               and not out_of_time()):
            epoch = self.state.epoch + 1
            epoch_start = time.perf_counter()
            loss, tokens, seconds = self._train_epoch(epoch)
            self.scheduler.step()
            stop = torch.zeros(1)
            scores, forms = self._score_dev(f"epoch {epoch}")
            rng_ranks = _gather_rng_states()
            if main:
                assert scores is not None
                selected = _selection_f1(scores.f1, forms)
                # Ctrl-C waits until the model, the checkpoint and the log agree
                with interrupt_after():
                    improved = selected > self.state.best_f1
                    self.state.epoch = epoch
                    self.state.train_seconds += seconds
                    if improved:
                        self.state.best_f1, self.state.best_epoch = selected, epoch
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
                        "steps": len(self.sampler), **self.last_kernels,
                        **({"anchor_distance": self.anchor.distance()}
                           if self.anchor is not None else {}),
                        **({f"dev_f1_{name}": f1 for name, f1 in forms.items()}
                           | ({"selection_f1": selected} if forms else {})),
                    }
                    record["wall_seconds"] = time.perf_counter() - epoch_start
                    self.state.history.append(record)
                    self.save_checkpoint(rng_ranks)
                    self._log(record)
                warning = no_entity_warning(self.state.history, scores.support, tc)
                if warning is not None:
                    log.warning("%s", warning)
                stop[0] = float(early_stopped(self.state, tc, self.min_steps) or out_of_time())
            else:
                self.state.epoch = epoch
            if dist.is_initialized():
                dist.broadcast(stop, src=0)
                if stop.item():
                    break
        if main:
            log.info("%s", stop_line(self.state, tc, self.min_steps))
        return self.state

    def _evaluate_start(self) -> None:
        """Epoch 0 of :attr:`evaluate_start`: the starting model's dev F1, kept as the best
        model and checkpointed (so that a run interrupted in its first epoch resumes)."""
        scores, forms = self._score_dev("starting model")
        rng_ranks = _gather_rng_states()
        if not is_main_process():
            return
        assert scores is not None
        with interrupt_after():
            self.state.best_f1 = self.state.start_dev_f1 = _selection_f1(scores.f1, forms)
            self.state.best_epoch = 0
            save_model_dir(self.output_dir, self.model, self.vocabs, self.config)
            self.save_checkpoint(rng_ranks)
        log.info("epoch   0  the starting model: dev P %.2f R %.2f F1 %.2f%s", scores.precision,
                 scores.recall, scores.f1, _forms_text(scores.f1, forms))

    def _score_dev(self, label: str) -> tuple[Scores | None, dict[str, float]]:
        """Dev scores and (main process) the F1 of each of :attr:`dev_variants`."""
        tc = self.config.train
        scores = evaluate_sharded(self.model, self.dev, self.vocabs, tc.eval_batch_tokens,
                                  self.device,
                                  progress=f"dev ({label})" if self.progress else None)
        forms: dict[str, float] = {}
        for name, split in self.dev_variants.items():
            form = evaluate_sharded(self.model, split, self.vocabs, tc.eval_batch_tokens,
                                    self.device,
                                    progress=f"dev, {name} ({label})" if self.progress else None)
            if form is not None:
                forms[name] = form.f1
        return scores, forms


def _selection_f1(dev_f1: float, forms: dict[str, float]) -> float:
    """What selects the best epoch: dev F1, or its mean with the F1 of the dev's other forms."""
    return (dev_f1 + sum(forms.values())) / (1 + len(forms))


def _forms_text(dev_f1: float, forms: dict[str, float]) -> str:
    """``"  lower 91.20 novel 80.10  selection 88.30"``; empty without other forms."""
    if not forms:
        return ""
    return ("  " + " ".join(f"{name} {f1:.2f}" for name, f1 in forms.items())
            + f"  selection {_selection_f1(dev_f1, forms):.2f}")


def training_threads(requested: int, device: torch.device, distributed: bool = False) -> int:
    """The intra-op thread count a training run sets (0: leave torch's own count alone).

    An explicit count (``requested > 0``) wins. Otherwise one process on a CPU gets one thread,
    the faster setting for both models and the safe one beside a second job
    (``docs/experiments.md``, "Both cores" and "One thread per CPU process"). Processes of a
    distributed run have their threads set when they are spawned.
    """
    if requested > 0:
        return requested
    if not distributed and device.type == "cpu":
        return 1
    return 0


