"""The configuration of a training run: :class:`ExperimentConfig` and its sections, their
TOML form and overrides; torch-free.

A preset (``configs/<dataset>.toml``) has top-level keys of :class:`ExperimentConfig` and the
tables ``[model]`` (:class:`~docgraph.config.model.GCDocConfig`), ``[graph]``
(:class:`~docgraph.config.graph.GraphConfig`), ``[train]``
(:class:`~docgraph.config.train.TrainConfig`) and ``[fine_tune]``
(:class:`~docgraph.config.fine_tune.FineTuneConfig`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from docgraph.config.fields import (
    MACHINE,
    ConfigError,
    Setting,
    check_config,
    check_field,
    choice,
    integer,
    number,
    settings_of,
    switch,
    text,
)
from docgraph.config.fine_tune import FineTuneConfig
from docgraph.config.graph import GraphConfig
from docgraph.config.model import SAVED_WITHOUT, GCDocConfig
from docgraph.config.train import TrainConfig

__all__ = ["DATASET_NAMES", "SECTIONS", "ExperimentConfig", "apply_overrides", "check_values",
           "run_dirs", "section_settings", "seed_dir"]

#: The corpora :func:`~docgraph.data.registry.load_dataset` reads (the registry checks it).
DATASET_NAMES = ("sample", "conll03", "ontonotes", "column")


@dataclass
class ExperimentConfig:
    """Everything a training run needs.

    Args:
        dataset: ``"sample"``, ``"conll03"``, ``"ontonotes"`` or ``"column"``.
        data_dir: Directory of the corpus files (``None``: the dataset's default).
        train_file: A training file of one's own (CoNLL columns in IOB1, IOB2 or BIOES, span
            JSON lines ``.jsonl`` or a spaCy DocBin ``.spacy``;
            :func:`~docgraph.data.registry.labelled_format`), read instead of
            :attr:`dataset` and :attr:`data_dir`.
        dev_file: The dev file that goes with :attr:`train_file` (any of its formats); without
            it, :attr:`dev_fraction` takes dev from the training documents.
        test_file: The test file that goes with :attr:`train_file`, scored once after
            training (``None``: no test split).
        dev_fraction: Take this share of the training documents, drawn with :attr:`seed`, as
            the dev split (for a corpus without a dev file; a dev file there is not read);
            ``0``: the corpus's dev file.
        embeddings: ``"glove-6b-50d"``, ``"none"`` or a path to a GloVe/word2vec text file.
        init_from: Start from this trained model (a shipped model's name or a model
            directory): its weights, its vocabulary (grown by the words of the new data) and
            its ``[model]`` settings (:mod:`docgraph.config.init_from`,
            :mod:`docgraph.training.init_from`); ``None`` trains from scratch.
        new_types: With :attr:`init_from`, add the entity types of the data that the model
            lacks (its output layers and CRF grow); off, such a type is an error naming the
            file, the line and the span, before any graph is built.
        vocab_eval_words: Add the dev/test words that have a pretrained vector to the word
            vocabulary (the standard practice, :mod:`docgraph.data.vocab`); off, the vocabulary
            holds the training words only, and words met later get their pretrained vector
            only through the open vocabulary of a loaded model
            (:func:`~docgraph.persistence.model_dir.load_model_dir`).
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
        fine_tune: How a run with :attr:`init_from` keeps the model's types.
    """

    dataset: str = choice("sample", DATASET_NAMES, help="corpus")
    data_dir: str | None = text(None, optional=True, help="corpus directory", marks=(MACHINE,))
    train_file: str | None = text(
        None, optional=True, flag="--train", metavar="FILE",
        help="training file of your own, instead of --dataset/--data-dir: CoNLL columns "
             "(IOB1, IOB2, BIOES), .jsonl spans or a .spacy DocBin")
    dev_file: str | None = text(None, optional=True, flag="--dev", metavar="FILE",
                                help="dev file for --train (any of its formats; without it, "
                                     "--dev-fraction)")
    test_file: str | None = text(None, optional=True, flag="--test", metavar="FILE",
                                 help="test file for --train (any of its formats), scored once "
                                      "after training")
    dev_fraction: float = number(0.0, low=0.0, high=0.5, flag="--dev-fraction",
                                 help="share of the training documents held out as dev "
                                      "(seeded; instead of a dev file)")
    embeddings: str = text("glove-6b-50d", flag="--embeddings", metavar="NAME|PATH",
                           help="glove-6b-50d | none | PATH to GloVe/word2vec vectors")
    init_from: str | None = text(None, optional=True, flag="--init-from", metavar="MODEL",
                                 help="fine-tune: start from this model's weights, vocabulary "
                                      "and model settings (a shipped model's name or a model "
                                      "directory)")
    new_types: bool = switch(True, help="--init-from: add the entity types of the data that "
                                        "the model lacks",
                             switches={"--no-new-types": False})
    vocab_eval_words: bool = switch(True, help="add the dev/test words that have a pretrained "
                                    "vector to the word vocabulary",
                                    switches={"--training-words-only": False})
    output_dir: str = text("runs/sample", help="run directory", marks=(MACHINE,))
    seed: int = integer(1, low=0, flag="--seed", help="random seed of the run")
    device: str = choice("auto", ("auto", "cpu", "cuda"), flag="--device",
                         help="where to train (auto: a GPU when there is one)", marks=(MACHINE,))
    lm: str | None = text(None, optional=True, flag="--lm", metavar="PATH",
                          help="Hugging Face encoder directory: add its frozen states as "
                               "contextual word features (pip install 'docgraph[lm]')")
    lm_context: int = integer(64, low=0, flag="--lm-context", metavar="N",
                              help="subwords of same-document context on each side of a "
                                   "sentence for --lm (0: sentence alone)")
    lm_pooling: str = choice("mean", ("mean", "first"), help="subword pooling of --lm")
    lm_layers: int = integer(4, low=1, help="mean of this many last hidden layers of --lm")
    lm_pack: bool = switch(False, help="encode consecutive sentences in shared --lm windows",
                           switches={"--lm-pack": True})
    lm_cache_dir: str | None = text(None, optional=True, help="cache of the --lm features")
    model: GCDocConfig = field(default_factory=GCDocConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    fine_tune: FineTuneConfig = field(default_factory=FineTuneConfig)

    def __post_init__(self) -> None:
        check_config(self, "")
        if self.lm is not None and self.train.novel_name_share > 0:
            raise ConfigError("[train] novel_name_share with a language model (--lm): the "
                              "features of the invented names are not computed; drop one")

    @property
    def file_splits(self) -> tuple[str, ...]:
        """The splits read from the corpus's files: dev too unless :attr:`dev_fraction`
        takes it from the training documents; with :attr:`train_file`, those of the files
        given."""
        if self.train_file is not None:
            return ("train", *(("dev",) if self.dev_file is not None else ()),
                    *(("test",) if self.test_file is not None else ()))
        return ("train", "test") if self.dev_fraction > 0 else ("train", "dev", "test")

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



#: The tables of a preset: name -> configuration class.
SECTIONS: dict[str, type] = {"model": GCDocConfig, "graph": GraphConfig, "train": TrainConfig,
                             "fine_tune": FineTuneConfig}

_CLASSES: dict[str, type] = {"": ExperimentConfig, **SECTIONS}


def section_settings(section: str) -> dict[str, Setting]:
    """The declared fields of one section (``""``: the top level) by name."""
    return {name: setting for name, setting in settings_of(_CLASSES[section])}


def check_values(values: Mapping[str, Any], where: str = "config") -> None:
    """Check a nested mapping of configuration values (as in a TOML preset) against the
    fields' declarations, naming ``where``, the section, the key, the value and what is
    allowed.

    Unknown keys are left to the caller (which names the keys it knows); a section that is not
    a table is an error here.

    Raises:
        ConfigError: For the first value its field does not accept.
    """
    top = section_settings("")
    for key, value in values.items():
        if key in SECTIONS:
            if not isinstance(value, Mapping):
                raise ConfigError(f"{where}: [{key}] must be a table, not {value!r}")
            inner = section_settings(key)
            for name, inner_value in value.items():
                if name in inner:
                    check_field(inner[name], inner_value, f"{where} [{key}] {name}")
        elif key in top:
            check_field(top[key], value, f"{where} {key}")


def _known(cls: type, values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``values`` as keyword arguments of ``cls``; an unknown key is an error naming ``where``."""
    known = {f.name for f in fields(cls)}
    unknown = [key for key in values if key not in known]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (expected one of {sorted(known)})")
    return dict(values)


