"""Cross-sentence contextual embedding module of GCDoc."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.nn.resolver import activation_resolver

from docgraph.nn.encoders import reset_lstm_parameters
from docgraph.nn.gather import gather_rows
from docgraph.nn.layout import (
    DEFAULT_BUCKETS,
    DirectionLSTM,
    SequenceLayout,
    ShapeGrid,
    WindowPlan,
    run_bilstm,
)

WINDOW_ENCODINGS = ("concat", "per_sentence")

__all__ = [
    "WINDOW_ENCODINGS",
    "CrossSentenceEncoder",
    "SentenceWindows",
    "encode_segments",
    "encode_windows",
    "sentence_window_plan",
    "sentence_windows",
    "window_plan",
    "window_rows",
    "window_segments",
    "window_sums",
]


def _doc_bounds(sentence_doc: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``(sentence index, first sentence of its document, last sentence of its document)``."""
    idx = torch.arange(sentence_doc.numel(), device=sentence_doc.device)
    _, counts = torch.unique_consecutive(sentence_doc, return_counts=True)
    doc_first = torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts)
    doc_last = torch.repeat_interleave(torch.cumsum(counts, 0) - 1, counts)
    return idx, doc_first, doc_last


def sentence_windows(
    sent_len: Tensor, sentence_doc: Tensor, window: int
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    r"""Token ranges of the previous / next ``window`` sentences of every sentence.

    The :math:`k` previous sentences of sentence :math:`s` inside its
    document form the contiguous flat token range
    ``[tok_start[max(first(s), s-k)], tok_start[s])``, the :math:`k` next ones
    ``[tok_end[s], tok_end[min(last(s), s+k)])`` -- pure index arithmetic.

    Args:
        sent_len (torch.Tensor): Sentence lengths ``[S]``.
        sentence_doc (torch.Tensor): Document of every sentence ``[S]`` (non-decreasing).
        window (int): Window size :math:`k \ge 1`.

    Returns:
        ``(prev_start, prev_len, next_start, next_len)``, each ``[S]``; a
        length of ``0`` means the side is missing (document boundary).
    """
    idx, doc_first, doc_last = _doc_bounds(sentence_doc)

    tok_end = torch.cumsum(sent_len, 0)
    tok_start = tok_end - sent_len

    first_prev = torch.maximum(doc_first, idx - window)
    prev_start = tok_start[first_prev]
    prev_len = tok_start - prev_start

    last_next = torch.minimum(doc_last, idx + window)
    next_start = tok_end
    next_len = tok_end[last_next] - tok_end
    return prev_start, prev_len, next_start, next_len


def window_sums(values: Tensor, rows: Tensor) -> Tensor:
    r"""Sums of a per-sentence quantity over each sentence's window of sentences.

    ``out[s] = values[rows[s, 0]] + values[rows[s, 1]] + ...``, added in that order, where a
    row ``S`` reads zero (a zero row appended to ``values``); each column is one gather
    (:func:`~docgraph.nn.gather.gather_rows`, a deterministic backward), no write at indices.

    Args:
        values (torch.Tensor): Per-sentence values ``[S, *]``.
        rows (torch.Tensor): ``[S, k]`` the sentences of each sentence's window, ``S`` for
            none (:func:`window_rows`).

    Returns:
        ``[S, *]`` (zero for an empty window).
    """
    padded = torch.cat([values, values.new_zeros(1, *values.shape[1:])])
    total = torch.zeros_like(values)
    for j in range(rows.size(1)):
        total = total + gather_rows(padded, rows[:, j])
    return total


def window_rows(sentence_doc: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The previous and the next ``window`` sentences of every sentence in its document, on
    the host: ``(previous [S, k'], next [S, k'])`` with ``k' = min(window, S - 1)``, nearest
    first, ``S`` where the document ends sooner.

    Args:
        sentence_doc: Document of every sentence ``[S]`` (documents contiguous).
        window: Window size :math:`k \ge 1`.
    """
    sentence_doc = np.asarray(sentence_doc).reshape(-1)
    num = sentence_doc.size
    starts = np.flatnonzero(np.concatenate([[True], sentence_doc[1:] != sentence_doc[:-1]])) \
        if num else np.zeros(0, dtype=np.int64)
    counts = np.diff(np.concatenate([starts, [num]]))
    doc_first = np.repeat(starts, counts)[:, None]
    doc_last = np.repeat(starts + counts - 1, counts)[:, None]
    idx = np.arange(num)[:, None]
    steps = np.arange(1, max(min(window, num - 1), 0) + 1)[None, :]
    previous = np.where(idx - steps >= doc_first, idx - steps, num)
    following = np.where(idx + steps <= doc_last, idx + steps, num)
    return previous.astype(np.int64), following.astype(np.int64)


@dataclass
class SentenceWindows:
    """What ``window_encoding="per_sentence"`` needs of a batch, planned on the host
    (:func:`sentence_window_plan`).

    Attributes:
        pad_index: ``[S, L]`` token row of every position of the sentences padded to the
            longest, ``N`` (a zero row appended to the tokens) on padding.
        layout: The sentences as sequences of those padded rows flattened to ``[S * L]``.
        previous: ``[S, k']`` the previous sentences of each sentence (:func:`window_rows`).
        next: ``[S, k']`` its next sentences.
        previous_len: ``[S]`` tokens of each previous window (``0``: none).
        next_len: ``[S]`` tokens of each next window.
    """

    pad_index: Tensor
    layout: SequenceLayout
    previous: Tensor
    next: Tensor
    previous_len: Tensor
    next_len: Tensor

    def _map(self, move: Callable[[Tensor], Tensor]) -> SentenceWindows:
        return SentenceWindows(move(self.pad_index), self.layout._map(move), move(self.previous),
                               move(self.next), move(self.previous_len), move(self.next_len))

    def to(self, device: torch.device | str | None = None, non_blocking: bool = False,
           dtype: torch.dtype | None = None) -> SentenceWindows:
        """A copy on ``device``, its floating tensors of ``dtype`` (``None``: unchanged)."""
        return self._map(lambda t: t.to(device=device,
                                        dtype=dtype if t.is_floating_point() else None,
                                        non_blocking=non_blocking))


def sentence_window_plan(sent_len: Tensor | np.ndarray, sentence_doc: Tensor | np.ndarray,
                         window: int, buckets: int = DEFAULT_BUCKETS,
                         dtype: torch.dtype | None = None, grid: ShapeGrid | None = None
                         ) -> SentenceWindows:
    """Plan the per-sentence windows of a batch on the host (mean weights of the layout of
    ``dtype``, the model's; default: torch's default dtype; padded shapes of ``grid``)."""
    sent_len = np.asarray(sent_len.cpu() if isinstance(sent_len, Tensor) else sent_len,
                          dtype=np.int64).reshape(-1)
    sentence_doc = np.asarray(sentence_doc.cpu() if isinstance(sentence_doc, Tensor)
                              else sentence_doc).reshape(-1)
    num, max_len = sent_len.size, int(sent_len.max()) if sent_len.size else 0
    steps = np.arange(max_len)[None, :]
    first = (np.cumsum(sent_len) - sent_len)[:, None]
    pad_index = np.where(steps < sent_len[:, None], first + steps, int(sent_len.sum()))
    layout = SequenceLayout.from_lengths(sent_len, np.arange(num) * max_len, buckets, dtype, grid)
    previous, following = window_rows(sentence_doc, window)
    _, prev_len, _, next_len = window_segments(sent_len, sentence_doc, window)
    return SentenceWindows(torch.from_numpy(pad_index.reshape(num, max_len)), layout,
                           torch.from_numpy(previous), torch.from_numpy(following),
                           torch.from_numpy(np.asarray(prev_len, dtype=np.int64)),
                           torch.from_numpy(np.asarray(next_len, dtype=np.int64)))


def encode_segments(
    lstm: torch.nn.LSTM,
    x: Tensor,
    start: Tensor,
    length: Tensor,
    dropout: float = 0.0,
    training: bool = False,
) -> Tensor:
    r"""Mean-pooled Bi-LSTM encoding of contiguous token segments (the sentence encoder,
    Wang et al., Section 3.3 "Cross-sentence Contextual Embedding").

    Segment :math:`w` is ``x[start[w] : start[w] + length[w]]``, encoded on its own and
    pooled as :math:`\mathbf{s} = \frac{1}{n} \sum_i \mathbf{h}_i`. Segments of length
    ``0`` get a zero vector. The segments are planned on the host
    (:func:`window_plan`); see :func:`encode_windows` for a plan made beforehand.

    Args:
        lstm (torch.nn.LSTM): A ``batch_first`` bidirectional LSTM.
        x (torch.Tensor): Flat token features ``[N, D]``.
        start (torch.Tensor): Segment starts ``[W]``.
        length (torch.Tensor): Segment lengths ``[W]`` (``>= 0``).
        dropout (float, optional): Dropout on the LSTM input and the pooled output.
        training (bool, optional): Whether dropout is active.

    Returns:
        ``[W, H_out]`` segment representations.
    """
    plan = window_plan(start, length, dtype=x.dtype).to(x.device)
    return encode_windows(lstm, x, plan, dropout, training)


def window_plan(start: Tensor | np.ndarray, length: Tensor | np.ndarray,
                buckets: int = DEFAULT_BUCKETS, dtype: torch.dtype | None = None,
                grid: ShapeGrid | None = None) -> WindowPlan:
    """Plan the non-empty segments ``(start, length)`` on the host (see :class:`WindowPlan`),
    its mean weights of ``dtype`` (the model's; default: torch's default dtype), its padded
    shapes those of ``grid`` (``None``: none)."""
    start = np.asarray(start.cpu() if isinstance(start, Tensor) else start, dtype=np.int64)
    length = np.asarray(length.cpu() if isinstance(length, Tensor) else length, dtype=np.int64)
    present = np.flatnonzero(length > 0)
    layout = (SequenceLayout.from_lengths(length[present], start[present], buckets, dtype, grid)
              if present.size else None)
    slot = np.full(length.size, present.size, dtype=np.int64)
    slot[present] = np.arange(present.size)
    return WindowPlan(torch.from_numpy(present), torch.from_numpy(length > 0), layout,
                      torch.from_numpy(slot))


def encode_windows(lstm: torch.nn.LSTM, x: Tensor, plan: WindowPlan, dropout: float = 0.0,
                   training: bool = False) -> Tensor:
    """:func:`encode_segments` with the segments planned beforehand: ``[W, H_out]``.

    A non-zero ``dropout`` masks the flat token features once per call (one mask per token,
    shared by the windows that contain it) and the pooled outputs.
    """
    hidden = lstm.hidden_size * (2 if lstm.bidirectional else 1)
    if plan.layout is None:
        return x.new_zeros(plan.has_window.numel(), hidden)
    x = F.dropout(x, dropout, training)
    pooled = F.dropout(run_bilstm(lstm, x, plan.layout, reduce="mean"), dropout, training)
    # sentences without the window read an appended zero row (a gather, not a scatter)
    return gather_rows(torch.cat([pooled, pooled.new_zeros(1, hidden)]), plan.slot)


def window_segments(sent_len: np.ndarray, sentence_doc: np.ndarray, window: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`sentence_windows` of host arrays, for planning on the host:
    ``(prev_start, prev_len, next_start, next_len)`` as numpy arrays."""
    windows = sentence_windows(torch.as_tensor(np.asarray(sent_len, dtype=np.int64)),
                               torch.as_tensor(np.asarray(sentence_doc)), window)
    return tuple(t.numpy() for t in windows)  # type: ignore[return-value]


class CrossSentenceEncoder(torch.nn.Module):
    r"""The cross-sentence contextual embedding module of GCDoc, from
    Wang et al., `"Exploiting Global Contextual Information for Document-level
    Named Entity Recognition"
    <https://arxiv.org/abs/2106.00887>`_ (Section IV-B "Cross-Sentence Contextual
    Embedding Module", Eqs. (11)--(16), with the sentence encoder of
    Eq. (17)).

    Three independent Bi-LSTM sentence encoders (mean pooling over the hidden
    states) produce the current sentence :math:`\mathbf{s}_c`, the
    concatenation of the :math:`k` previous sentences :math:`\mathbf{s}_p`
    and of the :math:`k` next sentences :math:`\mathbf{s}_f` of the same
    document. Then

    .. math::
        f(\mathbf{s}_i, \mathbf{s}_j) &= \mathbf{w}^{\top} \sigma\left(
        \mathbf{W}_s^{(i)} \mathbf{s}_i + \mathbf{W}_s^{(j)} \mathbf{s}_j +
        \mathbf{b}\right)

        [a_p, a_f] &= \mathrm{softmax}\left([f(\mathbf{s}_c, \mathbf{s}_p),
        f(\mathbf{s}_c, \mathbf{s}_f)]\right)

        \tilde{\mathbf{s}}_c &= a_p \mathbf{s}_p + a_f \mathbf{s}_f

        \lambda &= \mathrm{sigmoid}\left(\mathbf{W}_g^{(3)} \tanh(
        \mathbf{W}_g^{(1)} \tilde{\mathbf{s}}_c + \mathbf{W}_g^{(2)}
        \mathbf{s}_c)\right)

        \mathbf{s}'_c &= \lambda \odot \mathbf{s}_c + (1 - \lambda) \odot
        \tilde{\mathbf{s}}_c

    A side that does not exist (first / last sentence of a document) or that
    is disabled (``use_previous`` / ``use_next``) is masked out of the
    softmax; a sentence with neither side gets :math:`\mathbf{s}'_c =
    \mathbf{s}_c` (reported as :math:`a = 0`, :math:`\lambda = 1`).
    All windows of the batch are encoded by one Bi-LSTM per encoder, in the length
    buckets of a layout planned on the host (:func:`~docgraph.nn.layout.run_bilstm`);
    windows are built by index arithmetic on the flat layout.

    ``window_encoding`` *(ours)* chooses how :math:`\mathbf{s}_p` and
    :math:`\mathbf{s}_f` are encoded:

    * ``"concat"`` (default, faithful to the paper): each window is the
      concatenation of its :math:`k` sentences, read as *one* sequence by the
      previous- / next-context Bi-LSTM, then mean-pooled. Every token is read
      once by the current-sentence encoder and up to :math:`k` times by each
      context encoder: about :math:`(1 + 2k) N` LSTM token-steps for
      :math:`N` tokens, in sequences up to :math:`k` times longer.
    * ``"per_sentence"`` (faster approximation): the previous- and
      next-context Bi-LSTMs each run *once* over the individual sentences of
      the batch (in the length buckets of the current-sentence encoder);
      :math:`\mathbf{s}_p` of sentence :math:`s` is the mean of these hidden
      states over all tokens of its :math:`k` previous sentences in the
      document (token-weighted, i.e. mean pooling over the window's tokens),
      likewise :math:`\mathbf{s}_f`. The window sums are computed from
      per-sentence sums (:func:`window_sums`), without any loop over
      sentences. The approximation: a Bi-LSTM state no longer crosses a
      sentence boundary inside a window (each sentence of the window is read
      from a zero state, without the context of its neighbours in the
      window). The cost drops from :math:`(1 + 2k) N` to :math:`3 N` LSTM
      token-steps, over sequences no longer than a sentence. The parameters
      are the same in both modes (checkpoints are interchangeable).

    Choices where the paper is silent: :math:`\sigma` is ``activation``
    (default ``tanh``); :math:`f` is shared between the past and the future
    side; the gate has no biases (as written in the paper); ``dropout``
    (default ``0``) is applied to the input and to the pooled output of the
    sentence Bi-LSTMs. Weight matrices are Glorot-initialised, biases zero.

    Args:
        in_channels (int): Size of each input token feature.
        sent_channels (int, optional): Sentence representation size
            :math:`d_s` (even; ``d_s / 2`` hidden units per direction).
            (default: ``300``)
        window (int, optional): Window size :math:`k \ge 1`. (default: ``2``)
        use_previous (bool, optional): Use the past context. (default: ``True``)
        use_next (bool, optional): Use the future context. (default: ``True``)
        activation (str or Callable, optional): :math:`\sigma` of the
            compatibility function. (default: ``"tanh"``)
        dropout (float, optional): Dropout rate. (default: ``0.0``)
        window_encoding (str, optional): ``"concat"`` (paper) or
            ``"per_sentence"`` (approximation, see above). (default: ``"concat"``)

    Shapes:
        - **input:** token features :math:`(N, F_{in})`, sentence lengths
          :math:`(S)`, sentence documents :math:`(S)`
        - **output:** sentence features :math:`(S, d_s)`; with
          ``return_attention=True`` also :math:`[a_p, a_f]` :math:`(S, 2)` and
          :math:`\lambda` :math:`(S, d_s)`
    """

    def __init__(
        self,
        in_channels: int,
        sent_channels: int = 300,
        window: int = 2,
        use_previous: bool = True,
        use_next: bool = True,
        activation: str | Callable[[Tensor], Tensor] = "tanh",
        dropout: float = 0.0,
        window_encoding: str = "concat",
    ) -> None:
        super().__init__()
        if window_encoding not in WINDOW_ENCODINGS:
            raise ValueError(
                f"window_encoding must be one of {WINDOW_ENCODINGS} (got {window_encoding!r})"
            )
        if window < 1:
            raise ValueError(
                f"window must be >= 1 (got {window}); disable the module instead of k=0"
            )
        if sent_channels % 2 != 0:
            raise ValueError(f"sent_channels must be even (got {sent_channels})")
        self.in_channels = in_channels
        self.sent_channels = sent_channels
        self.window = window
        self.use_previous = use_previous
        self.use_next = use_next
        self.dropout = dropout
        self.window_encoding = window_encoding
        self.activation_name = activation if isinstance(activation, str) else repr(activation)
        self.act = activation_resolver(activation)

        hidden = sent_channels // 2

        def lstm() -> torch.nn.LSTM:
            return DirectionLSTM(in_channels, hidden)

        self.enc_current = lstm()
        self.enc_previous = lstm() if use_previous else None
        self.enc_next = lstm() if use_next else None

        d = sent_channels
        self.lin_att_current = torch.nn.Linear(d, d, bias=False)  # W_s^(i)
        self.lin_att_context = torch.nn.Linear(d, d, bias=True)  # W_s^(j), b
        self.att = torch.nn.Linear(d, 1, bias=False)  # w
        self.lin_gate_context = torch.nn.Linear(d, d, bias=False)  # W_g^(1)
        self.lin_gate_current = torch.nn.Linear(d, d, bias=False)  # W_g^(2)
        self.lin_gate_out = torch.nn.Linear(d, d, bias=False)  # W_g^(3)

        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot weights, zero biases."""
        for enc in (self.enc_current, self.enc_previous, self.enc_next):
            if enc is not None:
                reset_lstm_parameters(enc)
        for lin in (
            self.lin_att_current,
            self.lin_att_context,
            self.att,
            self.lin_gate_context,
            self.lin_gate_current,
            self.lin_gate_out,
        ):
            torch.nn.init.xavier_uniform_(lin.weight)
            if lin.bias is not None:
                torch.nn.init.zeros_(lin.bias)

    def score(self, s_i: Tensor, s_j: Tensor) -> Tensor:
        r"""Compatibility :math:`f(\mathbf{s}_i, \mathbf{s}_j)` ``[S]``."""
        return self.att(self.act(self.lin_att_current(s_i) + self.lin_att_context(s_j))).view(-1)

    def fuse(
        self, s_c: Tensor, s_p: Tensor, s_f: Tensor, has_p: Tensor, has_f: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        r"""Attention and gate given the three sentence representations.

        Args:
            s_c, s_p, s_f (torch.Tensor): ``[S, d_s]`` each.
            has_p, has_f (torch.Tensor): Boolean ``[S]``, whether the side exists.

        Returns:
            ``(s_prime [S, d_s], attention [S, 2], lam [S, d_s])``.
        """
        scores = torch.stack([self.score(s_c, s_p), self.score(s_c, s_f)], dim=1)
        avail = torch.stack([has_p, has_f], dim=1)
        any_side = avail.any(dim=1, keepdim=True)
        scores = scores.masked_fill(~avail, float("-inf"))
        # Rows without any side would be all -inf: give them finite dummies.
        scores = scores.masked_fill(~any_side, 0.0)
        attn = scores.softmax(dim=1) * avail.to(scores.dtype)
        s_tilde = attn[:, :1] * s_p + attn[:, 1:] * s_f
        lam = torch.sigmoid(
            self.lin_gate_out(
                torch.tanh(self.lin_gate_context(s_tilde) + self.lin_gate_current(s_c))
            )
        )
        lam = torch.where(any_side, lam, torch.ones_like(lam))
        s_prime = lam * s_c + (1.0 - lam) * s_tilde
        return s_prime, attn, lam

    def forward(
        self,
        x: Tensor,
        sent_len: Tensor,
        sentence_doc: Tensor,
        return_attention: bool = False,
        layout: SequenceLayout | None = None,
        windows: tuple[WindowPlan | None, WindowPlan | None] | SentenceWindows | None = None,
    ) -> Tensor | tuple[Tensor, Tensor, Tensor]:
        """Compute the enhanced sentence representations.

        Args:
            x (torch.Tensor): Flat token features ``[N, in_channels]``.
            sent_len (torch.Tensor): Sentence lengths ``[S]``.
            sentence_doc (torch.Tensor): Document of every sentence ``[S]``.
            return_attention (bool, optional): Also return ``[a_p, a_f]``
                ``[S, 2]`` and :math:`\\lambda` ``[S, d_s]``. (default: ``False``)
            layout (SequenceLayout, optional): The sentences' layout planned on the host
                (made from ``sent_len`` when not given).
            windows (tuple or SentenceWindows, optional): The windows planned on the host:
                for ``"concat"`` the previous and next ones (:func:`window_plan` of
                :func:`window_segments`; ``None`` for a disabled side), for
                ``"per_sentence"`` a :class:`SentenceWindows` (:func:`sentence_window_plan`);
                made from ``sent_len`` and ``sentence_doc`` when not given.

        Returns:
            ``s_prime [S, sent_channels]`` (or ``(s_prime, attention, lam)``).
        """
        if layout is None:
            layout = SequenceLayout.from_lengths(sent_len, dtype=x.dtype).to(x.device)
        drop, train = self.dropout, self.training
        s_c = F.dropout(run_bilstm(self.enc_current, F.dropout(x, drop, train), layout,
                                   reduce="mean"), drop, train)
        zeros = torch.zeros_like(s_c)
        no_side = torch.zeros_like(sent_len, dtype=torch.bool)
        if self.window_encoding == "per_sentence":
            if not isinstance(windows, SentenceWindows):
                windows = sentence_window_plan(sent_len, sentence_doc, self.window,
                                               dtype=x.dtype).to(x.device)
            s_p, s_f = self._per_sentence_context(x, windows)
            has_p = windows.previous_len > 0 if self.enc_previous is not None else no_side
            has_f = windows.next_len > 0 if self.enc_next is not None else no_side
        else:
            s_p = s_f = zeros
            has_p = has_f = no_side
            if windows is None and (self.enc_previous is not None or self.enc_next is not None):
                windows = self.plan_windows(sent_len, sentence_doc, x.device, x.dtype)
            previous, following = windows if isinstance(windows, tuple) else (None, None)
            if self.enc_previous is not None and previous is not None:
                s_p = encode_windows(self.enc_previous, x, previous, drop, train)
                has_p = previous.has_window
            if self.enc_next is not None and following is not None:
                s_f = encode_windows(self.enc_next, x, following, drop, train)
                has_f = following.has_window

        s_prime, attn, lam = self.fuse(s_c, s_p, s_f, has_p, has_f)
        if return_attention:
            return s_prime, attn, lam
        return s_prime

    def plan_windows(self, sent_len: Tensor, sentence_doc: Tensor,
                     device: torch.device | str = "cpu", dtype: torch.dtype | None = None
                     ) -> tuple[WindowPlan | None, WindowPlan | None]:
        """Plan the previous / next windows of the sentences on the host (mean weights of
        ``dtype``, the model's; default: torch's default dtype)."""
        prev_start, prev_len, next_start, next_len = window_segments(
            sent_len.cpu().numpy(), sentence_doc.cpu().numpy(), self.window)
        previous = (window_plan(prev_start, prev_len, dtype=dtype).to(device)
                    if self.enc_previous is not None else None)
        following = (window_plan(next_start, next_len, dtype=dtype).to(device)
                     if self.enc_next is not None else None)
        return previous, following

    def _per_sentence_context(self, x: Tensor, windows: SentenceWindows
                              ) -> tuple[Tensor, Tensor]:
        """``(s_p, s_f)`` of ``window_encoding="per_sentence"`` (zeros for a disabled side)."""
        drop, train = self.dropout, self.training
        padded = gather_rows(torch.cat([x, x.new_zeros(1, x.size(1))]), windows.pad_index)
        sums = []
        for enc in (self.enc_previous, self.enc_next):
            if enc is None:
                sums.append(x.new_zeros(windows.pad_index.size(0), self.sent_channels))
                continue
            # dropout on the padded sentences, drawn as for one padded call over them
            rows = F.dropout(padded, drop, train).reshape(-1, x.size(1))
            sums.append(run_bilstm(enc, rows, windows.layout, reduce="sum"))  # [S, d_s]
        prev_sum = window_sums(sums[0], windows.previous)
        next_sum = window_sums(sums[1], windows.next)
        s_p = prev_sum / windows.previous_len.clamp(min=1).unsqueeze(1).to(prev_sum.dtype)
        s_f = next_sum / windows.next_len.clamp(min=1).unsqueeze(1).to(next_sum.dtype)
        return F.dropout(s_p, drop, train), F.dropout(s_f, drop, train)

    def __repr__(self) -> str:
        extra = (
            "" if self.window_encoding == "concat"
            else f", window_encoding={self.window_encoding}"
        )
        return (
            f"{self.__class__.__name__}({self.in_channels}, {self.sent_channels}, "
            f"window={self.window}, use_previous={self.use_previous}, "
            f"use_next={self.use_next}, activation={self.activation_name}{extra})"
        )
