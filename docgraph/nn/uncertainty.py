"""Monte-Carlo-dropout uncertainty sub-module of GCDoc (document graph pruning)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from docgraph.nn.encoders import SequenceBiLSTM
from docgraph.nn.layout import SequenceLayout

__all__ = ["MC_DROPOUT_MODES", "MonteCarloKeys", "UncertaintyTagger", "mix_seed"]

MC_DROPOUT_MODES = ("full", "output")


def mix_seed(key: int, salt: int) -> int:
    """A 63-bit generator seed from a segment's ``key`` and a ``salt`` (e.g. a tagging seed)."""
    data = int(key).to_bytes(8, "little", signed=True) + int(salt).to_bytes(8, "little",
                                                                            signed=True)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") >> 1


@dataclass(frozen=True)
class MonteCarloKeys:
    """Where the Monte-Carlo dropout masks of a batch come from: one key per segment of
    consecutive tokens (a document), so that a segment's masks depend on the segment and the
    tagging seed only, never on the rest of the batch.

    Made on the host when a batch is collated (:func:`~docgraph.batching.plan.plan_batch`: a hash
    of each document's input tensors); host integers, so moving a plan leaves it as it is.

    Attributes:
        sizes: Tokens per segment (their sum is the batch's number of tokens).
        keys: One signed 64-bit key per segment.
    """

    sizes: tuple[int, ...]
    keys: tuple[int, ...]

    def seeds(self, salt: int = 0) -> list[int]:
        """The generator seed of every segment for tagging seed ``salt``."""
        return [mix_seed(key, salt) for key in self.keys]

    def _map(self, move: Callable[[Tensor], Tensor]) -> MonteCarloKeys:
        return self


def _kept(noise: Tensor, p: float) -> Tensor:
    """Inverted-dropout factors from uniform ``noise``: ``1 / (1 - p)`` where ``noise >= p``
    (probability ``1 - p``), ``0`` elsewhere; what :func:`torch.nn.functional.dropout`
    multiplies by."""
    if p >= 1.0:
        return torch.zeros_like(noise)
    return (noise >= p).to(noise.dtype).mul_(1.0 / (1.0 - p))


def _dropout(x: Tensor, p: float, stochastic: bool, keep: Tensor | None) -> Tensor:
    """Dropout of ``x`` with the given factors ``keep`` (:func:`_kept`), else drawn from
    torch's global random stream."""
    return F.dropout(x, p, stochastic) if keep is None else x * keep


