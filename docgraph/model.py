"""The GCDoc tagger: composes the building blocks of :mod:`docgraph.nn` and computes the losses.

Data flow for one :class:`~torch_geometric.data.Batch` of document graphs
(see :class:`docgraph.graph.DocumentGraph`)::

    [w; c] ─► cross-sentence s' ─► x = [w; c; s'] ─► BiLSTM h ─► document graph module ĥ
           ─► linear ─► CRF

where the document graph module (:class:`~docgraph.nn.DocumentGraphModule`) runs the
uncertainty tagger on [w; c] (the set *Drop*), the relation classifier on h (the edge weights
r_ij) and the gated graph layer :class:`~docgraph.nn.DocGraphConv`.

Every switch of :class:`GCDocConfig` removes one component, so the paper's ablations
(Tables V, VI and VII) and the plain BiLSTM-CRF baseline are the same code with flags.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch_geometric.data import Batch

from docgraph.batching.loader import PlanSettings
from docgraph.batching.plan import BatchPlan, buckets_for, grid_for, plan_batch
from docgraph.config.model import SAVED_WITHOUT, GCDocConfig
from docgraph.nn import (
    CharEncoder,
    CRFDecoder,
    CrossSentenceEncoder,
    DocumentGraphModule,
    SequenceBiLSTM,
)
from docgraph.nn.document_graph import DocumentGraphPlan
from docgraph.nn.gather import gather_rows
from docgraph.nn.layout import ShapeGrid

__all__ = ["MOVED_TO_DOCUMENT_GRAPH", "SAVED_WITHOUT", "GCDoc", "GCDocConfig", "GCDocOutput",
           "bioes_transition_masks", "unwrap", "upgrade_state_dict_key"]

#: GCDoc's children that moved into its :class:`~docgraph.nn.DocumentGraphModule` (child
#: ``document_graph``); state dicts saved before keep their keys ``uncertainty.*``,
#: ``relation.*`` and ``graph_conv.*``.
MOVED_TO_DOCUMENT_GRAPH = ("uncertainty", "relation", "graph_conv")


def upgrade_state_dict_key(key: str) -> str:
    """The :class:`GCDoc` state-dict name of ``key``, a flat key of a part of the document graph
    module (``"uncertainty.lin.weight"`` becomes ``"document_graph.uncertainty.lin.weight"``;
    other keys are unchanged)."""
    head, dot, _ = key.partition(".")
    return f"document_graph.{key}" if dot and head in MOVED_TO_DOCUMENT_GRAPH else key


@dataclass
class GCDocOutput:
    """What one forward pass of :class:`GCDoc` computes.

    ``loss`` is ``crf_loss + theta * relation_loss + uncertainty_loss``, each a sum (over
    sentences, edges and tokens respectively); the optional fields are ``None`` when the
    corresponding module is off (``uncertainty`` and ``drop`` also when the graph runs unpruned,
    see :attr:`GCDoc.pruning_active`). ``relation_loss`` sums over the edges that have a target
    (all of them, or all but the O--O edges with ``relation_labels="entity"``).
    """

    loss: Tensor
    crf_loss: Tensor
    emissions: Tensor
    relation_loss: Tensor | None = None
    uncertainty_loss: Tensor | None = None
    uncertainty: Tensor | None = None
    drop: Tensor | None = None
    edge_weight: Tensor | None = None
    num_sentences: int = 0


def bioes_transition_masks(labels: list[str]) -> tuple[Tensor, Tensor, Tensor]:
    """Allowed BIOES transitions ``[C, C]``, start ``[C]`` and end ``[C]`` masks for ``labels``."""

    def split(tag: str) -> tuple[str, str]:
        return ("O", "") if tag == "O" else (tag[0], tag[2:])

    C = len(labels)
    trans = torch.zeros(C, C, dtype=torch.bool)
    for a, la in enumerate(labels):
        pa, ta = split(la)
        for b, lb in enumerate(labels):
            pb, tb = split(lb)
            if pa in ("O", "E", "S"):
                trans[a, b] = pb in ("O", "B", "S")
            else:  # B or I must continue the same entity
                trans[a, b] = pb in ("I", "E") and ta == tb
    start = torch.tensor([split(lab)[0] in ("O", "B", "S") for lab in labels])
    end = torch.tensor([split(lab)[0] in ("O", "E", "S") for lab in labels])
    return trans, start, end


class GCDoc(nn.Module):
    r"""GCDoc: global-context enhanced document-level NER (Wang et al., `arXiv:2106.00887
    <https://arxiv.org/abs/2106.00887>`_).

    Token representation (Eq. (9)) :math:`x_i = [w_i; c_i; s'_c]` (with
    :math:`lm_i` appended when ``config.lm_dim > 0``), a word-level
    BiLSTM context encoder, the document graph module (child ``document_graph``, a
    :class:`~docgraph.nn.DocumentGraphModule`: uncertainty pruning, selective auxiliary
    classifier and the gated graph layer; ``None`` without ``config.graph``) and a CRF decoder.

    State dicts with flat keys for the parts of the document graph module (``uncertainty.*``,
    ``relation.*``, ``graph_conv.*``) load as they are: their keys are renamed on loading
    (:func:`upgrade_state_dict_key`).

    Args:
        config: Hyper-parameters and switches.
        num_words: Size of the word vocabulary (index 0 is padding).
        num_chars: Size of the character vocabulary (index 0 is padding).
        num_labels: Number of BIOES labels.
        label_to_type: Entity-type id of every label (two tokens are "same type" for the
            auxiliary classifier when their label types are equal). Label 0 is ``O`` (as in
            :class:`~docgraph.data.vocab.Vocabularies`), so ``label_to_type[0]`` is the type id
            of ``O`` that ``config.relation_labels = "entity"`` leaves out.
        pretrained: Optional ``[num_words, word_dim]`` initial word vectors (fine-tuned).
        transition_masks: Optional ``(transitions, start, end)`` masks for constrained decoding.

    Attributes:
        pruning_active: Whether :meth:`forward` prunes the graph with the uncertainty set
            *Drop* (default ``True``; not saved in the state dict). ``False`` runs the graph
            unpruned while the uncertainty tagger still trains; :meth:`set_epoch` sets it from
            ``config.unpruned_epochs``. Without an uncertainty module it has no effect.

    Shapes:
        - **input:** a :class:`~torch_geometric.data.Batch` of
          :class:`~docgraph.graph.DocumentGraph` with :math:`N` tokens and :math:`S` sentences.
        - **output:** :class:`GCDocOutput`; :meth:`predict` gives label ids :math:`(N,)`.
    """

    def __init__(
        self,
        config: GCDocConfig,
        num_words: int,
        num_chars: int,
        num_labels: int,
        label_to_type: list[int],
        pretrained: Tensor | None = None,
        transition_masks: tuple[Tensor, Tensor, Tensor] | None = None,
    ) -> None:
        super().__init__()
        if pretrained is not None and pretrained.size(1) != config.word_dim:
            raise ValueError(
                f"pretrained vectors have {pretrained.size(1)} dimensions but "
                f"config.word_dim is {config.word_dim}"
            )
        self.config = config
        self.num_labels = num_labels
        self.word_embedding = nn.Embedding(num_words, config.word_dim, padding_idx=0)
        self.word_embedding.weight.requires_grad_(not config.freeze_embeddings)
        self.char_encoder = CharEncoder(num_chars, char_dim=config.char_dim,
                                        hidden_channels=config.char_hidden)
        token_dim = config.word_dim + 2 * config.char_hidden
        self.dropout = nn.Dropout(config.dropout)

        self.cross_sentence: CrossSentenceEncoder | None = None
        context_in = token_dim
        if config.uses_cross_sentence:
            self.cross_sentence = CrossSentenceEncoder(
                token_dim,
                sent_channels=config.sent_dim,
                window=config.window,
                use_previous=config.use_previous,
                use_next=config.use_next,
                window_encoding=config.window_encoding,
            )
            context_in += config.sent_dim
        context_in += config.lm_dim
        self.context_encoder = SequenceBiLSTM(context_in, config.hidden)
        d = 2 * config.hidden

        self.document_graph: DocumentGraphModule | None = None
        if config.graph:
            self.document_graph = DocumentGraphModule(
                d,
                token_dim,
                num_labels,
                pruning=config.pruning,
                edge_weights=config.edge_weights,
                uncertainty_hidden=config.uncertainty_hidden,
                dropout=config.dropout,
                num_samples=config.num_samples,
                threshold=config.threshold,
                mc_dropout=config.mc_dropout,
                detach_uncertainty_input=config.detach_uncertainty_input,
                relation_labels=config.relation_labels,
                outside_type=int(label_to_type[0]),
                isolated=config.isolated,
            )

        self.emission = nn.Linear(d, num_labels)
        masks = transition_masks if config.constrained_decoding else None
        self.crf = CRFDecoder(
            num_labels,
            *(masks if masks is not None else (None, None, None)),
        )
        self.register_buffer(
            "label_to_type", torch.tensor(label_to_type, dtype=torch.long), persistent=True
        )
        self.pruning_active = True
        self.open_vectors: Callable[[Tensor], Tensor] | None = None
        # training only (not saved): row i = the labels a token tagged i may carry (of a
        # graph marked ``partial``: the second lattice)
        self.label_lattice: Tensor | None = None
        self.partial_lattice: Tensor | None = None
        # the children initialised themselves when built; draw only GCDoc's own parameters here
        # (so that a seed gives the same model as before reset_parameters reset everything)
        self._reset_own_parameters(pretrained)

    def set_label_lattice(self, lattice: Tensor | None, partial: Tensor | None = None) -> None:
        """Train on partial annotation: a token tagged ``i`` may carry any label ``j`` with
        ``lattice[i, j]`` (boolean ``[C, C]``, its diagonal set); the CRF loss is then the
        log-likelihood of all the paths so allowed (:meth:`CRFDecoder.nll
        <docgraph.nn.crf.CRFDecoder.nll>` with ``allowed``). ``None``: every tag is the gold
        (the default). The tokens of a graph whose ``partial`` attribute is set follow the
        lattice ``partial`` instead, when given (documents that annotate fewer types than the
        others). Not saved with the weights."""
        self.label_lattice = self._checked_lattice(lattice)
        self.partial_lattice = self._checked_lattice(partial)

    def _checked_lattice(self, lattice: Tensor | None) -> Tensor | None:
        if lattice is None:
            return None
        lattice = lattice.to(torch.bool)
        count = self.crf.num_labels
        if tuple(lattice.shape) != (count, count) or not lattice.diagonal().all():
            raise ValueError(f"the label lattice must be a boolean [{count}, {count}] "
                             "tensor whose diagonal is set")
        return lattice.to(self.label_to_type.device)

    def _allowed_labels(self, y: Tensor, partial: Tensor | None) -> Tensor | None:
        """The labels ``[N, C]`` each token may carry in the loss (``None``: its gold)."""
        lattice = self.label_lattice
        if self.partial_lattice is None or partial is None:
            return None if lattice is None else lattice.to(y.device)[y]
        if lattice is None:
            lattice = torch.eye(self.crf.num_labels, dtype=torch.bool)
        return torch.where(partial.to(y.device, torch.bool).unsqueeze(1),
                           self.partial_lattice.to(y.device)[y], lattice.to(y.device)[y])

    def set_epoch(self, epoch: int) -> None:
        """Apply the pruning warm-up for the 1-based training ``epoch``.

        Sets :attr:`pruning_active` to ``epoch > config.unpruned_epochs``; call it before the
        epoch's training (and keep it for that epoch's evaluation), and with the best epoch
        before evaluating a model selected in the warm-up.
        """
        self.pruning_active = epoch > self.config.unpruned_epochs

    def reset_parameters(self, pretrained: Tensor | None = None) -> None:
        """Re-draw every parameter: each submodule's own ``reset_parameters`` (Glorot weights,
        zero biases, the paper's "Initialization"), then the word embedding (``pretrained``
        vectors copied when given) and the emission layer."""
        for module in (self.char_encoder, self.cross_sentence, self.context_encoder,
                       self.document_graph, self.crf):
            if module is not None:
                module.reset_parameters()
        self._reset_own_parameters(pretrained)

    def _reset_own_parameters(self, pretrained: Tensor | None = None) -> None:
        if pretrained is not None:
            with torch.no_grad():
                self.word_embedding.weight.copy_(pretrained)
        else:
            nn.init.uniform_(self.word_embedding.weight, -0.1, 0.1)
            with torch.no_grad():
                self.word_embedding.weight[0].zero_()
        nn.init.xavier_uniform_(self.emission.weight)
        nn.init.zeros_(self.emission.bias)

    def open_vocabulary(self, vectors: Tensor | Callable[[Tensor], Tensor] | None) -> None:
        """Read word ids from ``num_words`` on as pretrained rows: id ``num_words + r`` is row
        ``r`` (the ids of :class:`~docgraph.data.open_vocab.OpenVocab`).

        The vectors are not parameters and are not saved; only the rows a batch needs are
        read. ``None`` closes the vocabulary again.

        Args:
            vectors: A ``[V, word_dim]`` tensor, or a function from a 1-D tensor of row ids
                (on the CPU) to their ``[len(ids), word_dim]`` vectors (e.g.
                :meth:`~docgraph.data.open_vocab.PretrainedTable.vectors`, which reads them from
                a memory-mapped table on demand).
        """
        if isinstance(vectors, Tensor):
            if vectors.dim() != 2 or vectors.size(1) != self.config.word_dim:
                raise ValueError(f"open-vocabulary vectors of shape {list(vectors.shape)} do "
                                 f"not fit word_dim {self.config.word_dim}")
            table = vectors
            vectors = lambda rows: table.index_select(0, rows)  # noqa: E731
        self.open_vectors = vectors

    def embed_words(self, word: Tensor) -> Tensor:
        """Word vectors of the ids ``word``: the embedding's rows, and, past them, the
        open-vocabulary rows (:meth:`open_vocabulary`)."""
        table = self.word_embedding
        if self.open_vectors is None:
            return table(word)
        known = word < table.num_embeddings
        if bool(known.all()):
            return table(word)
        out = table(torch.where(known, word, torch.zeros_like(word)))
        opened = self.open_vectors((word[~known] - table.num_embeddings).cpu())
        if opened.shape != (int((~known).sum()), out.size(-1)):
            raise ValueError(f"open-vocabulary rows of shape {list(opened.shape)} do not fit "
                             f"word_dim {out.size(-1)}")
        return out.masked_scatter(~known.unsqueeze(-1), opened.to(out))

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs) -> None:
        # state dicts with flat keys for the document graph module's parts: rename their
        # keys (load_state_dict hands every module its own copy to modify)
        for key in [k for k in state_dict if k.startswith(prefix)]:
            new = prefix + upgrade_state_dict_key(key[len(prefix):])
            if new != key and new not in state_dict:
                state_dict[new] = state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    # ------------------------------------------------------------------ helpers
    def _token_features(self, batch: Batch, plan: BatchPlan) -> Tensor:
        w = self.embed_words(batch.word)
        c = self.char_encoder(batch.chars, batch.char_len, plan.chars)
        return torch.cat([w, c], dim=-1)

    @property
    def dtype(self) -> torch.dtype:
        """The floating dtype of the parameters: that of the host-side plans' floating tensors
        (:meth:`plan`)."""
        return self.emission.weight.dtype

    def plan_settings(self) -> PlanSettings:
        """What the host-side plans of this model's batches need of it (:func:`collate
        <docgraph.batching.loader.collate>`): its configuration and dtype."""
        return PlanSettings(self.config, self.dtype)

    def _plan_of(self, batch: Batch, plan: BatchPlan | None = None, tagging: bool = False
                 ) -> BatchPlan:
        for candidate in (plan, getattr(batch, "plan", None)):
            if isinstance(candidate, BatchPlan) and candidate.fits(self.config):
                return candidate if candidate.dtype == self.dtype \
                    else candidate.to(dtype=self.dtype)
        # made here: for tagging (predict, inspect) on the tagging grid of the batch's device
        return self.plan(batch, grid=grid_for(batch.sent_len.device, tagging=tagging))

    def plan(self, batch: Batch, buckets: int | None = None, *, grid: ShapeGrid | None = None
             ) -> BatchPlan:
        """The host-side plan of ``batch`` for this model
        (:func:`~docgraph.batching.plan.plan_batch`), on the batch's device, its floating
        tensors of the model's :attr:`dtype`. The trainer makes it while the previous step
        runs; a batch without one gets it here, at the cost of reading the batch's lengths
        back to the host.

        Args:
            batch: A batch of document graphs.
            buckets: Most length buckets of each recurrent layer (default: one padded call
                on a GPU, :data:`~docgraph.batching.plan.CPU_BUCKETS` on the CPU).
            grid: The padded shapes of the recurrent layers (``None``: none; a batch that
                :meth:`predict` and :meth:`inspect` plan themselves is planned on
                :func:`~docgraph.batching.plan.grid_for` of its device).
        """
        device = batch.sent_len.device
        return plan_batch(batch, self.config, buckets_for(device) if buckets is None else buckets,
                          self.dtype, grid).to(device)

    def _lm_features(self, batch: Batch, dtype: torch.dtype) -> Tensor:
        lm = getattr(batch, "lm", None)
        if lm is None or lm.dim() != 2 or lm.size(1) != self.config.lm_dim:
            got = "none" if lm is None else f"shape {tuple(lm.shape)}"
            raise ValueError(
                f"the model expects contextual features batch.lm of shape [N, "
                f"{self.config.lm_dim}] (config.lm_dim), got {got}; compute them with "
                "docgraph.data.contextual and docgraph.graph.attach_token_features"
            )
        return lm.to(dtype)

    # ------------------------------------------------------------------ forward
    def forward(self, batch: Batch, compute_loss: bool = True, prune: bool | None = None,
                plan: BatchPlan | None = None, mc_seed: int | None = None) -> GCDocOutput:
        """Run the model on a batch of document graphs.

        Args:
            batch: :class:`~torch_geometric.data.Batch` (or a single graph).
            compute_loss: Compute the CRF and auxiliary losses (needs ``batch.y``).
            prune: Prune the graph with the uncertainty set *Drop*; ``None`` follows
                :attr:`pruning_active`. Unpruned, the Monte-Carlo passes are skipped
                (``uncertainty`` and ``drop`` of the output are ``None``, every neighbour sends
                its message) but the uncertainty tagger's loss is still computed.
            plan: The batch's host-side plan (:meth:`plan`); taken from ``batch.plan`` when
                that fits this model, made here otherwise.
            mc_seed: Draw every document's Monte-Carlo dropout masks from its own generator,
                seeded by this seed and a hash of the document (``plan.mc_keys``), so that a
                document's uncertainty does not depend on the rest of the batch (what
                :meth:`predict` and :meth:`inspect` do). ``None``: from torch's global random
                stream (training).
        """
        with torch.autocast(batch.sent_len.device.type, dtype=torch.bfloat16,
                            enabled=self.config.precision == "bf16"):
            return self._forward(batch, compute_loss, prune, plan, mc_seed)

    def _forward(self, batch: Batch, compute_loss: bool, prune: bool | None,
                 plan: BatchPlan | None, mc_seed: int | None) -> GCDocOutput:
        cfg = self.config
        sent_len = batch.sent_len
        plan = self._plan_of(batch, plan)
        sentences = plan.sentences
        token_x = self._token_features(batch, plan)
        x = self.dropout(token_x)
        if self.cross_sentence is not None:
            windows = (plan.sentence_windows if cfg.window_encoding == "per_sentence"
                       else (plan.previous, plan.next))
            s_prime = self.cross_sentence(x, sent_len, plan.sentence_doc, layout=sentences,
                                          windows=windows)
            x = torch.cat([x, gather_rows(s_prime, batch.token_sentence)], dim=-1)
        if cfg.lm_dim:
            x = torch.cat([x, self.dropout(self._lm_features(batch, x.dtype))], dim=-1)
        h = self.dropout(self.context_encoder(x, sent_len, sentences))

        zero = h.new_zeros(())
        out = GCDocOutput(
            loss=zero, crf_loss=zero, emissions=h, num_sentences=int(sent_len.numel())
        )
        y = batch.y if compute_loss else None

        if self.document_graph is not None:
            keys = None if mc_seed is None else plan.mc_keys
            node_type = self.label_to_type[y] if y is not None and cfg.uses_relation else None
            graph_plan = DocumentGraphPlan(
                sentences=sentences, monte_carlo=plan.monte_carlo,
                gated_nodes=plan.gated_nodes, edge_ptr=plan.edge_ptr,
                segment_sizes=None if keys is None else keys.sizes,
                segment_seeds=None if keys is None else keys.seeds(mc_seed))
            graph = self.document_graph(
                h, batch.edge_index, token_x, sent_len, y, node_type,
                prune=self.pruning_active if prune is None else prune, plan=graph_plan)
            h = graph.x
            out.uncertainty, out.drop, out.edge_weight = (
                graph.uncertainty, graph.drop, graph.edge_weight)
            out.uncertainty_loss, out.relation_loss = graph.uncertainty_loss, graph.relation_loss

        out.emissions = self.emission(h)
        if out.emissions.dtype == torch.bfloat16:  # autocast: back to float32 for the CRF
            out.emissions = out.emissions.float()
        if y is not None:
            out.crf_loss = self.crf.nll(
                out.emissions, sent_len, y, reduction="sum", layout=sentences,
                allowed=self._allowed_labels(y, getattr(batch, "partial", None)))
            loss = out.crf_loss
            if out.relation_loss is not None:
                loss = loss + cfg.theta * out.relation_loss
            if out.uncertainty_loss is not None:
                loss = loss + out.uncertainty_loss
            out.loss = loss
        return out

    @torch.no_grad()
    def predict(self, batch: Batch, mc_seed: int | None = 0) -> Tensor:
        """Viterbi label ids ``[N]`` for every token of the batch (dropout off, MC dropout on).

        Each document's Monte-Carlo masks come from seed ``mc_seed`` and the document itself
        (see :meth:`forward`), so its tags are the same in any batch; ``None`` draws them from
        torch's global random stream instead.
        """
        was_training = self.training
        self.eval()
        try:
            plan = self._plan_of(batch, tagging=True)
            out = self.forward(batch, compute_loss=False, plan=plan, mc_seed=mc_seed)
            return self.crf.decode(out.emissions, batch.sent_len, plan.sentences)
        finally:
            self.train(was_training)

    @torch.no_grad()
    def inspect(self, batch: Batch, mc_seed: int | None = 0) -> GCDocOutput:
        """Forward pass in eval mode returning uncertainty, *Drop* and edge weights, with the
        Monte-Carlo masks of :meth:`predict` for the same ``mc_seed``."""
        was_training = self.training
        self.eval()
        try:
            return self.forward(batch, compute_loss=False, mc_seed=mc_seed,
                                plan=self._plan_of(batch, tagging=True))
        finally:
            self.train(was_training)

    def extra_repr(self) -> str:
        c = self.config
        parts = [
            f"cross_sentence={c.uses_cross_sentence}(k={c.window})",
            f"graph={c.graph}",
            f"pruning={c.uses_uncertainty}(T={c.num_samples})",
            f"edge_weights={c.uses_relation}",
        ]
        return ", ".join(parts)


def unwrap(model: nn.Module) -> GCDoc:
    """The model inside a :class:`~torch.nn.parallel.DistributedDataParallel` wrapper (or the
    model itself)."""
    return model.module if hasattr(model, "module") else model  # type: ignore[return-value]
