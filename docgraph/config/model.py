"""Hyper-parameters and module switches of the GCDoc tagger (:class:`~docgraph.model.GCDoc`).

Torch-free: every field is declared once with its rule, help and flag
(:mod:`docgraph.config.fields`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from docgraph.config.fields import (
    PLAN,
    SIZE,
    VARIANT,
    check_config,
    choice,
    integer,
    number,
    switch,
)

__all__ = ["SAVED_WITHOUT", "GCDocConfig"]



#: The widest layer a size field accepts (a BiLSTM that wide would have about 10^13
#: parameters): a larger value in a preset or a ``config.json`` is damage or a typo, refused
#: with its bound before anything is built.
MAX_WIDTH = 2**20
#: The most sentences a cross-sentence window takes on each side.
MAX_WINDOW = 64
#: The most Monte-Carlo dropout passes.
MAX_SAMPLES = 1024

@dataclass
class GCDocConfig:
    """Hyper-parameters and module switches of :class:`~docgraph.model.GCDoc`.

    The defaults are the paper's ("Network Training"); the choices the paper leaves open are
    marked *(ours)*. Each field's default is its declaration's, below.

    Args:
        word_dim: Word embedding size; must equal the size of the pretrained vectors when
            they are given (:func:`~docgraph.training.experiment.run_experiment` sets it from them).
        freeze_embeddings: Keep the word embeddings fixed at their initial (pretrained) values
            instead of fine-tuning them as the paper does (*ours*).
        char_dim: Character embedding size.
        char_hidden: Character BiLSTM hidden size per direction.
        hidden: Word-level context BiLSTM hidden size per direction.
        sent_dim: Sentence representation size :math:`d_s` of the cross-sentence module.
        window: Number :math:`k` of previous / next sentences; 0 disables the module.
        use_previous: Use the previous-sentence window (Table VII).
        use_next: Use the next-sentence window (Table VII).
        cross_sentence: Enable the cross-sentence module.
        graph: Enable the document graph module (:class:`~docgraph.nn.DocumentGraphModule`).
        pruning: Prune neighbours in the uncertainty set *Drop* (Eq. (23)).
        edge_weights: Weight messages by the relation scores :math:`r_{ij}` (Eq. (28))
            and train the selective auxiliary classifier (Eq. (27)).
        num_samples: Monte-Carlo dropout passes :math:`T` (*ours*; the paper does not say).
        threshold: Uncertainty threshold :math:`\\mathcal{T}` (the paper's); how other
            thresholds train: ``docs/experiments.md``, "Trained at a higher threshold or
            without pruning".
        uncertainty_hidden: Hidden size per direction of the uncertainty tagger's BiLSTM
            (*ours*).
        detach_uncertainty_input: Feed the uncertainty tagger a detached copy of the token
            embeddings so its loss does not steer the shared embeddings (*ours*).
        theta: Weight :math:`\\theta` of the auxiliary loss.
        dropout: Dropout on the input and output of the BiLSTMs.
        isolated: What the graph layer does with a token that has no neighbour at all:
            ``"identity"`` (unchanged; the paper's graph holds only recurrent tokens) or
            ``"gate"`` (goes through the gate with :math:`a_i = 0`).
        constrained_decoding: Forbid invalid BIOES transitions in Viterbi decoding (*ours*;
            the paper does not).
        window_encoding: How the cross-sentence windows are encoded (*ours*): ``"concat"``
            (paper: the :math:`k` sentences of a window read as one sequence) or
            ``"per_sentence"`` (faster approximation: each sentence read once, windows
            mean-pooled from per-sentence sums; see
            :class:`~docgraph.nn.CrossSentenceEncoder`).
        mc_dropout: What the Monte-Carlo passes of the uncertainty tagger re-sample (*ours*):
            ``"full"`` (paper: input dropout, BiLSTM and output dropout, :math:`T` times) or
            ``"output"`` (faster approximation: one BiLSTM pass, only the output dropout and
            the dense layer :math:`T` times; see :class:`~docgraph.nn.UncertaintyTagger`).
        relation_labels: Targets :math:`y_{ij}` of the selective auxiliary classifier (*ours*;
            the paper's "same entity category" leaves non-entities open, see
            :func:`~docgraph.nn.relation.relation_targets`): ``"entity"`` (O--O
            edges are left out of :math:`\\mathcal{L}_a`; two entity tokens of the same type
            are a positive, an entity--O edge or two different types a negative) or
            ``"type"`` (``O`` is a type, so O--O edges, most of a document's, are positives;
            the earlier behaviour, which configurations saved without this key keep). The
            edge weights :math:`r_{ij}` still weight every edge, O--O ones included. Why
            ``"entity"`` is the default: ``docs/design.md``.
        unpruned_epochs: Cold-start warm-up (*ours*): the first ``unpruned_epochs`` training
            epochs run the graph layer unpruned (no *Drop* set, every neighbour sends its
            message) while the uncertainty tagger still trains on its loss; pruning starts at
            epoch ``unpruned_epochs + 1``. The trainer applies it with
            :meth:`GCDoc.set_epoch`; ``0`` prunes from the first epoch, as the paper.
        lm_dim: Size of the contextual word features ``batch.lm`` of a frozen language model
            (paper, "Network Training": BERT states as additional embeddings; see
            :mod:`docgraph.data.contextual`); 0 uses none.
            :func:`~docgraph.training.experiment.run_experiment` sets it from the features. They
            join the input of the context BiLSTM only, :math:`x_i = [w_i; c_i; s'_c; lm_i]`, after
            the same input dropout; the cross-sentence encoder and the uncertainty tagger keep
            reading :math:`[w_i; c_i]` as in the paper: the sentence representations and the
            pruning signal stay those of the paper's modules, and their cost does not grow
            with :math:`H`.
        precision: ``"fp32"`` or ``"bf16"`` *(ours, opt-in)*: run the forward pass
            under :func:`torch.autocast` with bfloat16, where PyTorch casts the matrix products
            (linear layers, and the LSTMs where the backend's autocast covers them) to bf16
            and keeps reductions, softmax and the CRF (float64 inside) in float32; the
            emission scores are float32 again. Meant for GPUs with bf16 tensor cores;
            ``benchmarks/gpu/kit.sh`` measures its speed against fp32. Weights stay float32.
        score_temperature: The temperature :math:`\\tau` the CRF's scores are divided by when
            an entity's probability is computed (*ours*): fitted on dev after training
            (``scripts/calibrate.py``) so that the scores are calibrated; the tags do not
            depend on it.
        label_consistency: Whether tagging applies label consistency in decoding
            (:func:`~docgraph.tagging.consistency.consistent_tagging`) unless told otherwise
            (*ours*): set on a model directory whose dev figures chose it; the paper decodes
            each sentence alone.
    """

    word_dim: int = integer(50, low=1, high=MAX_WIDTH,
                            help="word embedding size (set from the vectors)",
                            marks=(SIZE,))
    freeze_embeddings: bool = switch(False, help="keep the word embeddings fixed",
                                     switches={"--freeze-embeddings": True})
    char_dim: int = integer(30, low=1, high=MAX_WIDTH, flag="--char-dim",
                            help="character embedding size", marks=(SIZE,))
    char_hidden: int = integer(50, low=1, high=MAX_WIDTH, flag="--char-hidden",
                               help="character BiLSTM hidden size per direction", marks=(SIZE,))
    hidden: int = integer(200, low=1, high=MAX_WIDTH, flag="--hidden",
                          help="word BiLSTM hidden size per direction", marks=(SIZE,))
    sent_dim: int = integer(300, low=2, high=2 * MAX_WIDTH, even=True,
                            flag="--sent-dim",
                            help="sentence representation size d_s", marks=(SIZE,))
    window: int = integer(2, low=0, high=MAX_WINDOW, flag="--window",
                          help="cross-sentence window k (0 disables the module)",
                          marks=(PLAN, VARIANT))
    use_previous: bool = switch(True, help="use the previous-sentence window",
                                switches={"--next-only": False}, marks=(PLAN, VARIANT))
    use_next: bool = switch(True, help="use the next-sentence window",
                            switches={"--previous-only": False}, marks=(PLAN, VARIANT))
    cross_sentence: bool = switch(True, help="the cross-sentence module",
                                  switches={"--no-cross-sentence": False}, marks=(PLAN, VARIANT))
    graph: bool = switch(True, help="the document graph module", switches={"--no-graph": False},
                         marks=(PLAN, VARIANT))
    pruning: bool = switch(True, help="prune the uncertain neighbours (Drop)",
                           switches={"--no-pruning": False}, marks=(PLAN, VARIANT))
    edge_weights: bool = switch(True, help="weight messages by the relation scores r_ij",
                                switches={"--no-edge-weights": False}, marks=(VARIANT,))
    num_samples: int = integer(8, low=1, high=MAX_SAMPLES, flag="--samples",
                               help="Monte-Carlo dropout passes T", marks=(PLAN,))
    threshold: float = number(0.5, low=0.0, flag="--threshold",
                              help="uncertainty threshold for pruning")
    uncertainty_hidden: int = integer(100, low=1, high=MAX_WIDTH,
                                      flag="--uncertainty-hidden",
                                      help="uncertainty tagger hidden size per direction",
                                      marks=(SIZE,))
    detach_uncertainty_input: bool = switch(
        True, help="the uncertainty tagger reads a detached copy of the embeddings",
        switches={"--attach-uncertainty-input": False})
    theta: float = number(0.1, low=0.0, flag="--theta",
                          help="weight of the auxiliary relation loss")
    dropout: float = number(0.5, low=0.0, high=1.0, high_open=True, flag="--dropout",
                            help="dropout on BiLSTM inputs and outputs")
    isolated: str = choice("identity", ("identity", "gate"), flag="--isolated",
                           help="graph layer on tokens without neighbours")
    constrained_decoding: bool = switch(False, help="forbid invalid BIOES transitions",
                                        switches={"--constrained-decoding": True})
    window_encoding: str = choice("concat", ("concat", "per_sentence"), flag="--window-encoding",
                                  help="cross-sentence windows: concat (paper) | per_sentence "
                                       "(faster approximation)", marks=(PLAN,))
    mc_dropout: str = choice("full", ("full", "output"), flag="--mc-dropout",
                             help="Monte-Carlo dropout passes: full (paper) | output (faster "
                                  "approximation, one BiLSTM pass)", marks=(PLAN,))
    relation_labels: str = choice("entity", ("type", "entity"), flag="--relation-labels",
                                  help="positives of the auxiliary classifier: type (O is a "
                                       "type, paper) | entity (O-O edges left out of L_a)")
    unpruned_epochs: int = integer(0, low=0, flag="--unpruned-epochs",
                                   help="warm-up: the first N epochs run the graph unpruned")
    lm_dim: int = integer(0, low=0, high=MAX_WIDTH,
                          help="size of the contextual word features (set from them)",
                          marks=(SIZE,))
    precision: str = choice("fp32", ("fp32", "bf16"), flag="--precision",
                            help="fp32 | bf16 (autocast of the forward pass, for GPUs; opt-in)")
    score_temperature: float = number(1.0, low=0.0, low_open=True,
                                      help="temperature of the entity scores (set by "
                                           "calibration on dev)")
    label_consistency: bool = switch(False, help="tag with label consistency in decoding "
                                                 "unless told otherwise (set on a model "
                                                 "directory)")

    def __post_init__(self) -> None:
        check_config(self, "model")

    @property
    def uses_cross_sentence(self) -> bool:
        """Whether the cross-sentence module is active."""
        return self.cross_sentence and self.window > 0

    @property
    def uses_uncertainty(self) -> bool:
        """Whether the uncertainty sub-module is built."""
        return self.graph and self.pruning

    @property
    def uses_relation(self) -> bool:
        """Whether the selective auxiliary classifier is built."""
        return self.graph and self.edge_weights

    @classmethod
    def baseline(cls, **kwargs: object) -> GCDocConfig:
        """The plain BiLSTM-CRF baseline: no cross-sentence module, no document graph."""
        return cls(cross_sentence=False, graph=False, **kwargs)  # type: ignore[arg-type]

    def to_dict(self) -> dict:
        """A JSON-serialisable copy."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> GCDocConfig:
        """Build from a dictionary, rejecting unknown keys; keys a saved configuration lacks
        take their values from before the key existed (:data:`SAVED_WITHOUT`)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown model configuration keys: {', '.join(unknown)}")
        return cls(**{**SAVED_WITHOUT, **values})


#: What a saved model configuration without these keys meant (their defaults changed since).
SAVED_WITHOUT: dict[str, object] = {"relation_labels": "type"}
