"""Linear-chain CRF tag decoder on the flat token layout."""

from __future__ import annotations

import torch
from torch import Tensor
from torchcrf import CRF

from docgraph.nn.encoders import length_buckets, pad_segments

__all__ = ["CRFDecoder"]

_DISALLOWED = -1e4
#: Sentences of a batch are scored and decoded in groups whose lengths lie within this factor
#: (:func:`~docgraph.nn.encoders.length_buckets`), so short sentences do not run through the
#: padding of the longest one. Exact; on 4000-token batches of OntoNotes-like lengths (73
#: labels) the NLL's forward + backward took 192 instead of 1021 ms of CPU time, on CoNLL-like
#: ones (17 labels) 43 instead of 139 ms (``benchmarks/crf_buckets.py``, log in
#: ``benchmarks/results/crf/``).
BUCKET_FACTOR = 2.0


class CRFDecoder(torch.nn.Module):
    r"""Linear-chain CRF tag decoder of the Bi-LSTM-CRF framework used by GCDoc
    (Wang et al., "Exploiting Global Contextual Information for Document-level
    Named Entity Recognition", Eqs. 1, 2 and loss_main):

    .. math::
        \Pr(\mathbf{y} \mid \mathbf{X}) = \frac{\prod_j
        \phi(y_{j-1}, y_j, \mathbf{h}_j)}{\sum_{\mathbf{y}'} \prod_j
        \phi(y'_{j-1}, y'_j, \mathbf{h}_j)}, \qquad
        \mathcal{L}_m = -\sum \log \Pr(\mathbf{y} \mid \mathbf{X})

    A thin wrapper over :class:`torchcrf.CRF` (``batch_first=True``) that
    works on flat emissions ``[N, C]`` plus sentence lengths. The emission
    scores are produced outside (a linear layer on the token states); the
    transition scores are the CRF parameters (torchcrf's
    :math:`\mathcal{U}(-0.1, 0.1)` initialisation is kept).

    Constrained decoding (off by default): when ``allowed_transitions``
    (``[C, C]``, entry ``[a, b]`` = may tag ``a`` be followed by ``b``),
    ``allowed_start`` or ``allowed_end`` (``[C]``) are given, disallowed moves
    get a score of ``-1e4`` at decode time only; training (:meth:`nll`) is
    unaffected. The masks (e.g. BIOES validity) are built by the caller, which
    knows the tag names. Viterbi decoding is implemented here, vectorised over
    sentences (the only loop is over time steps).

    Args:
        num_labels (int): Number of tags :math:`C`.
        allowed_transitions (torch.Tensor, optional): Boolean ``[C, C]``.
        allowed_start (torch.Tensor, optional): Boolean ``[C]``.
        allowed_end (torch.Tensor, optional): Boolean ``[C]``.

    Shapes:
        - **input:** emissions :math:`(N, C)`, sentence lengths :math:`(S)`,
          tags :math:`(N)`
        - **output:** scalar NLL (:meth:`nll`) or tags :math:`(N)` (:meth:`decode`)
    """

    allowed_transitions: Tensor | None
    allowed_start: Tensor | None
    allowed_end: Tensor | None

    def __init__(
        self,
        num_labels: int,
        allowed_transitions: Tensor | None = None,
        allowed_start: Tensor | None = None,
        allowed_end: Tensor | None = None,
    ) -> None:
        super().__init__()
        self.num_labels = num_labels
        self.crf = CRF(num_labels, batch_first=True)
        for name, mask, shape in (
            ("allowed_transitions", allowed_transitions, (num_labels, num_labels)),
            ("allowed_start", allowed_start, (num_labels,)),
            ("allowed_end", allowed_end, (num_labels,)),
        ):
            if mask is not None:
                if tuple(mask.shape) != shape:
                    raise ValueError(f"{name} must have shape {shape}, got {tuple(mask.shape)}")
                mask = mask.to(torch.bool)
            self.register_buffer(name, mask)
        self.reset_parameters()

    @property
    def constrained(self) -> bool:
        """Whether any decoding constraint is set."""
        return (
            self.allowed_transitions is not None
            or self.allowed_start is not None
            or self.allowed_end is not None
        )

    def reset_parameters(self) -> None:
        """Re-draw the transition scores (torchcrf's initialisation)."""
        self.crf.reset_parameters()

    def nll(
        self, emissions: Tensor, sent_len: Tensor, tags: Tensor, reduction: str = "sum"
    ) -> Tensor:
        """Negative log-likelihood of the gold tags (Eq. loss_main).

        Args:
            emissions (torch.Tensor): Flat emission scores ``[N, C]``.
            sent_len (torch.Tensor): Sentence lengths ``[S]``.
            tags (torch.Tensor): Gold tags ``[N]``.
            reduction (str, optional): ``"sum"`` over sentences (paper),
                ``"mean"`` over sentences, ``"token_mean"`` or ``"none"``
                (``[S]``). (default: ``"sum"``)
        """
        if reduction not in ("sum", "mean", "token_mean", "none"):
            raise ValueError(f"invalid reduction {reduction!r}")
        starts = torch.cumsum(sent_len, 0) - sent_len
        per_sentence = emissions.new_zeros(sent_len.numel())
        for index in length_buckets(sent_len, BUCKET_FACTOR):
            padded, mask = pad_segments(emissions, starts[index], sent_len[index])
            padded_tags, _ = pad_segments(tags, starts[index], sent_len[index])
            llh = self.crf(padded, padded_tags, mask=mask, reduction="none")
            per_sentence = per_sentence.index_put((index.to(llh.device),), -llh)
        if reduction == "none":
            return per_sentence
        if reduction == "sum":
            return per_sentence.sum()
        if reduction == "mean":
            return per_sentence.mean()
        return per_sentence.sum() / sent_len.sum().to(per_sentence.dtype)

    def _scores(self) -> tuple[Tensor, Tensor, Tensor]:
        start = self.crf.start_transitions
        end = self.crf.end_transitions
        trans = self.crf.transitions
        if self.allowed_start is not None:
            start = start.masked_fill(~self.allowed_start, _DISALLOWED)
        if self.allowed_end is not None:
            end = end.masked_fill(~self.allowed_end, _DISALLOWED)
        if self.allowed_transitions is not None:
            trans = trans.masked_fill(~self.allowed_transitions, _DISALLOWED)
        return start, end, trans

    @torch.no_grad()
    def decode(self, emissions: Tensor, sent_len: Tensor) -> Tensor:
        """Viterbi decoding of every sentence (constrained if masks are set).

        Args:
            emissions (torch.Tensor): Flat emission scores ``[N, C]``.
            sent_len (torch.Tensor): Sentence lengths ``[S]``.

        Returns:
            The best tag sequence of every sentence, flat ``[N]`` (long).
        """
        starts = torch.cumsum(sent_len, 0) - sent_len
        token_ids = torch.arange(emissions.size(0), device=emissions.device)
        out = torch.empty_like(token_ids)
        for index in length_buckets(sent_len, BUCKET_FACTOR):
            padded, mask = pad_segments(emissions, starts[index], sent_len[index])
            positions, _ = pad_segments(token_ids, starts[index], sent_len[index])
            tags = self._viterbi(padded, mask, sent_len[index].to(emissions.device))
            out[positions[mask]] = tags[mask]
        return out

    def _viterbi(self, padded: Tensor, mask: Tensor, lengths: Tensor) -> Tensor:
        """Best tags ``[B, L]`` of a padded group of sentences (padding: anything)."""
        start, end, trans = self._scores()
        num_sents, max_len, _ = padded.shape

        score = start + padded[:, 0]  # [S, C]
        history = []
        for t in range(1, max_len):
            nxt = score.unsqueeze(2) + trans + padded[:, t].unsqueeze(1)  # [S, C, C]
            best, idx = nxt.max(dim=1)
            score = torch.where(mask[:, t].unsqueeze(1), best, score)
            history.append(idx)
        score = score + end

        cur = score.argmax(dim=1)  # tag at the last real position
        out = torch.empty(num_sents, max_len, dtype=torch.long, device=padded.device)
        for t in range(max_len - 1, 0, -1):
            out[:, t] = cur
            prev = history[t - 1].gather(1, cur.unsqueeze(1)).squeeze(1)
            cur = torch.where(t < lengths, prev, cur)
        out[:, 0] = cur
        return out

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.num_labels}, constrained={self.constrained})"
