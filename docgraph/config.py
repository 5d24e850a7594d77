"""Experiment configuration: dataclasses for every knob, loadable from TOML presets.

A preset (``configs/<dataset>.toml``) has top-level keys of :class:`ExperimentConfig` and the
tables ``[model]`` (:class:`~docgraph.model.GCDocConfig`), ``[graph]``
(:class:`~docgraph.graph.GraphConfig`) and ``[train]`` (:class:`TrainConfig`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from docgraph.graph import GraphConfig
from docgraph.model import SAVED_WITHOUT, GCDocConfig
from docgraph.presets import load_toml, preset_path
from docgraph.validation import check_field, check_values

__all__ = ["ExperimentConfig", "TrainConfig", "apply_overrides", "load_toml", "preset_path"]



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
            process on a CPU (measured faster than two, and safe beside other jobs), the cores
            shared out between the processes of a multi-process run, torch's default on CUDA.
        processes: Training processes of ``scripts/train.py`` on a CPU (data-parallel, gloo):
            0 (default) chooses one per core, at most 2 (see
            :func:`docgraph.training.distributed.default_processes`); 1 trains in one process. The
            ``batch_tokens`` budget is the *global* batch: each of :math:`P` processes takes
            batches of ``batch_tokens / P`` tokens and DDP averages the gradients, so the
            optimisation matches one process up to the batch composition. ``torchrun`` and
            :func:`~docgraph.training.experiment.run_experiment` ignore this field.
        max_minutes: Wall-clock budget of the training loop in minutes (0: no limit). No epoch
            starts that would end past it, judging by the length of the last epoch (training,
            dev evaluation and checkpoint); the first epoch always runs. The best model so far
            is then evaluated as usual.
        deterministic: Ask PyTorch, cuBLAS and cuDNN for deterministic kernels
            (:func:`~docgraph.runtime.determinism.set_deterministic`), so that two CUDA runs with
            one
            seed give bitwise-equal weights. Every operator of a step is deterministic on
            CUDA already; this pins the libraries' own choices (cuBLAS workspaces, atomic
            fast paths). No effect on a CPU, where runs are reproducible anyway.
    """

    epochs: int = 50
    patience: int = 8
    optimizer: str = "sgd"
    lr: float = 0.01
    momentum: float = 0.0
    weight_decay: float = 1e-8
    clip_norm: float = 5.0
    lr_schedule: str = "none"
    lr_decay: float = 0.05
    batch_tokens: int = 2000
    eval_batch_tokens: int = 8000
    loss_reduction: str = "sum"
    threads: int = 0
    processes: int = 0
    max_minutes: float = 0.0
    deterministic: bool = False

    def __post_init__(self) -> None:
        for f in fields(self):
            check_field("train", f.name, getattr(self, f.name))


@dataclass
class ExperimentConfig:
    """Everything a training run needs.

    Args:
        dataset: ``"sample"``, ``"conll03"``, ``"ontonotes"`` or ``"column"``.
        data_dir: Directory of the corpus files (``None``: the dataset's default).
        embeddings: ``"glove-6b-50d"``, ``"none"`` or a path to a GloVe/word2vec text file.
        output_dir: Where the model, logs and metrics go.
        seed: Random seed of the run.
        device: ``"auto"``, ``"cpu"`` or ``"cuda"``.
        lm: Directory of a Hugging Face encoder whose frozen states are added as contextual
            word features (:mod:`docgraph.data.contextual`); ``None`` uses none.
        lm_context: Subwords of same-document context on each side of a sentence (FLERT);
            0 encodes every sentence alone.
        lm_pooling: ``"mean"`` of a word's subword states or its ``"first"`` subword's.
        lm_layers: Mean of this many last hidden layers.
        lm_pack: Encode consecutive sentences of a document in shared windows (several times
            fewer subwords to encode; each sentence keeps at least ``lm_context`` subwords of
            context per side). Off by default: the committed +LM results (all but the
            ``-lm-pack-`` runs) used one window per sentence.
        lm_cache_dir: Where the features of the corpus splits are cached (``None``:
            ``$DOCGRAPH_CACHE_DIR/lm`` or ``~/.cache/docgraph/lm``).
        model: Model hyper-parameters.
        graph: Document-graph construction.
        train: Optimisation.
    """

    dataset: str = "sample"
    data_dir: str | None = None
    embeddings: str = "glove-6b-50d"
    output_dir: str = "runs/sample"
    seed: int = 1
    device: str = "auto"
    lm: str | None = None
    lm_context: int = 64
    lm_pooling: str = "mean"
    lm_layers: int = 4
    lm_pack: bool = False
    lm_cache_dir: str | None = None
    model: GCDocConfig = field(default_factory=GCDocConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name not in ("model", "graph", "train"):
                check_field("", f.name, getattr(self, f.name))

    def graph_config(self) -> GraphConfig:
        """The effective graph configuration of the run.

        ``graph.seed = None`` (the default) becomes the run's :attr:`seed`, so every seed of an
        experiment samples its own neighbours; an explicit ``graph.seed`` (e.g. ``0``, stored in
        the ``config.json`` of runs made before this option) is kept. Build the graphs of a run
        from this, not from :attr:`graph`.

        Returns:
            :attr:`graph` with its ``seed`` resolved (a new object; ``self`` is unchanged).
        """
        return self.graph.resolve(self.seed)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable copy (frozensets become sorted lists)."""
        out = asdict(self)
        for key, value in out["graph"].items():
            if isinstance(value, (set, frozenset)):
                out["graph"][key] = sorted(value)
        return out

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ExperimentConfig:
        """Build from a dictionary such as one read from TOML or ``metrics.json``."""
        return apply_overrides(cls(), values)

    @classmethod
    def from_saved(cls, values: dict[str, Any]) -> ExperimentConfig:
        """Build from a run's ``config.json``: model keys it lacks keep the meaning they had
        when it was written (:data:`docgraph.model.SAVED_WITHOUT`), not today's defaults."""
        model = values.get("model")
        if isinstance(model, dict):
            values = {**values, "model": {**SAVED_WITHOUT, **model}}
        return cls.from_dict(values)


_SECTIONS = {"model": GCDocConfig, "graph": GraphConfig, "train": TrainConfig}


def _coerce(cls: type, values: dict[str, Any], where: str) -> dict[str, Any]:
    known = {f.name: f for f in fields(cls)}
    out = {}
    for key, value in values.items():
        if key not in known:
            raise ValueError(f"{where}: unknown key {key!r} (expected one of {sorted(known)})")
        if key == "skip_tokens" and value is not None:
            value = frozenset(value)
        out[key] = value
    return out


def apply_overrides(config: ExperimentConfig, values: dict[str, Any], where: str = "config"
                    ) -> ExperimentConfig:
    """Return a copy of ``config`` with ``values`` (nested like the TOML file) applied.

    Every value is checked first (:func:`docgraph.validation.check_values`), naming ``where``.
    """
    check_values(values, where)
    top = {k: v for k, v in values.items() if k not in _SECTIONS}
    top = _coerce(ExperimentConfig, top, where)
    sections = {}
    for name, cls in _SECTIONS.items():
        current = getattr(config, name)
        if name in values:
            if not isinstance(values[name], dict):
                raise ValueError(f"{where}: [{name}] must be a table")
            sections[name] = replace(current, **_coerce(cls, values[name], f"{where} [{name}]"))
        else:
            sections[name] = replace(current)
    return replace(config, **top, **sections)
