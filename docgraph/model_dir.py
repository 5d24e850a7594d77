"""Model directories: build a model for a vocabulary, save it, load it back safely.

A *model directory* holds everything needed to tag new text: ``model.pt`` (weights, written
atomically, read with ``weights_only=True``), ``config.json`` (the full
:class:`~docgraph.config.ExperimentConfig`), ``vocab.json`` and, for a model trained with
contextual features, ``lm.json`` (where its language model is, and the hash of its files).
A *run directory* additionally holds ``last.pt`` (the resumable state) and ``train_log.jsonl``
(both written by :class:`~docgraph.training.Trainer`), ``metrics.json`` and
``learning_curve.png`` (:func:`~docgraph.experiment.run_experiment`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from torch import Tensor, nn

from docgraph.checkpoint import (
    CheckpointError,
    atomic_write_json,
    load_checkpoint,
    save_checkpoint,
)
from docgraph.config import ExperimentConfig
from docgraph.data.contextual import LanguageModelError, check_lm_record
from docgraph.data.vocab import Vocabularies, label_types
from docgraph.model import GCDoc, GCDocConfig, bioes_transition_masks


@dataclass(frozen=True)
class ModelOverrides:
    """What a user may change about a trained model when loading it to tag.

    Every way of loading a model to tag (:func:`load_model_dir`, the tagging processes of
    :func:`~docgraph.inference.predict_in_processes`, :meth:`~docgraph.tagger.Tagger.load`)
    takes one of these, so an override reaches every process.

    Args:
        lm: Where the language model the model was trained with now is, when it was moved
            (its files must be the same).
        threshold: Prune the document graph at this uncertainty threshold instead of the
            trained one (:meth:`~docgraph.model.GCDoc.set_threshold`; a value above
            ``ln C``, e.g. 100, prunes nothing).
    """

    lm: str | Path | None = None
    threshold: float | None = None

    def check(self, config: ExperimentConfig, directory: str | Path) -> None:
        """Raise :class:`ValueError` when the model of ``config`` cannot take these overrides
        (before any weights are loaded)."""
        if self.threshold is not None and not config.model.uses_uncertainty:
            raise ValueError(f"threshold {self.threshold}: {directory}: this model does not "
                             "prune its document graph (trained without pruning or without "
                             "the graph)")


def build_model(
    config: GCDocConfig, vocabs: Vocabularies, pretrained: Tensor | None = None
) -> GCDoc:
    """A :class:`~docgraph.model.GCDoc` sized for ``vocabs``, with constrained-decoding masks
    for its labels."""
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


def unwrap(model: nn.Module) -> GCDoc:
    """The model inside a :class:`~torch.nn.parallel.DistributedDataParallel` wrapper (or the
    model itself)."""
    return model.module if hasattr(model, "module") else model  # type: ignore[return-value]


def save_model_dir(directory: str | Path, model: nn.Module, vocabs: Vocabularies,
                   config: ExperimentConfig) -> None:
    """Write ``model.pt``, ``config.json`` and ``vocab.json`` (each atomically)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocabs.save(directory)
    atomic_write_json(directory / "config.json", config.to_dict())
    save_checkpoint(directory / "model.pt", {"model": unwrap(model).state_dict()})


def read_model_dir(directory: str | Path, overrides: ModelOverrides | None = None
                   ) -> tuple[ExperimentConfig, Vocabularies]:
    """The configuration and vocabularies of a model directory, without its weights.

    A model trained with contextual features records its language model in ``lm.json`` (path
    and hash of its files); the returned ``config.lm`` points at that directory, or at
    ``overrides.lm`` when given (the language model was moved), after checking that its files
    are the same.

    Raises:
        CheckpointError: A file is missing or unreadable, or the language model the model
            needs is missing or different.
        ValueError: The model cannot take ``overrides`` (:meth:`ModelOverrides.check`).
    """
    directory = Path(directory)
    overrides = overrides or ModelOverrides()
    if not directory.is_dir():
        raise CheckpointError(f"{directory}: model directory not found")
    try:
        config = ExperimentConfig.from_saved(json.loads((directory / "config.json").read_text()))
        vocabs = Vocabularies.load(directory)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CheckpointError(f"{directory}: unreadable model directory ({err})") from err
    if config.lm is not None or config.model.lm_dim:
        record_path = directory / "lm.json"
        try:
            record = json.loads(record_path.read_text())
            lm_dir = check_lm_record(record, overrides.lm, where=directory)
        except (OSError, ValueError, KeyError) as err:
            if not isinstance(err, LanguageModelError):
                err = f"{record_path}: unreadable record of the language model ({err})"
            raise CheckpointError(str(err)) from None
        config = replace(config, lm=str(lm_dir))
    overrides.check(config, directory)
    return config, vocabs


def load_model_dir(directory: str | Path, map_location: str | torch.device = "cpu",
                   overrides: ModelOverrides | None = None
                   ) -> tuple[GCDoc, Vocabularies, ExperimentConfig]:
    """Load a model directory written by :func:`save_model_dir`, in eval mode, with
    ``overrides`` applied (see :func:`read_model_dir`).

    Raises:
        CheckpointError: A file is missing, corrupt or incompatible, or the language model the
            model needs is missing or different.
        ValueError: The model cannot take ``overrides``.
    """
    config, vocabs = read_model_dir(directory, overrides)
    model = load_model_weights(directory, config, vocabs, map_location, overrides)
    return model, vocabs, config


def load_model_weights(directory: str | Path, config: ExperimentConfig, vocabs: Vocabularies,
                       map_location: str | torch.device = "cpu",
                       overrides: ModelOverrides | None = None) -> GCDoc:
    """The model of a directory whose configuration and vocabularies :func:`read_model_dir`
    already read (without reading them, or hashing a language model, again), in eval mode,
    with the threshold of ``overrides`` applied.

    Raises:
        CheckpointError: ``model.pt`` is missing, corrupt or does not fit the configuration.
    """
    directory = Path(directory)
    model = build_model(config.model, vocabs)
    state = load_checkpoint(directory / "model.pt", map_location)
    try:
        model.load_state_dict(state["model"])
    except (RuntimeError, KeyError) as err:
        raise CheckpointError(f"{directory / 'model.pt'}: weights do not fit ({err})") from err
    if overrides is not None and overrides.threshold is not None:
        model.set_threshold(overrides.threshold)
    model.eval()
    return model.to(map_location)
