"""Token-level sequence encoders working on the flat token layout.

All modules in this file use the *flat token layout* shared by the whole
GCDoc model (Wang et al., `"Exploiting Global Contextual Information for
Document-level Named Entity Recognition" <https://arxiv.org/abs/2106.00887>`_):

* ``x: [N, D]`` holds the features of all tokens of a batch, the tokens of
  each sentence contiguous, sentences in document order and documents
  contiguous;
* ``sent_len: LongTensor [S]`` gives the length of every sentence
  (``sent_len.sum() == N`` and ``sent_len >= 1``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from docgraph.nn.gather import gather_rows
from docgraph.nn.layout import (
    CharPlan,
    DirectionLSTM,
    SequenceLayout,
    char_plan,
    run_bilstm,
)

__all__ = [
    "CharEncoder",
    "SequenceBiLSTM",
    "length_buckets",
    "pad_segments",
    "pad_tokens",
    "reset_lstm_parameters",
    "unpad_tokens",
]


def _token_positions(sent_len: Tensor) -> tuple[Tensor, Tensor]:
    r"""Return ``(sentence_id [N], position_in_sentence [N])`` of every token."""
    num_sents = sent_len.numel()
    sent_id = torch.repeat_interleave(torch.arange(num_sents, device=sent_len.device), sent_len)
    offsets = torch.cumsum(sent_len, 0) - sent_len
    pos = torch.arange(sent_id.numel(), device=sent_len.device) - offsets[sent_id]
    return sent_id, pos


def pad_tokens(
    x: Tensor, sent_len: Tensor, max_len: int | None = None, padding_value: float = 0.0
) -> tuple[Tensor, Tensor]:
    r"""Lay flat token features out as a padded ``[S, L, *]`` tensor.

    A gather (index arithmetic only, no loop over sentences, no write at indices): every
    position reads its token's row, or a padding row appended to ``x``; for a floating ``x``
    through :func:`~docgraph.nn.gather.gather_rows`, whose backward is deterministic.

    Args:
        x (torch.Tensor): Flat token tensor of shape ``[N, *]``.
        sent_len (torch.Tensor): Sentence lengths ``[S]`` (sum ``N``, all ``>= 1``).
        max_len (int, optional): Padded length ``L``; defaults to ``sent_len.max()``.
        padding_value (float, optional): Value of padded positions. (default: ``0``)

    Returns:
        ``(padded [S, L, *], mask [S, L])`` where ``mask`` is ``True`` on real tokens.
    """
    num_sents = sent_len.numel()
    if max_len is None:
        max_len = int(sent_len.max()) if num_sents > 0 else 0
    sent_len = sent_len.to(x.device)
    steps = torch.arange(max_len, device=x.device).unsqueeze(0)
    mask = steps < sent_len.unsqueeze(1)
    first = torch.cumsum(sent_len, 0) - sent_len
    index = torch.where(mask, first.unsqueeze(1) + steps, x.size(0))
    rows = torch.cat([x, x.new_full((1, *x.shape[1:]), padding_value)])
    return _gather(rows, index), mask


def _gather(rows: Tensor, index: Tensor) -> Tensor:
    """``rows[index]``: :func:`gather_rows` for floating rows (which may need gradients)."""
    return gather_rows(rows, index) if rows.is_floating_point() else rows[index]


def length_buckets(lengths: Tensor, factor: float) -> list[Tensor]:
    r"""Indices of the sequences grouped by length, each group's lengths within ``factor``.

    A sequence of length :math:`n` goes to bucket :math:`\lfloor \log_{factor} n \rfloor`,
    so padding a bucket to its longest sequence never wastes more than a fraction
    :math:`1 - 1/factor` of its steps. Buckets come shortest first.

    Args:
        lengths (torch.Tensor): Sequence lengths ``[B]`` (``>= 1``).
        factor (float): Ratio ``> 1`` between the longest and shortest length of a bucket.
    """
    bucket = torch.floor(torch.log(lengths.clamp(min=1).double()) / math.log(factor)).long()
    return [(bucket == value).nonzero().view(-1) for value in torch.unique(bucket).tolist()]


def pad_segments(x: Tensor, start: Tensor, length: Tensor) -> tuple[Tensor, Tensor]:
    r"""Gather the contiguous segments ``x[start[i] : start[i] + length[i]]`` into a padded
    ``[B, L, *]`` tensor (``L = length.max()``); padded positions repeat row 0 of ``x``.

    Returns:
        ``(padded, mask [B, L])``, ``mask`` ``True`` on real positions.
    """
    pos = torch.arange(int(length.max()), device=x.device)
    mask = pos.unsqueeze(0) < length.to(x.device).unsqueeze(1)
    index = torch.where(mask, start.to(x.device).unsqueeze(1) + pos.unsqueeze(0), 0)
    return _gather(x, index), mask


def unpad_tokens(padded: Tensor, sent_len: Tensor) -> Tensor:
    r"""Inverse of :func:`pad_tokens`: gather ``[S, L, *]`` back into ``[N, *]``.

    Args:
        padded (torch.Tensor): Padded tensor ``[S, L, *]``.
        sent_len (torch.Tensor): Sentence lengths ``[S]``.

    Returns:
        The flat tensor ``[N, *]`` with ``N = sent_len.sum()``.
    """
    sent_id, pos = _token_positions(sent_len.to(padded.device))
    flat = padded.reshape(padded.size(0) * padded.size(1), *padded.shape[2:])
    return _gather(flat, sent_id * padded.size(1) + pos)


def reset_lstm_parameters(lstm: torch.nn.LSTM) -> None:
    r"""Glorot-initialise every gate matrix of ``lstm`` and zero its biases.

    Follows the paper ("Initialization": all weight matrices Glorot, biases
    ``0``). Each of the four gate blocks of ``weight_ih`` / ``weight_hh`` is a
    separate ``[H, *]`` weight matrix and is initialised on its own fan-in /
    fan-out.
    """
    for name, param in lstm.named_parameters():
        if name.startswith("weight"):
            hidden = param.size(0) // 4
            for k in range(4):
                torch.nn.init.xavier_uniform_(param.data[k * hidden : (k + 1) * hidden])
        elif name.startswith("bias"):
            torch.nn.init.zeros_(param)


class SequenceBiLSTM(torch.nn.Module):
    r"""A one-layer bidirectional LSTM run over every sentence of a flat batch.

    The context encoder of the Bi-LSTM-CRF baseline and of GCDoc
    (Wang et al., `"Exploiting Global Contextual Information for
    Document-level Named Entity Recognition" <https://arxiv.org/abs/2106.00887>`_, Eqs. (1)--(3)):

    .. math::
        \overrightarrow{\mathbf{h}}_i = \mathrm{LSTM}(\overrightarrow{\mathbf{h}}_{i-1},
        \mathbf{x}_i), \quad
        \overleftarrow{\mathbf{h}}_i = \mathrm{LSTM}(\overleftarrow{\mathbf{h}}_{i+1},
        \mathbf{x}_i), \quad
        \mathbf{h}_i = [\overrightarrow{\mathbf{h}}_i ; \overleftarrow{\mathbf{h}}_i]

    Sentences never see each other: each is read on its own in length buckets
    (:func:`~docgraph.nn.layout.run_bilstm`).
    Dropout with rate ``dropout`` is applied to the input and to the output of
    the Bi-LSTM (paper, "Optimization").

    Args:
        in_channels (int): Size of each input token feature.
        hidden_channels (int): Hidden size per direction.
        dropout (float, optional): Dropout rate on input and output. (default: ``0.0``)

    Shapes:
        - **input:** token features :math:`(N, F_{in})`, sentence lengths :math:`(S)`
        - **output:** token features :math:`(N, 2 \cdot F_{hidden})`
    """

    def __init__(self, in_channels: int, hidden_channels: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.hidden_channels = hidden_channels
        self.dropout = dropout
        self.lstm = DirectionLSTM(in_channels, hidden_channels)
        self.reset_parameters()

    @property
    def out_channels(self) -> int:
        """Size of each output token feature (``2 * hidden_channels``)."""
        return 2 * self.hidden_channels

    def reset_parameters(self) -> None:
        """Glorot weights, zero biases."""
        reset_lstm_parameters(self.lstm)

    def forward(self, x: Tensor, sent_len: Tensor, layout: SequenceLayout | None = None
                ) -> Tensor:
        """Encode every sentence of the flat batch.

        Args:
            x (torch.Tensor): Flat token features ``[N, in_channels]``.
            sent_len (torch.Tensor): Sentence lengths ``[S]``.
            layout (SequenceLayout, optional): The sentences' layout planned on the host
                (:meth:`SequenceLayout.from_lengths`; made from ``sent_len`` when not given,
                which reads the lengths back from the device).

        Returns:
            Flat hidden states ``[N, 2 * hidden_channels]``.
        """
        if layout is None:
            layout = SequenceLayout.from_lengths(sent_len, dtype=x.dtype).to(x.device)
        x = F.dropout(x, self.dropout, self.training)
        out = run_bilstm(self.lstm, x, layout)
        return F.dropout(out, self.dropout, self.training)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.in_channels}, {self.hidden_channels}, "
            f"dropout={self.dropout})"
        )


class CharEncoder(torch.nn.Module):
    r"""Character-level word representation with a Bi-LSTM.

    The character embedding :math:`\mathbf{c}_i` of the paper (Wang et al.,
    `"Exploiting Global Contextual Information for Document-level Named Entity
    Recognition"
    <https://arxiv.org/abs/2106.00887>`_, "Network Structure"): characters are embedded (30-dim,
    randomly initialised) and read by a one-layer Bi-LSTM (50 hidden units per
    direction); the word representation is the concatenation of the final
    forward and backward states:

    .. math::
        \mathbf{c}_i = [\overrightarrow{\mathbf{h}}^{char}_{|x_i|} ;
        \overleftarrow{\mathbf{h}}^{char}_{1}]

    With ``unique=True`` (default) the Bi-LSTM runs once per distinct
    ``(chars row, length)`` pair of the batch and the result is scattered back
    with the inverse index of :func:`torch.unique`; frequent words
    ("the", ",") are then encoded once. The output is identical to the plain
    computation. The character embedding keeps PyTorch's default
    :math:`\mathcal{N}(0, 1)` initialisation (the paper only says "randomly
    initialize"); the padding row is zero.

    Args:
        num_chars (int): Size of the character vocabulary (including padding).
        char_dim (int, optional): Character embedding size. (default: ``30``)
        hidden_channels (int, optional): Bi-LSTM hidden size per direction.
            (default: ``50``)
        padding_idx (int, optional): Index of the padding character. (default: ``0``)
        unique (bool, optional): Encode each distinct word only once. (default: ``True``)

    Shapes:
        - **input:** characters :math:`(N, C)` (long, right-padded with
          ``padding_idx``), word lengths :math:`(N)` (lengths ``< 1`` are
          treated as ``1``)
        - **output:** :math:`(N, 2 \cdot F_{hidden})`
    """

    def __init__(
        self,
        num_chars: int,
        char_dim: int = 30,
        hidden_channels: int = 50,
        padding_idx: int = 0,
        unique: bool = True,
    ) -> None:
        super().__init__()
        self.num_chars = num_chars
        self.char_dim = char_dim
        self.hidden_channels = hidden_channels
        self.padding_idx = padding_idx
        self.unique = unique
        self.embedding = torch.nn.Embedding(num_chars, char_dim, padding_idx=padding_idx)
        self.lstm = DirectionLSTM(char_dim, hidden_channels)
        self.reset_parameters()

    @property
    def out_channels(self) -> int:
        """Size of each output word feature (``2 * hidden_channels``)."""
        return 2 * self.hidden_channels

    def reset_parameters(self) -> None:
        """Re-draw the character embedding; Glorot LSTM weights, zero biases."""
        self.embedding.reset_parameters()
        reset_lstm_parameters(self.lstm)

    def _encode(self, chars: Tensor, layout: SequenceLayout) -> Tensor:
        # final forward state at the last character, final backward state at the first
        flat = self.embedding(chars).reshape(-1, self.char_dim)
        return run_bilstm(self.lstm, flat, layout, final_states=True)

    def forward(self, chars: Tensor, char_len: Tensor, plan: CharPlan | None = None) -> Tensor:
        """Encode every word from its characters.

        Args:
            chars (torch.Tensor): Character ids ``[N, C]`` padded with ``padding_idx``.
            char_len (torch.Tensor): Number of characters of each word ``[N]``.
            plan (CharPlan, optional): The distinct words and their layout, planned on the
                host (``docgraph.batching.plan``); made here when not given (with ``unique``,
                which reads the characters back from the device).

        Returns:
            Word features ``[N, 2 * hidden_channels]``.
        """
        width = chars.size(1)
        if plan is None and not self.unique:
            lengths = char_len.clamp(min=1, max=width)
            starts = torch.arange(chars.size(0)) * width
            layout = SequenceLayout.from_lengths(
                lengths, starts, dtype=self.embedding.weight.dtype).to(chars.device)
            return self._encode(chars, layout)
        if plan is None:
            plan = char_plan(chars, char_len, device=chars.device,
                             dtype=self.embedding.weight.dtype)
        return gather_rows(self._encode(chars[plan.unique_tokens], plan.layout), plan.inverse)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.num_chars}, char_dim={self.char_dim}, "
            f"hidden_channels={self.hidden_channels})"
        )
