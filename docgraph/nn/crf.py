"""Linear-chain CRF tag decoder on the flat token layout."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor
from torchcrf import CRF

from docgraph.nn.gather import gather_rows
from docgraph.nn.layout import SequenceLayout

__all__ = ["CRFDecoder", "log_partition"]

_DISALLOWED = -1e4
#: The forward and backward recursions renormalise their (float64, exp-space) vectors every
#: this many steps. Between two renormalisations a vector can shrink by at most
#: ``exp(-(max - min of the transition scores))`` per step, so float64 (``exp(-708)``) is
#: safe for transition ranges up to ~170, far beyond what training produces.
RENORMALISE_EVERY = 4


class _LogPartition(torch.autograd.Function):
    r""":math:`\log Z` of every sequence, forward algorithm in exp space, exact gradient.

    The gradient is the posterior marginals from the forward-backward algorithm, computed
    in :meth:`backward` (two operators per time step each way instead of autograd's record
    of every step).
    """

    @staticmethod
    def forward(ctx, emissions: Tensor, start: Tensor, end: Tensor, trans: Tensor,
                reverse: Tensor, last: Tensor, lengths: Tensor, mask: Tensor) -> Tensor:
        num, steps, _ = emissions.shape
        em = emissions.detach().double()
        shift = em.amax(dim=2, keepdim=True)
        X = torch.exp(em - shift)  # [B, L, C], max 1 per position
        trans64, start64, end64 = trans.detach().double(), start.detach().double(), \
            end.detach().double()
        tmax, smax, emax = trans64.max(), start64.max(), end64.max()
        E = torch.exp(trans64 - tmax)
        alphas, log_scales = _recursion(torch.exp(start64 - smax) * X[:, 0], X.unbind(1)[1:], E)
        alpha_last = alphas.transpose(0, 1).reshape(num * steps, -1)[last]
        end_exp = torch.exp(end64 - emax)
        log_z = torch.log((alpha_last * end_exp).sum(dim=1)) + smax + emax \
            + (shift.squeeze(2) * mask).sum(dim=1) + (lengths - 1).to(em.dtype) * tmax
        if log_scales is not None:  # the renormalisations up to each sequence's last step
            taken = log_scales[1] <= (lengths - 1).unsqueeze(0)
            log_z = log_z + (log_scales[0] * taken).sum(dim=0)
        ctx.save_for_backward(X, E, alphas, end_exp, reverse, last, mask)
        ctx.dtypes = (emissions.dtype, start.dtype)
        return log_z.to(emissions.dtype)

    @staticmethod
    def backward(ctx, grad: Tensor):  # type: ignore[override]
        X, E, alphas, end_exp, reverse, last, mask = ctx.saved_tensors
        num, steps, labels = X.shape
        # Backward vectors, each sequence reversed within its length so that all start at 0.
        X_rev = X.gather(1, reverse.unsqueeze(2).expand(-1, -1, labels))
        betas_rev, _ = _recursion(end_exp.expand(num, labels), X_rev.unbind(1)[:-1], E.t(),
                                  multiply_first=True)
        betas = betas_rev.transpose(0, 1).gather(1, reverse.unsqueeze(2).expand(-1, -1, labels))
        alphas = alphas.transpose(0, 1)  # [B, L, C]
        g = grad.double().view(num, 1, 1)
        posterior = alphas * betas
        posterior = posterior / posterior.sum(dim=2, keepdim=True) * mask.unsqueeze(2) * g
        grad_em = posterior.to(ctx.dtypes[0])
        grad_start = posterior[:, 0].sum(dim=0)
        grad_end = posterior.reshape(num * steps, labels)[last].sum(dim=0)
        grad_trans = None
        if steps > 1:
            # pairwise marginals xi_t(i, j) = alpha_{t-1}(i) E(i, j) X_t(j) beta_t(j) / D_t
            right = X[:, 1:] * betas[:, 1:]  # [B, L-1, C]
            norm = ((alphas[:, :-1] @ E) * right).sum(dim=2, keepdim=True)
            left = alphas[:, :-1] * (mask[:, 1:].unsqueeze(2) * g / norm.clamp(min=1e-300))
            grad_trans = E * (left.reshape(-1, labels).t() @ right.reshape(-1, labels))
            grad_trans = grad_trans.to(ctx.dtypes[1])
        else:
            grad_trans = torch.zeros_like(E).to(ctx.dtypes[1])
        return (grad_em, grad_start.to(ctx.dtypes[1]), grad_end.to(ctx.dtypes[1]), grad_trans,
                None, None, None, None)


def _recursion(first: Tensor, inputs: tuple[Tensor, ...], step: Tensor,
               multiply_first: bool = False) -> tuple[Tensor, Tensor | None]:
    """``v_t = (v_{t-1} @ E) * X_t`` with ``E = step`` (``(v_{t-1} * X_t) @ E`` with
    ``multiply_first``), renormalised every :data:`RENORMALISE_EVERY` steps.

    Returns the stacked ``[L, B, C]`` vectors and the ``(log scales [R, B], step of each
    [R, 1])`` of the renormalisations (``None`` without any)."""
    vectors = [first]
    scales, scale_steps = [], []
    v = first
    for t, x in enumerate(inputs, start=1):
        v = (v * x) @ step if multiply_first else (v @ step) * x
        if t % RENORMALISE_EVERY == 0:
            peak = v.amax(dim=1, keepdim=True)
            v = v / peak
            scales.append(peak)
            scale_steps.append(t)
        vectors.append(v)
    if not scales:
        return torch.stack(vectors), None
    log_scales = torch.log(torch.cat(scales, dim=1).t())  # [R, B]
    where = torch.tensor(scale_steps, device=first.device).unsqueeze(1)
    return torch.stack(vectors), (log_scales, where)


def _log_recursion(first: Tensor, inputs: tuple[Tensor, ...], transitions: Tensor,
                   backward: bool = False) -> Tensor:
    r"""The forward scores :math:`\alpha_t(j) = \log \sum_i e^{\alpha_{t-1}(i) + A_{ij}} +
    x_t(j)` (with ``backward``, :math:`\beta_t(i) = \log \sum_j e^{A_{ij} + x_{t-1}(j) +
    \beta_{t-1}(j)}`) from ``first`` ``[B, C]`` and the log inputs ``x_t`` ``[B, C]``, each
    step one product with :math:`e^{A - \max A}` on vectors shifted by their maximum.

    Returns the ``[B, L, C]`` log vectors (``L = len(inputs) + 1``)."""
    peak = transitions.max()
    step = torch.exp(transitions - peak)
    step = step.t() if backward else step
    vectors = [first]
    v = first
    for x in inputs:
        u = v + x if backward else v
        top = u.amax(dim=1, keepdim=True)
        v = torch.log(torch.exp(u - top) @ step) + top + peak
        v = v if backward else v + x
        vectors.append(v)
    return torch.stack(vectors, dim=1)


def log_partition(emissions: Tensor, start: Tensor, end: Tensor, transitions: Tensor,
                  layout: SequenceLayout) -> Tensor:
    r"""Log-partition :math:`\log Z` of a linear-chain CRF for every sequence of ``layout``
    (the normaliser of pytorch-crf's ``_compute_normalizer``), with its exact gradient.

    The forward algorithm runs in float64 in exp space (``v_t = (v_{t-1} E) \odot X_t`` with
    :math:`E = \exp(U - \max U)` and :math:`X_t = \exp(e_t - \max e_t)`, renormalised every
    :data:`RENORMALISE_EVERY` steps): two operators per step, one padded call for all
    sequences. The backward pass computes the posterior marginals by the forward-backward
    algorithm.

    Args:
        emissions: Flat emission scores ``[N, C]``.
        start, end: Start / end transition scores ``[C]``.
        transitions: Transition scores ``[C, C]`` (``[from, to]``).
        layout: The sequences (sentences) of the flat rows.

    Returns:
        ``[B]`` log-partition of every sequence, in the dtype of ``emissions``.
    """
    return _padded_log_partition(gather_rows(emissions, layout.crf_index), start, end,
                                 transitions, layout)


def _padded_log_partition(padded: Tensor, start: Tensor, end: Tensor, transitions: Tensor,
                          layout: SequenceLayout) -> Tensor:
    return _LogPartition.apply(padded, start, end, transitions, layout.crf_reverse,
                               layout.crf_last, layout.lengths, layout.crf_mask)


class CRFDecoder(torch.nn.Module):
    r"""Linear-chain CRF tag decoder of the Bi-LSTM-CRF framework used by GCDoc
    (Wang et al., `"Exploiting Global Contextual Information for Document-level
    Named Entity Recognition" <https://arxiv.org/abs/2106.00887>`_, Eqs. (4)--(6)):

    .. math::
        \Pr(\mathbf{y} \mid \mathbf{X}) = \frac{\prod_j
        \phi(y_{j-1}, y_j, \mathbf{h}_j)}{\sum_{\mathbf{y}'} \prod_j
        \phi(y'_{j-1}, y'_j, \mathbf{h}_j)}, \qquad
        \mathcal{L}_m = -\sum \log \Pr(\mathbf{y} \mid \mathbf{X})

    What comes from pytorch-crf (:class:`torchcrf.CRF`, held as ``self.crf``): only
    the parameters and their initialisation. ``self.crf`` owns the three score
    tensors ``start_transitions`` ``[C]``, ``end_transitions`` ``[C]`` and
    ``transitions`` ``[C, C]`` (``[from, to]``), drawn from
    :math:`\mathcal{U}(-0.1, 0.1)` by its ``reset_parameters`` (which
    :meth:`reset_parameters` calls); their state-dict keys (``crf.start_transitions``,
    ...) are those of every saved model. We also keep its definition of a path
    score (start + emissions + transitions + end) and the names of its reductions.
    Neither ``CRF.forward`` nor ``CRF.decode`` is ever called here; the tests
    compare ours against them.

    What is ours: the flat layout (emissions ``[N, C]`` plus sentence lengths, or
    a :class:`~docgraph.nn.layout.SequenceLayout` planned on the host) instead of
    pytorch-crf's padded ``[B, L, C]`` tensors and mask; the batched NLL
    (:meth:`nll`), whose gold path score is gathered in one pass (one-hot
    products and :func:`~docgraph.nn.gather.gather_rows`, so no backward with
    atomic adds) and whose normaliser is :func:`log_partition` (the forward
    algorithm in float64 exp space with periodic renormalisation, one padded
    call for all sentences, and a hand-written backward giving the posterior
    marginals by the forward-backward algorithm); the Viterbi decoder
    (:meth:`decode`), which runs over the sentences in packed order (only the
    sentences still running at each time step), reads the back-pointers and
    last tags back in one transfer and follows them on the host; and the
    constrained decoding below. The emission scores are produced outside (a
    linear layer on the token states).

    Constrained decoding (off by default): when ``allowed_transitions``
    (``[C, C]``, entry ``[a, b]`` = may tag ``a`` be followed by ``b``),
    ``allowed_start`` or ``allowed_end`` (``[C]``) are given, disallowed moves
    get a score of ``-1e4`` at decode time only; training (:meth:`nll`) is
    unaffected. The masks (e.g. BIOES validity) are built by the caller, which
    knows the tag names (:func:`docgraph.model.bioes_transition_masks`).

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
        r"""Re-draw the start, end and transition scores (pytorch-crf's ``reset_parameters``:
        :math:`\mathcal{U}(-0.1, 0.1)`)."""
        self.crf.reset_parameters()

    def nll(
        self, emissions: Tensor, sent_len: Tensor, tags: Tensor, reduction: str = "sum",
        layout: SequenceLayout | None = None, allowed: Tensor | None = None,
    ) -> Tensor:
        r"""Negative log-likelihood of the gold tags (the loss :math:`\mathcal{L}_m`).

        Equal to pytorch-crf's ``CRF.forward`` (negated) on every sentence: the gold path
        score is gathered on the flat layout, the normaliser is :func:`log_partition`.

        With ``allowed``, the gold is a set of paths (partial annotation): every path whose
        token :math:`t` carries a label of ``allowed[t]``, and the loss is
        :math:`\log Z(x) - \log \sum_{\mathbf{y} \in \mathcal{A}} e^{s(\mathbf{y}, x)}`, the
        numerator the log-partition restricted to the allowed paths (:func:`log_partition` on
        the emissions with the disallowed labels removed). A row of ``allowed`` holding only
        the tag of ``tags`` gives the loss above.

        Args:
            emissions (torch.Tensor): Flat emission scores ``[N, C]``.
            sent_len (torch.Tensor): Sentence lengths ``[S]``.
            tags (torch.Tensor): Gold tags ``[N]``.
            reduction (str, optional): ``"sum"`` over sentences (paper),
                ``"mean"`` over sentences, ``"token_mean"`` or ``"none"``
                (``[S]``). (default: ``"sum"``)
            layout (SequenceLayout, optional): The sentences' layout, planned on the host
                (made from ``sent_len`` when not given).
            allowed (torch.Tensor, optional): Boolean ``[N, C]``, the labels each token may
                carry (each row must allow at least one label; ``tags`` is then unused).
        """
        if reduction not in ("sum", "mean", "token_mean", "none"):
            raise ValueError(f"invalid reduction {reduction!r}")
        if layout is None:
            layout = SequenceLayout.from_lengths(sent_len, dtype=emissions.dtype).to(
                emissions.device)
        crf = self.crf
        padded = gather_rows(emissions, layout.crf_index)  # [S, L, C]
        if allowed is not None:
            gold = _padded_log_partition(
                padded.masked_fill(~allowed[layout.crf_index], _DISALLOWED),
                crf.start_transitions, crf.end_transitions, crf.transitions, layout)
        else:
            gold = self._gold_score(padded, tags, layout)
        per_sentence = _padded_log_partition(padded, crf.start_transitions,
                                             crf.end_transitions, crf.transitions, layout) - gold
        if reduction == "none":
            return per_sentence
        if reduction == "sum":
            return per_sentence.sum()
        if reduction == "mean":
            return per_sentence.mean()
        return per_sentence.sum() / layout.lengths.sum().to(per_sentence.dtype)

    def _gold_score(self, padded: Tensor, tags: Tensor, layout: SequenceLayout) -> Tensor:
        """The score of the path ``tags`` of every sentence (``padded``: ``[S, L, C]``)."""
        crf = self.crf
        labels = padded.size(2)
        # Every gather of a parameter or activation goes through gather_rows (a deterministic
        # backward that sums repeats in parallel); the gold tags pick their scores by a
        # one-hot product rather than `gather` (whose backward is an atomic scatter_add).
        padded_tags = tags[layout.crf_index]  # [S, L], no gradient
        mask = layout.crf_mask.to(padded.dtype)
        one_hot = (padded_tags.unsqueeze(2) == torch.arange(labels, device=tags.device))
        gold = ((padded * one_hot.to(padded.dtype)).sum(dim=2) * mask).sum(dim=1)
        gold = gold + gather_rows(crf.start_transitions, padded_tags[:, 0]) \
            + gather_rows(crf.end_transitions, padded_tags.reshape(-1)[layout.crf_last])
        if padded_tags.size(1) > 1:
            pairs = padded_tags[:, :-1] * labels + padded_tags[:, 1:]
            steps = gather_rows(crf.transitions.reshape(-1), pairs)
            gold = gold + (steps * mask[:, 1:]).sum(dim=1)
        return gold

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
    def decode(self, emissions: Tensor, sent_len: Tensor,
               layout: SequenceLayout | None = None) -> Tensor:
        """Viterbi decoding of every sentence (constrained if masks are set).

        The max-product recursion runs on the device over all sentences padded to the
        longest (four operators per step); the back-pointers are read back once and
        followed on the host.

        Args:
            emissions (torch.Tensor): Flat emission scores ``[N, C]``.
            sent_len (torch.Tensor): Sentence lengths ``[S]``.
            layout (SequenceLayout, optional): The sentences' layout, planned on the host
                (made from ``sent_len`` when not given).

        Returns:
            The best tag sequence of every sentence, flat ``[N]`` (long).
        """
        if layout is None:
            layout = SequenceLayout.from_lengths(sent_len, dtype=emissions.dtype).to(
                emissions.device)
        start, end, trans = self._scores()
        labels = emissions.size(1)
        # Packed order (time step by time step, the sentences still running, longest first):
        # each step computes only the sentences that have a token there.
        steps = emissions[layout.packed_index].split(layout.batch_sizes)
        score = start + steps[0]
        scores, history = [score], []
        for em, running in zip(steps[1:], layout.batch_sizes[1:]):
            best, idx = (score[:running].unsqueeze(2) + trans).max(dim=1)
            score = best + em
            scores.append(score)
            history.append(idx)
        final = torch.cat(scores)[layout.packed_last] + end
        last_tag = final.argmax(dim=1)
        small = torch.uint8 if labels <= 256 else torch.int64
        pointers = (torch.cat(history).to(small) if history
                    else torch.empty(0, labels, dtype=small, device=emissions.device))
        # The batch's one read-back: back-pointers and best last tags in one transfer.
        host = torch.cat([pointers.reshape(-1), last_tag.to(small)]).cpu().numpy()
        num = layout.num_sequences
        tags = _backtrace(host[: host.size - num].reshape(-1, labels), host[host.size - num:],
                          layout)
        return torch.from_numpy(tags).to(emissions.device)

    @torch.no_grad()
    def path_log_probs(self, emissions: Tensor, sent_len: Tensor, sentence: Tensor,
                       first: Tensor, labels: Tensor,
                       layout: SequenceLayout | None = None, temperature: float = 1.0) -> Tensor:
        r"""Log-probability under the CRF that tokens ``first[k] .. first[k] + m - 1`` of
        sentence ``sentence[k]`` carry the labels ``labels[k]`` (whatever the other tokens
        carry): a labelled span's marginal, e.g. ``[B-PER, I-PER, E-PER]`` or ``[S-LOC]``.

        .. math::
            \log P(y_{i..j} = \ell_{0..m-1} \mid x) = \alpha_i(\ell_0)
            + \sum_{t=1}^{m-1} \big(A_{\ell_{t-1} \ell_t} + E_{i+t, \ell_t}\big)
            + \beta_j(\ell_{m-1}) - \log Z(x)

        with the forward scores :math:`\alpha` (emission of token :math:`i` included), the
        backward scores :math:`\beta` (end transitions included) and the scores
        :meth:`decode` reads (its masks applied when decoding is constrained), every score
        divided by ``temperature`` :math:`\tau` first. A temperature changes the
        probabilities, never the Viterbi path (its scores are all divided by the same
        :math:`\tau > 0`).

        Args:
            emissions (torch.Tensor): Flat emission scores ``[N, C]``.
            sent_len (torch.Tensor): Sentence lengths ``[S]``.
            sentence (torch.Tensor): Sentence of each span ``[K]``.
            first (torch.Tensor): Position of each span's first token in its sentence ``[K]``.
            labels (torch.Tensor): Label ids ``[K, M]`` of each span, padded with ``-1`` past
                its length.
            layout (SequenceLayout, optional): The sentences' layout.
            temperature (float, optional): The temperature :math:`\tau > 0` the scores are
                divided by. (default: ``1.0``)

        Returns:
            ``[K]`` log-probabilities (float64).
        """
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if layout is None:
            layout = SequenceLayout.from_lengths(sent_len, dtype=emissions.dtype).to(
                emissions.device)
        start, end, trans = (t.double() / temperature for t in self._scores())
        padded = emissions.double()[layout.crf_index] / temperature  # [S, L, C]
        lengths = layout.lengths.to(padded.device)
        num, steps, labels_count = padded.shape
        alpha = _log_recursion(start + padded[:, 0], padded.unbind(1)[1:], trans)
        # backward scores on each sentence reversed within its length (all end at step 0)
        reverse = layout.crf_reverse.to(padded.device).unsqueeze(2).expand(-1, -1, labels_count)
        reversed_em = padded.gather(1, reverse)
        beta = _log_recursion(end.expand(num, -1), reversed_em.unbind(1)[:-1], trans,
                              backward=True).gather(1, reverse)
        rows = torch.arange(num, device=padded.device)
        log_z = torch.logsumexp(alpha[rows, lengths - 1] + end, dim=1)  # [S]
        size = (labels >= 0).sum(dim=1)
        safe = labels.clamp(min=0)
        score = alpha[sentence, first, safe[:, 0]]
        for t in range(1, labels.size(1)):
            inside = t < size
            pos = (first + t).clamp(max=steps - 1)
            step = trans[safe[:, t - 1], safe[:, t]] + padded[sentence, pos, safe[:, t]]
            score = score + torch.where(inside, step, torch.zeros_like(step))
        last = safe.gather(1, (size - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
        score = score + beta[sentence, first + size - 1, last]
        return score - log_z[sentence]

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.num_labels}, constrained={self.constrained})"


def _backtrace(pointers: np.ndarray, last_tag: np.ndarray, layout: SequenceLayout
               ) -> np.ndarray:
    """Follow the packed Viterbi back-pointers (``[M - B, C]``: step 1's rows, then step
    2's, ...) from each sentence's best last tag (sentences longest first); returns the flat
    tags of all sentences in their own order."""
    sizes = layout.batch_sizes
    num = layout.num_sequences
    offsets = np.concatenate([[0], np.cumsum(sizes[1:])]).astype(np.int64)
    out = np.zeros((num, len(sizes)), dtype=np.int64)  # sorted sentences x steps
    cur = last_tag.astype(np.int64)
    for t in range(len(sizes) - 1, 0, -1):
        running = sizes[t]
        out[:running, t] = cur[:running]
        rows = offsets[t - 1] + np.arange(running)
        cur[:running] = pointers[rows, cur[:running]]
    out[:, 0] = cur
    unsorted = np.empty_like(out)
    unsorted[layout.sort_order] = out
    lengths = layout.host_lengths
    return unsorted[np.arange(len(sizes))[None, :] < lengths[:, None]]
