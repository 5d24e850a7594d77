"""How a run that starts from a trained model keeps what the model knows (``[fine_tune]``),
torch-free."""

from __future__ import annotations

from dataclasses import dataclass

from docgraph.config.fields import check_config, choice, integer, number, switch, text

__all__ = ["DISTILLED", "KEEP_TYPES", "TUNED", "FineTuneConfig"]

#: How a fine-tuning run treats the starting model's types that the training data does not
#: annotate (:attr:`FineTuneConfig.keep_types`).
KEEP_TYPES = ("silver", "partial", "model", "off")

#: Which training tokens the distillation term covers (:attr:`FineTuneConfig.distil_on`).
DISTILLED = ("all", "rehearsal")

#: Which weights a fine-tuning run trains (:attr:`FineTuneConfig.tune`).
TUNED = ("all", "output")


@dataclass
class FineTuneConfig:
    """How a run that starts from a trained model (``--init-from``) keeps what the model
    knows.

    Args:
        keep_types: The model's entity types that the training documents do not annotate
            (their spans are ``O`` there, annotated or not): ``"silver"`` tags the training
            and dev documents with the starting model and keeps its entities of those types
            where the data has no span (silver labels); ``"partial"`` trains with a CRF loss
            in which a token tagged ``O`` may also carry any label of those types (the
            log-likelihood of every path so allowed), the dev documents as ``"silver"``;
            ``"model"`` labels every one of the model's types by the model alone in the
            training and dev documents (their spans in the data are taken out and the model's
            own entities of them put in, except where a span of another type is): for data
            that annotates the model's types by conventions other than the model's, when the
            model's are to be kept (the starting model, which agrees with those labels by
            construction, is not scored on dev as a candidate); ``"off"``
            (``--fully-annotated``) takes every ``O`` as it is: for data that annotates every
            type it holds.
        rehearse: A labelled file (any format ``--train`` reads) whose documents join the
            training documents: text of the starting model's domain, gold or tagged by the
            model, so that training sees its types on it.
        rehearse_partial: The ``rehearse`` documents do not annotate the types the run adds:
            in the loss, a token tagged ``O`` there may carry any label of those types
            (partial annotation); otherwise their ``O`` is taken as it is.
        own_repeats: With ``rehearse``, how many times each of the run's own training
            documents is seen per epoch (the ``rehearse`` documents once): the share of the
            user's text in training when the rehearsal text outnumbers it.
        anchor: After each optimiser step, every weight the starting model had moves back
            towards its start by ``lr * anchor`` of its distance (L2-SP; 0: none).
        distil: Weight of the distillation term (0: none): on every training token the
            model keeps the starting model's distribution over the starting model's labels
            (a frozen copy of it reads each batch; the labels of added types stay free).
        distil_on: The tokens the distillation term covers: ``"all"`` the training tokens,
            ``"rehearsal"`` those of the ``rehearse`` documents alone (the starting model's own
            domain, where its distribution is worth keeping; the user's documents are then
            learnt from their labels alone).
        tune: ``"all"`` trains every weight; ``"output"`` only the emission layer and the CRF
            (the embeddings, the encoders and the document graph keep the starting model's
            weights, so the token states its types are read from do not move).
    """

    keep_types: str = choice("silver", KEEP_TYPES, flag="--keep-types",
                             switches={"--fully-annotated": "off"},
                             help="--init-from: the model's types that the training data does "
                                  "not annotate: silver (the model's own entities kept as "
                                  "labels), partial (unknown, not O, in the loss) or off; "
                                  "model: all the model's types labelled by the model, even "
                                  "where the data annotates them")
    rehearse: str | None = text(None, optional=True, flag="--rehearse", metavar="FILE",
                                help="--init-from: a labelled file of the model's domain whose "
                                     "documents join the training documents")
    rehearse_partial: bool = switch(False, switches={"--rehearse-partial": True},
                                    help="--rehearse: its documents do not annotate the types "
                                         "the run adds (unknown, not O, in the loss)")
    own_repeats: int = integer(1, low=1, high=100, flag="--own-repeats", metavar="K",
                               help="--rehearse: each of the run's own training documents "
                                    "is seen K times per epoch, the --rehearse documents once")
    anchor: float = number(0.0, low=0.0, flag="--anchor", metavar="STRENGTH",
                           help="--init-from: after each step, pull every weight of the model "
                                "back towards its start by lr * STRENGTH of its distance "
                                "(L2-SP; 0: none)")
    distil: float = number(0.0, low=0.0, flag="--distil", metavar="WEIGHT",
                           help="--init-from: on every training token keep the model's "
                                "distribution over its own labels (knowledge distillation; "
                                "WEIGHT of its term; 0: none)")
    distil_on: str = choice("all", DISTILLED, flag="--distil-on",
                            help="--distil: the tokens it covers: all the training tokens, or "
                                 "those of the --rehearse documents")
    tune: str = choice("all", TUNED, flag="--tune",
                       help="--init-from: which weights train: all, or output (the emission "
                            "layer and the CRF; the rest keeps the model's weights)")

    def __post_init__(self) -> None:
        check_config(self, "fine_tune")