def apply_overrides(config: ExperimentConfig, values: Mapping[str, Any], where: str = "config"
                    ) -> ExperimentConfig:
    """Return a copy of ``config`` with ``values`` (nested like the TOML file) applied.

    Every value is checked first (:func:`check_values`), naming ``where``.
    """
    check_values(values, where)
    top = _known(ExperimentConfig, {k: v for k, v in values.items() if k not in SECTIONS},
                 where)
    sections = {}
    for name, cls in SECTIONS.items():
        current = getattr(config, name)
        if name in values:  # a table: check_values said so
            sections[name] = replace(current, **_known(cls, values[name], f"{where} [{name}]"))
        else:
            sections[name] = replace(current)
    return replace(config, **top, **sections)


def seed_dir(output_dir: str | Path, seed: int) -> Path:
    """The directory of seed ``seed``'s run in a ``--seeds`` run writing to ``output_dir``."""
    return Path(output_dir) / f"seed-{seed}"


def run_dirs(output_dir: str | Path, seeds: Sequence[int] | None = None) -> list[Path]:
    """``output_dir`` and the directory of each of ``seeds`` (:func:`seed_dir`): where a run
    of ``train.py --output-dir output_dir [--seeds ...]`` writes."""
    return [Path(output_dir), *(seed_dir(output_dir, s) for s in seeds or ())]
