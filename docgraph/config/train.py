"""Optimisation settings of a training run; torch-free."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from docgraph.config.fields import (
    CAP,
    MACHINE,
    SHARDING,
    ConfigError,
    check_config,
    choice,
    integer,
    number,
    settings_of,
    switch,
)

__all__ = ["SMALL_CORPUS", "TrainConfig", "flags_of", "small_corpus_line",
           "small_corpus_settings"]


@dataclass
class TrainConfig:
    """Optimisation settings.

    The paper trains with mini-batch SGD (learning rate 0.01, L2 1e-8, gradient clipping at
    norm 5) and early stopping on dev F1; that is the default here. ``batch_tokens`` forms
    batches of whole documents by a token budget (the paper's "batch size 20" does not say of
    what). ``loss_reduction="sum"`` uses the summed losses of the paper's equations;
    ``"sentence_mean"`` divides them by the number of sentences of the batch.

    Args:
        epochs: Maximum number of epochs.
        patience: Early stopping: epochs without a dev F1 improvement before stopping.
        min_steps: Early stopping does not stop a run before it has taken this many
            optimiser steps (a small corpus takes few steps an epoch: its first epochs may
            find no entity yet); ``epochs`` still caps the run.
        small_corpus_tokens: ``train.py`` without a preset (no ``--config`` and no
            ``configs/<dataset>.toml``): a training split of fewer tokens trains with
            :data:`SMALL_CORPUS` wherever no flag sets a value (:func:`small_corpus_settings`);
            0 never does.
        optimizer: ``"sgd"`` or ``"adam"``.
        lr: Learning rate.
        momentum: SGD momentum.
        weight_decay: L2 regularisation.
        clip_norm: Gradient clipping threshold (0 disables).
        lr_schedule: ``"none"``, ``"inverse"`` (``lr / (1 + lr_decay * epoch)``, as in Ma and
            Hovy 2016) or ``"cosine"`` (over ``epochs``).
        lr_decay: Decay rate of the ``"inverse"`` schedule.
        batch_tokens: Token budget of a training batch.
        eval_batch_tokens: Token budget of an evaluation batch.
        loss_reduction: ``"sum"`` or ``"sentence_mean"``.
        threads: Torch intra-op threads. 0 (automatic): one thread for a single training
            process on a CPU (faster than two and safe beside other jobs: ``docs/experiments.md``,
            "Both cores"), the cores
            shared out between the processes of a multi-process run, torch's default on CUDA.
        processes: Training processes of ``scripts/train.py`` on a CPU (data-parallel, gloo):
            0 (default) chooses one per core, at most 2 (see
            :func:`docgraph.runtime.processes.default_processes`); 1 trains in one process. The
            ``batch_tokens`` budget is the *global* batch: each of :math:`P` processes takes
            batches of ``batch_tokens / P`` tokens and DDP averages the gradients, so the
            optimisation matches one process up to the batch composition. ``torchrun`` and
            :func:`~docgraph.training.experiment.run_experiment` ignore this field.
        max_minutes: Wall-clock budget of the training loop in minutes (0: no limit). No epoch
            starts that would end past it, judging by the length of the last epoch (training,
            dev evaluation and checkpoint); the first epoch always runs. The best model so far
            is then evaluated as usual.
        lowercase_share: Case augmentation (:mod:`docgraph.data.augment`): the share of the
            training documents seen lowercased in each epoch, whole documents, drawn anew
            every epoch from the seed.
        uppercase_share: The share seen uppercased (drawn apart from the lowercased ones; the
            two shares sum to at most 1).
        novel_name_share: Names never seen (:mod:`docgraph.data.novel_names`): the share of
            the training documents seen each epoch with every entity word replaced by an
            invented word, consistently within the document (drawn apart from the case shares;
            the three sum to at most 1).
        novel_name_variants: The number of invented-name versions of the training split; a
            document drawn in epoch ``e`` is seen in version ``e mod novel_name_variants``.
        novel_name_cues: Where above 0, the odd-numbered invented-name versions keep the
            words found in at least this many different mentions of the training split
            (:func:`~docgraph.data.novel_names.cue_words`: ``"Corp"``, ``"Bank"``, first
            names), so that an invented name with a telling word (``"Halvorsen Optics"``) is
            learnt from that word; the even-numbered versions invent every word.
        novel_name_common_cues: The cue words of ``novel_name_cues`` also hold every mention
            word the training split uses in lowercase outside mentions (``"airport"``,
            ``"cement"``), so that a common word inside a name is learnt as telling its type.
        word_dropout: The probability that a training token's word id is replaced by the
            unknown word in a step (its characters kept; :mod:`docgraph.graph.masking`).
        mention_masking: The probability that a token of an entity mention that repeats an
            earlier token of its document loses its word and its characters in a step, so that
            only its context and the document graph tell its type.
        selection: What selects the best epoch and stops early: ``"dev"``, dev F1;
            ``"robust_dev"``, the mean of dev F1 on the dev split as it is, lowercased and with
            invented names (:data:`~docgraph.data.novel_names.SELECTION_SEED`), for a model
            meant for text unlike its training data.
        deterministic: Ask PyTorch, cuBLAS and cuDNN for deterministic kernels
            (:func:`~docgraph.runtime.determinism.set_deterministic`), so that two CUDA runs with
            one
            seed give bitwise-equal weights. Every operator of a step is deterministic on
            CUDA already; this pins the libraries' own choices (cuBLAS workspaces, atomic
            fast paths). No effect on a CPU, where runs are reproducible anyway.
    """

    epochs: int = integer(50, low=1, flag="--epochs", help="maximum number of epochs", marks=(CAP,))
    patience: int = integer(8, low=1, flag="--patience", help="early-stopping patience in epochs")
    min_steps: int = integer(0, low=0, flag="--min-steps",
                             help="early stopping waits for this many optimiser steps")
    small_corpus_tokens: int = integer(
        20_000, low=0, flag="--small-corpus-tokens", metavar="N",
        help="without a preset, a training split of fewer tokens trains with the small-corpus "
             "settings where no flag sets them (0: never)")
    optimizer: str = choice("sgd", ("sgd", "adam"), flag="--optimizer", help="sgd (paper) or adam")
    lr: float = number(0.01, low=0.0, low_open=True, flag="--lr", help="learning rate")
    momentum: float = number(0.0, low=0.0, high=1.0, high_open=True, flag="--momentum",
                             help="SGD momentum")
    weight_decay: float = number(1e-8, low=0.0, flag="--weight-decay", help="L2 regularisation")
    clip_norm: float = number(5.0, low=0.0, flag="--clip-norm",
                              help="gradient clipping norm (0 disables)")
    lr_schedule: str = choice("none", ("none", "inverse", "cosine"), flag="--lr-schedule",
                              help="learning-rate schedule")
    lr_decay: float = number(0.05, low=0.0, flag="--lr-decay",
                             help="decay of the inverse schedule")
    batch_tokens: int = integer(2000, low=1, flag="--batch-tokens",
                                help="token budget of a training batch")
    eval_batch_tokens: int = integer(8000, low=1, flag="--eval-batch-tokens",
                                     help="token budget when evaluating", marks=(MACHINE,))
    loss_reduction: str = choice("sum", ("sum", "sentence_mean"), flag="--loss-reduction",
                                 help="sum (paper) or the mean over the sentences of a batch")
    threads: int = integer(0, low=0, flag="--threads",
                           help="torch intra-op threads (0: one per CPU process; torch default "
                                "on CUDA)", marks=(MACHINE,))
    processes: int = integer(0, low=0, flag="--processes",
                             help="training processes on a CPU, at most one per core (0: one "
                                  "per core, at most 2; 1: one process)", marks=(SHARDING,))
    max_minutes: float = number(0.0, low=0.0, flag="--max-minutes",
                                help="wall-clock budget: start no epoch that would end past it "
                                     "(0: no limit)", marks=(CAP, MACHINE))
    lowercase_share: float = number(0.0, low=0.0, high=1.0, flag="--lowercase-share",
                                    help="case augmentation: share of the training documents "
                                         "seen lowercased each epoch")
    uppercase_share: float = number(0.0, low=0.0, high=1.0, flag="--uppercase-share",
                                    help="case augmentation: share of the training documents "
                                         "seen uppercased each epoch")
    novel_name_share: float = number(0.0, low=0.0, high=1.0, flag="--novel-name-share",
                                     help="share of the training documents seen each epoch "
                                          "with invented names")
    novel_name_variants: int = integer(3, low=1, high=64, flag="--novel-name-variants",
                                       help="invented-name versions of the training split")
    novel_name_cues: int = integer(0, low=0, high=1_000_000, flag="--novel-name-cues",
                                   help="odd invented-name versions keep words found in at "
                                        "least this many training mentions (0: none)")
    novel_name_common_cues: bool = switch(
        False, switches={"--novel-name-common-cues": True},
        help="the cue words kept in invented names also hold the mention words the training "
             "split uses as common (lowercase) words")
    word_dropout: float = number(0.0, low=0.0, high=1.0, high_open=True, flag="--word-dropout",
                                 help="probability that a training token's word becomes the "
                                      "unknown word")
    mention_masking: float = number(0.0, low=0.0, high=1.0, flag="--mention-masking",
                                    help="probability that a repeated mention token loses its "
                                         "word and characters")
    selection: str = choice("dev", ("dev", "robust_dev"), flag="--selection",
                            help="model selection and early stopping on dev F1 (dev) or on the "
                                 "mean of dev F1 as it is, lowercased and with invented names "
                                 "(robust_dev)")
    deterministic: bool = switch(False, help="deterministic kernels on CUDA",
                                 switches={"--deterministic": True})

    def __post_init__(self) -> None:
        check_config(self, "train")
        shares = self.lowercase_share + self.uppercase_share + self.novel_name_share
        if shares > 1:
            raise ConfigError(f"[train] lowercase_share + uppercase_share + novel_name_share = "
                              f"{self.lowercase_share} + {self.uppercase_share} + "
                              f"{self.novel_name_share}: expected a sum of at most 1")
        if self.novel_name_common_cues and not self.novel_name_cues:
            raise ConfigError("[train] novel_name_common_cues needs novel_name_cues above 0 "
                              "(the words join the cue words)")
        if self.novel_name_cues and not self.novel_name_share:
            raise ConfigError("[train] novel_name_cues needs novel_name_share above 0 (the cue "
                              "words are kept in the invented-name versions)")


#: The ``[train]`` settings of a small corpus (fewer training tokens than
#: :attr:`TrainConfig.small_corpus_tokens`) trained without a preset: Adam at the learning rate
#: and with the loss of the bundled sample corpus's preset (``configs/sample.toml``), batches of
#: 500 tokens (ten or more steps an epoch from 5,000 tokens up; the built-in 2,000 give a
#: 30-document corpus three), early stopping only after ``min_steps`` steps, one process
#: (batches this small gain nothing from two). Reasons and measurement: ``docs/training.md``.
SMALL_CORPUS: Mapping[str, Any] = MappingProxyType({
    "optimizer": "adam", "lr": 0.005, "loss_reduction": "sentence_mean", "batch_tokens": 500,
    "epochs": 100, "patience": 10, "min_steps": 300, "processes": 1,
})


def small_corpus_settings(tokens: int, config: TrainConfig, given: Collection[str] = ()
                          ) -> dict[str, Any]:
    """The values of :data:`SMALL_CORPUS` that a run on a training split of ``tokens`` tokens
    takes: none unless ``tokens`` is below ``config.small_corpus_tokens``; then every one whose
    key (``"lr"``) is not in ``given`` (the settings a flag sets)."""
    if tokens >= config.small_corpus_tokens:
        return {}
    return {key: value for key, value in SMALL_CORPUS.items() if key not in given}


def flags_of(values: Mapping[str, Any]) -> str:
    """``"--optimizer adam --lr 0.005"``: ``[train]`` values as their flags."""
    flags = {name: setting.flag for name, setting in settings_of(TrainConfig)}
    return " ".join(f"{flags[key]} {value:g}" if isinstance(value, float)
                    else f"{flags[key]} {value}" for key, value in values.items())


def small_corpus_line(documents: int, tokens: int, config: TrainConfig) -> str | None:
    """The line a run on a small corpus logs (``None`` for a corpus that is not small, below
    :attr:`TrainConfig.small_corpus_tokens`): the corpus's size, the run's values of the keys
    of :data:`SMALL_CORPUS`, and those of them that differ from it."""
    if tokens >= config.small_corpus_tokens:
        return None
    current = {key: getattr(config, key) for key in SMALL_CORPUS}
    line = (f"small corpus ({documents:,} documents, {tokens:,} tokens; "
            f"--small-corpus-tokens {config.small_corpus_tokens:,}): {flags_of(current)}")
    other = {key: value for key, value in SMALL_CORPUS.items() if current[key] != value}
    if not other:
        return line + " (the small-corpus settings; a flag changes any of them)"
    return (line + f" (the small-corpus settings would be {flags_of(other)}: train.py takes "
            "them where no preset or flag sets them)")