class UncertaintyTagger(torch.nn.Module):
    r"""The independent uncertainty-prediction sub-module used to prune the
    document graph, from Wang et al., `"Exploiting Global Contextual
    Information for Document-level Named Entity Recognition"
    <https://arxiv.org/abs/2106.00887>`_ (Section
    IV-C, "Document Graph Pruning", Eqs. (24) and (25), with the Monte-Carlo
    dropout of Eq. (8)).

    A Bi-LSTM followed by a dense layer and a softmax predicts the label of
    every token. With Monte-Carlo dropout, :math:`T` stochastic passes are
    averaged and the uncertainty of token :math:`i` is the entropy of the
    averaged distribution:

    .. math::
        \mathbf{p}_i \approx \frac{1}{T} \sum_{t=1}^{T}
        \mathrm{softmax}(\mathbf{W}^{\top} \mathbf{h}_i \mid \mathbf{w}_t),
        \qquad
        u_i = -\sum_{c=1}^{\mathcal{C}} p_c \log p_c

    Tokens with :math:`u_i > \mathcal{T}` (``threshold``, natural log, paper
    value ``0.5``) form the set :math:`Drop` (:meth:`drop_mask`). The
    :math:`1/T` normalisation makes :math:`\mathbf{p}_i` a distribution.

    Dropout with rate ``dropout`` is applied to the input and to the output of
    the Bi-LSTM (paper: ``0.5``); the Monte-Carlo samples
    :math:`\mathbf{w}_t \sim q_\theta(\mathbf{w})` are these dropout masks
    (the recurrent connections are not dropped). In :meth:`uncertainty` the
    dropout is active regardless of ``self.training`` and the :math:`T` passes
    run as *one* batched Bi-LSTM call (the sentences are repeated :math:`T`
    times in the batch dimension, each copy drawing its own masks).

    *Where the masks come from (ours; the paper does not say).* By default
    from torch's global random stream, like any dropout, so that they depend
    on everything drawn before and on the whole batch. With
    ``segment_seeds`` (what :class:`~docgraph.model.GCDoc` does when it tags)
    every segment of consecutive tokens -- a document -- draws its masks from
    its own generator: a document's uncertainty, and with it its pruning and
    tags, is then the same alone, in any batch and in any number of
    processes.

    ``mc_dropout`` *(ours)* chooses what the Monte-Carlo passes re-sample:

    * ``"full"`` (default, faithful): the :math:`T` passes each draw their own
      input and output dropout masks and run the Bi-LSTM (cost of :math:`T`
      Bi-LSTM passes, batched into one call).
    * ``"output"`` (faster approximation): the input dropout mask is drawn
      once, the Bi-LSTM runs *once*, and only the output dropout and the
      dense layer are re-sampled :math:`T` times (cost of one Bi-LSTM pass
      plus :math:`T` cheap dense layers). The predictive distribution then
      only reflects the uncertainty of the dense layer's input units given
      one sample of the input mask (the variability that the input masks
      induce through the Bi-LSTM is ignored), so the entropies -- and the
      share of pruned tokens at a given threshold -- differ from the full
      estimate. Training (:meth:`forward`, :meth:`loss`) is unchanged.

    The sub-module is trained on its own with :meth:`loss` (token-level
    cross-entropy; the paper does not specify it).

    Args:
        in_channels (int): Size of each input token feature.
        hidden_channels (int, optional): Bi-LSTM hidden size per direction
            (not given in the paper). (default: ``100``)
        num_labels (int): Number of labels :math:`\mathcal{C}` (keyword-only).
        dropout (float, optional): Dropout rate. (default: ``0.5``)
        num_samples (int, optional): Number :math:`T` of Monte-Carlo passes
            (not given in the paper). (default: ``8``)
        threshold (float, optional): Uncertainty threshold :math:`\mathcal{T}`.
            (default: ``0.5``)
        mc_dropout (str, optional): ``"full"`` (paper) or ``"output"``
            (approximation, see above). (default: ``"full"``)

    Shapes:
        - **input:** token features :math:`(N, F_{in})`, sentence lengths :math:`(S)`
        - **output:** logits :math:`(N, \mathcal{C})` (:meth:`forward`),
          uncertainty :math:`(N)` and probabilities :math:`(N, \mathcal{C})`
          (:meth:`uncertainty`)
    """

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int = 100,
        *,
        num_labels: int,
        dropout: float = 0.5,
        num_samples: int = 8,
        threshold: float = 0.5,
        mc_dropout: str = "full",
    ) -> None:
        super().__init__()
        if num_samples < 1:
            raise ValueError(f"num_samples must be >= 1 (got {num_samples})")
        if mc_dropout not in MC_DROPOUT_MODES:
            raise ValueError(f"mc_dropout must be one of {MC_DROPOUT_MODES} (got {mc_dropout!r})")
        self.in_channels = in_channels
        self.hidden_channels = hidden_channels
        self.num_labels = num_labels
        self.dropout = dropout
        self.num_samples = num_samples
        self.threshold = threshold
        self.mc_dropout = mc_dropout
        # Dropout is applied here (not inside the encoder) so that it can be
        # forced on for Monte-Carlo sampling.
        self.encoder = SequenceBiLSTM(in_channels, hidden_channels, dropout=0.0)
        self.lin = torch.nn.Linear(2 * hidden_channels, num_labels)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot weights, zero biases."""
        self.encoder.reset_parameters()
        torch.nn.init.xavier_uniform_(self.lin.weight)
        torch.nn.init.zeros_(self.lin.bias)

    def _logits(self, x: Tensor, sent_len: Tensor, stochastic: bool,
                layout: SequenceLayout | None = None,
                keep: tuple[Tensor, Tensor] | None = None) -> Tensor:
        keep_in, keep_out = (None, None) if keep is None else keep
        x = _dropout(x, self.dropout, stochastic, keep_in)
        h = self.encoder(x, sent_len, layout)
        h = _dropout(h, self.dropout, stochastic, keep_out)
        return self.lin(h)

    def forward(self, x: Tensor, sent_len: Tensor, layout: SequenceLayout | None = None
                ) -> Tensor:
        """One pass (stochastic when training).

        Args:
            x (torch.Tensor): Flat token features ``[N, in_channels]``.
            sent_len (torch.Tensor): Sentence lengths ``[S]``.
            layout (SequenceLayout, optional): The sentences' layout planned on the host.

        Returns:
            Label logits ``[N, num_labels]``.
        """
        return self._logits(x, sent_len, self.training, layout)

    @torch.no_grad()
    def uncertainty(self, x: Tensor, sent_len: Tensor, layout: SequenceLayout | None = None,
                    mc_layout: SequenceLayout | None = None,
                    segment_sizes: Sequence[int] | None = None,
                    segment_seeds: Sequence[int] | None = None) -> tuple[Tensor, Tensor]:
        """Monte-Carlo-dropout predictive entropy of every token.

        Runs under :func:`torch.no_grad`: the pruning decision derived from it
        is discrete, so no gradient flows through the uncertainty (the tagger
        is trained with :meth:`loss` instead).

        Args:
            x (torch.Tensor): Flat token features ``[N, in_channels]``.
            sent_len (torch.Tensor): Sentence lengths ``[S]``.
            layout (SequenceLayout, optional): The sentences' layout planned on the host.
            mc_layout (SequenceLayout, optional): The layout of the :math:`T` copies of the
                sentences (``SequenceLayout.from_lengths`` of ``sent_len`` tiled :math:`T`
                times, the copies back to back), for ``mc_dropout="full"``.

        Returns:
            ``(u [N], probs [N, num_labels])``: the entropy (nats) and the
            averaged predictive distribution.
        """
        T = self.num_samples
        num_tokens = x.size(0)
        if mc_layout is not None and mc_layout.num_sequences != T * sent_len.numel():
            mc_layout = None  # planned for another number of passes
        keep = (None if segment_seeds is None
                else self._segment_masks(x, segment_sizes, segment_seeds))
        if self.mc_dropout == "output":
            # One input mask and one Bi-LSTM pass; T output masks and dense layers.
            keep_in, keep_out = (None, None) if keep is None else keep
            h = self.encoder(_dropout(x, self.dropout, True, keep_in), sent_len, layout)
            logits = self.lin(_dropout(h.repeat(T, 1), self.dropout, True, keep_out))
        else:
            # The flat layout of T copies of the batch is again a valid flat layout.
            logits = self._logits(x.repeat(T, 1), sent_len.repeat(T), stochastic=True,
                                  layout=mc_layout, keep=keep)
        if torch.finfo(logits.dtype).bits < 32:  # the threshold compares small entropy gaps
            logits = logits.float()
        probs = logits.softmax(dim=-1).view(T, num_tokens, -1).mean(dim=0)
        return self.entropy(probs), probs

    def _segment_masks(self, x: Tensor, sizes: Sequence[int] | None, seeds: Sequence[int]
                       ) -> tuple[Tensor, Tensor]:
        """The input and output dropout factors of the :math:`T` passes, each segment's drawn
        from its own generator (see :meth:`uncertainty`), laid out as the rows they multiply:
        ``[T * N, in_channels]`` (``[N, in_channels]`` for ``mc_dropout="output"``) and
        ``[T * N, 2 * hidden_channels]``."""
        T, num_tokens = self.num_samples, x.size(0)
        if sizes is None or len(sizes) != len(seeds):
            raise ValueError("segment_seeds needs segment_sizes, one size per seed")
        if sum(sizes) != num_tokens:
            raise ValueError(f"segment_sizes sum to {sum(sizes)} but x has {num_tokens} tokens")
        output = self.mc_dropout == "output"
        hidden = 2 * self.hidden_channels
        noise_in, noise_out = [], []
        for size, seed in zip(sizes, seeds):
            gen = torch.Generator(device=x.device)
            gen.manual_seed(int(seed))
            in_shape = (size, x.size(1)) if output else (T, size, x.size(1))
            noise_in.append(torch.rand(in_shape, generator=gen, device=x.device, dtype=x.dtype))
            noise_out.append(torch.rand((T, size, hidden), generator=gen, device=x.device,
                                        dtype=x.dtype))
        keep_in = _kept(torch.cat(noise_in, dim=-2), self.dropout)
        keep_out = _kept(torch.cat(noise_out, dim=1), self.dropout)
        return keep_in.reshape(-1, x.size(1)), keep_out.view(T * num_tokens, hidden)

    @staticmethod
    def entropy(probs: Tensor) -> Tensor:
        """Entropy in nats of each distribution ``[..., C]`` (``0 log 0 = 0``)."""
        return -torch.special.xlogy(probs, probs).sum(dim=-1)

    def drop_mask(self, u: Tensor) -> Tensor:
        r"""Boolean ``[N]``: ``True`` for tokens in :math:`Drop` (``u > threshold``).

        ``~drop_mask(u)`` is the ``source_mask`` of :class:`~docgraph.nn.DocGraphConv`.
        """
        return u > self.threshold

    def loss(self, logits: Tensor, y: Tensor, reduction: str = "mean") -> Tensor:
        """Token-level cross-entropy of the tagger (mean over tokens by default).

        Args:
            logits (torch.Tensor): ``[N, num_labels]``.
            y (torch.Tensor): Gold labels ``[N]`` (``-100`` is ignored).
            reduction (str, optional): ``"mean"``, ``"sum"`` or ``"none"``.
        """
        # log-softmax times a one-hot mask instead of F.cross_entropy: its nll_loss is
        # documented as non-deterministic on CUDA (same values; -100 matches no label)
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"invalid reduction {reduction!r}")
        labels = torch.arange(logits.size(-1), device=logits.device)
        one_hot = (y.unsqueeze(-1) == labels).to(logits.dtype)
        nll = -(F.log_softmax(logits, dim=-1) * one_hot).sum(dim=-1)
        if reduction == "none":
            return nll
        if reduction == "sum":
            return nll.sum()
        return nll.sum() / (y != -100).sum().to(nll.dtype)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.in_channels}, {self.hidden_channels}, "
            f"num_labels={self.num_labels}, num_samples={self.num_samples}, "
            f"threshold={self.threshold}"
            + ("" if self.mc_dropout == "full" else f", mc_dropout={self.mc_dropout}")
            + ")"
        )
