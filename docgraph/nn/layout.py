r"""Host-planned layouts of variable-length sequences, and the BiLSTM runner that uses them.

A batch holds sequences of many lengths (sentences, cross-sentence windows, words as
character sequences) laid out *flat*: sequence :math:`b` is the contiguous rows
``x[start[b] : start[b] + length[b]]`` of a ``[R, D]`` tensor. Recurrent layers need them
padded. Where the padding goes, how the sequences are grouped by length and where every
output row lands are questions about the *lengths* only, so :class:`SequenceLayout` answers
them once, on the host, when a batch is collated, as a handful of index tensors. The model
then runs with no data-dependent shapes on the device: no ``.item()``, ``nonzero`` or
``unique`` in the step, and a fixed, small number of operators per length bucket.

Length buckets: the sequences are split into at most ``buckets`` groups of consecutive
lengths chosen to pad the fewest steps (:func:`length_partition`). Each bucket costs a fixed
number of operators, each padded step real time on a CPU: a few buckets on the CPU, one
padded call on a GPU (where a padded step costs next to nothing and a launch does not).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch
from torch import Tensor

from docgraph.nn.gather import gather_rows, segment_sum

__all__ = ["DEFAULT_BUCKETS", "CharPlan", "DirectionLSTM", "LengthBucket", "SequenceLayout",
           "ShapeGrid", "WindowPlan", "char_plan", "direction_weights", "lstm_direction",
           "run_bilstm", "segment_means"]

#: Most length buckets of a layout unless told otherwise: what suits the CPU, where a padded
#: step costs real time (see docs/experiments.md, 'Sequence layout').
DEFAULT_BUCKETS = 6


@dataclass(frozen=True)
class ShapeGrid:
    """Padded shapes that recur from batch to batch, for the CPU's recurrent layers.

    oneDNN, which runs torch's LSTMs on the CPU, builds a primitive for every new
    ``(sequences, steps)`` shape of a call and keeps the recent ones: a shape met before costs
    its arithmetic only, a new one more (docs/design.md, "Running on the CPU"). On a grid a
    bucket's steps are its longest length rounded up to a multiple of
    :attr:`step_quantum` (of twice it past :attr:`coarse_steps`, of four times past twice
    that), its sequences are split into calls of at most :attr:`max_rows` and each call's
    rows are rounded up to a multiple of :attr:`row_quantum` (padding rows that read row 0).
    A layout on a grid chooses its length buckets by the steps they pad on it, padding rows
    included (:func:`length_partition`). Padding after a sequence's end never reaches its
    outputs: on a grid every position's outputs and the final states are bit for bit those of
    a layout without, and the means and sums of :func:`run_bilstm`, reduced over the padded
    steps, equal them to rounding.

    Attributes:
        step_quantum: Steps are a multiple of it (up to :attr:`coarse_steps`).
        coarse_steps: Past it, steps are a multiple of ``2 * step_quantum``; past twice it,
            of ``4 * step_quantum``.
        row_quantum: The sequences of a call are a multiple of it.
        max_rows: The most sequences of one call.
    """

    step_quantum: int = 8
    coarse_steps: int = 64
    row_quantum: int = 8
    max_rows: int = 512

    def __post_init__(self) -> None:
        for name in ("step_quantum", "coarse_steps", "row_quantum", "max_rows"):
            if getattr(self, name) < 1:
                raise ValueError(f"ShapeGrid.{name} must be >= 1, got {getattr(self, name)}")
        if self.max_rows % self.row_quantum:
            raise ValueError(f"ShapeGrid.max_rows ({self.max_rows}) must be a multiple of "
                             f"row_quantum ({self.row_quantum})")

    def steps(self, lengths: np.ndarray) -> np.ndarray:
        """The padded steps of sequences of ``lengths`` on the grid."""
        lengths = np.asarray(lengths, dtype=np.int64)
        quantum = np.where(lengths <= self.coarse_steps, self.step_quantum,
                           np.where(lengths <= 2 * self.coarse_steps, 2 * self.step_quantum,
                                    4 * self.step_quantum))
        return -(-lengths // quantum) * quantum

    def rows(self, sequences: int) -> int:
        """The rows of a call of ``sequences`` sequences (no more than :attr:`max_rows`
        sequences: a bucket of more is split first), padding rows included."""
        return -(-int(sequences) // self.row_quantum) * self.row_quantum


def _bucket_members(bucket_of: np.ndarray, grid: ShapeGrid | None) -> Iterator[np.ndarray]:
    """The sequences of every call, bucket by bucket (shortest first): a bucket's sequences
    in order, split into calls of at most ``grid.max_rows`` on a grid."""
    for value in np.unique(bucket_of):
        members = np.flatnonzero(bucket_of == value)
        if grid is None or members.size <= grid.max_rows:
            yield members
            continue
        calls = -(-members.size // grid.max_rows)
        size = grid.rows(-(-members.size // calls))  # calls of even size on the grid
        for start in range(0, members.size, size):
            yield members[start:start + size]


@dataclass
class LengthBucket:
    """The sequences of one length bucket, padded to ``steps``.

    Attributes:
        steps: Padded length (the longest sequence of the bucket).
        forward_index: ``[n, steps]`` source rows of each sequence, left-aligned; padding
            repeats row 0 (a recurrent layer run left to right never lets it reach a real
            position).
        reverse_index: ``[n, steps]`` the same rows, each sequence reversed within its own
            length (still left-aligned), for the right-to-left direction.
        mean_weights: ``[n, steps]`` ``1 / length`` on each sequence's real steps, ``0`` on
            padding: the weights of a sequence's mean over its outputs, in the floating dtype
            of the layout (the model's: ``1 / length`` rounded once, to that dtype).
    """

    steps: int
    forward_index: Tensor
    reverse_index: Tensor
    mean_weights: Tensor


@dataclass
class SequenceLayout:
    """Where every sequence of a flat batch goes when it is padded, in length buckets.

    Build it with :meth:`from_lengths` on the host (numpy), move it with :meth:`to`. Its one
    floating-point tensor, each bucket's :attr:`LengthBucket.mean_weights`, is made in the
    model's dtype (``dtype`` of :meth:`from_lengths`, :meth:`to`); the rest are integers.

    Attributes:
        lengths: ``[B]`` sequence lengths (on the model's device).
        host_lengths: The same lengths as a numpy array (host).
        buckets: The length buckets, shortest first.
        forward_positions: ``[M]`` (``M = lengths.sum()``): for the real positions of all
            sequences in order (sequence by sequence, position by position), the row of the
            concatenated, flattened forward outputs of the buckets.
        reverse_positions: ``[M]`` the same for the reverse-direction outputs.
        segment_offsets: ``[B + 1]`` first real position of each sequence (and ``M``): the
            sequences as CSR segments of the real positions.
        last_rows: ``[B]`` row of each sequence's last step in the concatenated, flattened
            outputs of either direction: its final left-to-right state, and its right-to-left
            state at its first position.
        member_rows: ``[B]`` row of each sequence among the buckets' sequences, bucket after
            bucket (where its per-sequence results land).
        crf_index: ``[B, max_len]`` source rows of each sequence padded to the longest one
            (padding repeats the sequence's first row), for the CRF.
        crf_mask: ``[B, max_len]`` real positions of :attr:`crf_index`.
        crf_last: ``[B]`` flat index ``b * max_len + length_b - 1`` of each sequence's last
            position in ``[B, max_len]``.
        crf_reverse: ``[B, max_len]`` position ``length_b - 1 - t`` of each real position
            ``t`` (padding keeps its own position): reverses every sequence within its length.
        packed_index: ``[M]`` source rows in *packed* order (as
            :class:`torch.nn.utils.rnn.PackedSequence`): time step by time step, the sequences
            still running at that step, longest first.
        packed_last: ``[B]`` row of each sequence's last position in the packed order, the
            sequences sorted longest first (:attr:`sort_order`).
        batch_sizes: Host list: number of sequences still running at each time step.
        sort_order: Host array: the sequences, longest first (stable).
    """

    lengths: Tensor
    host_lengths: np.ndarray
    buckets: list[LengthBucket]
    forward_positions: Tensor
    reverse_positions: Tensor
    segment_offsets: Tensor
    last_rows: Tensor
    member_rows: Tensor
    crf_index: Tensor
    crf_mask: Tensor
    crf_last: Tensor
    crf_reverse: Tensor
    packed_index: Tensor
    packed_last: Tensor
    batch_sizes: list[int]
    sort_order: np.ndarray

    @property
    def num_sequences(self) -> int:
        """Number of sequences :math:`B`."""
        return int(self.host_lengths.size)

    @property
    def max_len(self) -> int:
        """Length of the longest sequence (0 for no sequence)."""
        return int(self.host_lengths.max()) if self.host_lengths.size else 0

    @classmethod
    def from_lengths(
        cls,
        lengths: Sequence[int] | np.ndarray | Tensor,
        starts: Sequence[int] | np.ndarray | Tensor | None = None,
        buckets: int = DEFAULT_BUCKETS,
        dtype: torch.dtype | None = None,
        grid: ShapeGrid | None = None,
    ) -> SequenceLayout:
        """Plan the layout of sequences of the given lengths (all ``>= 1``).

        Args:
            lengths: Length of every sequence.
            starts: First source row of every sequence (default: the sequences tile the
                source back to back, ``starts = cumsum(lengths) - lengths``).
            buckets: Most length buckets (1: one padded call; see :func:`length_partition`).
            dtype: Floating dtype of the mean weights: the model's (default: torch's
                default dtype).
            grid: Pad every bucket to the shapes of this grid (:class:`ShapeGrid`); ``None``:
                each bucket to its longest sequence, with no padding rows.
        """
        dtype = torch.get_default_dtype() if dtype is None else dtype
        lengths = _as_numpy(lengths)
        if lengths.size and lengths.min() < 1:
            raise ValueError("every sequence needs a length >= 1 (leave empty ones out)")
        if buckets < 1:
            raise ValueError(f"buckets must be >= 1, got {buckets}")
        starts = (np.cumsum(lengths) - lengths) if starts is None else _as_numpy(starts)
        num = lengths.size
        padded_len = lengths if grid is None else grid.steps(lengths)
        bucket_of = length_partition(padded_len, buckets, 1 if grid is None else grid.row_quantum)
        buckets: list[LengthBucket] = []
        forward_positions = np.empty(int(lengths.sum()), dtype=np.int64)
        reverse_positions = np.empty_like(forward_positions)
        last_rows = np.empty(num, dtype=np.int64)
        member_rows = np.empty(num, dtype=np.int64)
        position_offset = np.cumsum(lengths) - lengths  # of each sequence's real positions
        row = 0  # rows of the concatenated, flattened bucket outputs
        member_offset = 0  # sequences (padding rows included) of the buckets before this one
        for members in _bucket_members(bucket_of, grid):
            member_len = lengths[members]
            steps = int(padded_len[members].max())
            rows = members.size if grid is None else grid.rows(members.size)
            pos = np.arange(steps)
            real = pos[None, :] < member_len[:, None]
            out_row = row + np.arange(members.size)[:, None] * steps + pos[None, :]  # [n, steps]
            first = position_offset[members, None]
            forward_positions[(first + pos)[real]] = out_row[real]
            reverse_positions[(first + member_len[:, None] - 1 - pos)[real]] = out_row[real]
            last_rows[members] = out_row[np.arange(members.size), member_len - 1]
            member_rows[members] = member_offset + np.arange(members.size)
            # padding rows (a grid's) read row 0 and weigh nothing; their outputs are not read
            extra = rows - members.size
            forward = np.where(real, starts[members, None] + pos[None, :], 0)
            reverse = np.where(real, starts[members, None] + member_len[:, None] - 1 - pos, 0)
            weights = real / member_len[:, None]  # float64 first
            if extra:
                forward, reverse, weights = (np.concatenate([a, np.zeros((extra, steps), a.dtype)])
                                             for a in (forward, reverse, weights))
            buckets.append(LengthBucket(steps, torch.from_numpy(forward),
                                        torch.from_numpy(reverse),
                                        torch.from_numpy(weights).to(dtype)))
            row += rows * steps
            member_offset += rows
        max_len = int(lengths.max()) if num else 0
        pos = np.arange(max_len)
        crf_mask = pos[None, :] < lengths[:, None]
        crf_index = np.where(crf_mask, starts[:, None] + pos[None, :], starts[:, None])
        crf_reverse = np.where(crf_mask, lengths[:, None] - 1 - pos[None, :], pos[None, :])
        order = np.argsort(-lengths, kind="stable")
        batch_sizes = [int((lengths > t).sum()) for t in range(max_len)]
        packed_index = np.concatenate(
            [starts[order[:n]] + t for t, n in enumerate(batch_sizes)]
        ) if num else np.zeros(0, dtype=np.int64)
        step_offset = np.concatenate([[0], np.cumsum(batch_sizes)]).astype(np.int64)
        packed_last = (step_offset[lengths[order] - 1] + np.arange(num)) if num \
            else np.zeros(0, dtype=np.int64)
        return cls(
            lengths=torch.from_numpy(lengths.copy()),
            host_lengths=lengths,
            buckets=buckets,
            forward_positions=torch.from_numpy(forward_positions),
            reverse_positions=torch.from_numpy(reverse_positions),
            segment_offsets=torch.from_numpy(np.concatenate([[0], np.cumsum(lengths)])
                                             .astype(np.int64)),
            last_rows=torch.from_numpy(last_rows),
            member_rows=torch.from_numpy(member_rows),
            crf_index=torch.from_numpy(crf_index.reshape(num, max_len)),
            crf_mask=torch.from_numpy(crf_mask.reshape(num, max_len)),
            crf_last=torch.from_numpy(np.arange(num) * max_len + lengths - 1),
            crf_reverse=torch.from_numpy(crf_reverse.reshape(num, max_len)),
            packed_index=torch.from_numpy(packed_index.astype(np.int64)),
            packed_last=torch.from_numpy(packed_last.astype(np.int64)),
            batch_sizes=batch_sizes,
            sort_order=order,
        )

    @classmethod
    def tiled(cls, lengths: Sequence[int] | np.ndarray | Tensor, copies: int,
              buckets: int = DEFAULT_BUCKETS, dtype: torch.dtype | None = None,
              grid: ShapeGrid | None = None) -> SequenceLayout:
        """The layout of ``copies`` copies of the sequences laid back to back (the flat rows
        ``x.repeat(copies, 1)``): e.g. the Monte-Carlo passes over a batch's sentences. Its
        outputs are copy after copy: ``out.view(copies, -1, F)[c]`` is copy ``c``'s."""
        lengths = _as_numpy(lengths)
        starts = np.cumsum(lengths) - lengths
        copy_starts = (starts[None, :] + int(lengths.sum()) * np.arange(copies)[:, None])
        return cls.from_lengths(np.tile(lengths, copies), copy_starts.reshape(-1), buckets,
                                dtype, grid)

    def _map(self, move: Callable[[Tensor], Tensor]) -> SequenceLayout:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in values.items():
            if isinstance(value, Tensor):
                values[name] = move(value)
        values["buckets"] = [
            LengthBucket(b.steps, move(b.forward_index), move(b.reverse_index),
                         move(b.mean_weights))
            for b in self.buckets
        ]
        return SequenceLayout(**values)

    @property
    def dtype(self) -> torch.dtype | None:
        """Floating dtype of the mean weights (``None`` without sequences)."""
        return self.buckets[0].mean_weights.dtype if self.buckets else None

    def to(self, device: torch.device | str | None = None, non_blocking: bool = False,
           dtype: torch.dtype | None = None) -> SequenceLayout:
        """A copy whose tensors live on ``device`` and whose floating tensors are of ``dtype``
        (``None``: unchanged; the host arrays stay)."""
        same_device = device is None or (
            all(b.forward_index.device == torch.device(device) for b in self.buckets[:1])
            and self.lengths.device == torch.device(device))
        if same_device and (dtype is None or self.dtype in (None, dtype)):
            return self
        return self._map(_mover(device, dtype, non_blocking))

    def pin_memory(self) -> SequenceLayout:
        """A copy in pinned host memory (for ``non_blocking`` copies to a GPU)."""
        return self._map(lambda t: t.pin_memory())


@dataclass
class CharPlan:
    """The distinct words of a batch for the character encoder.

    Attributes:
        unique_tokens: ``[U]`` one token of every distinct ``(characters, length)`` word.
        inverse: ``[N]`` the distinct word of every token.
        layout: The character sequences of the distinct words in ``chars[unique_tokens]``
            flattened to ``[U * max_word_len]`` rows.
    """

    unique_tokens: Tensor
    inverse: Tensor
    layout: SequenceLayout

    def _map(self, move: Callable[[Tensor], Tensor]) -> CharPlan:
        return CharPlan(move(self.unique_tokens), move(self.inverse), self.layout._map(move))


@dataclass
class WindowPlan:
    """The non-empty previous (or next) windows of the sentences of a batch.

    Attributes:
        present: ``[W]`` the sentences that have the window.
        has_window: ``[S]`` boolean, whether each sentence has it.
        layout: The windows as token segments of the flat batch.
        slot: ``[S]`` the window of each sentence among the ``W`` present ones, ``W`` for a
            sentence without one (a zero row appended to the window encodings).
    """

    present: Tensor
    has_window: Tensor
    layout: SequenceLayout | None
    slot: Tensor

    def _map(self, move: Callable[[Tensor], Tensor]) -> WindowPlan:
        return WindowPlan(move(self.present), move(self.has_window),
                          None if self.layout is None else self.layout._map(move),
                          move(self.slot))

    def to(self, device: torch.device | str | None = None, non_blocking: bool = False,
           dtype: torch.dtype | None = None) -> WindowPlan:
        """A copy on ``device``, its floating tensors of ``dtype`` (``None``: unchanged)."""
        return self._map(_mover(device, dtype, non_blocking))


def _mover(device: torch.device | str | None, dtype: torch.dtype | None,
           non_blocking: bool) -> Callable[[Tensor], Tensor]:
    """Move a planned tensor to ``device``; a floating one also to ``dtype``."""
    def move(t: Tensor) -> Tensor:
        return t.to(device=device, dtype=dtype if t.is_floating_point() else None,
                    non_blocking=non_blocking)
    return move


def char_plan(chars: Tensor | np.ndarray, char_len: Tensor | np.ndarray,
              buckets: int = DEFAULT_BUCKETS, device: torch.device | str = "cpu",
              dtype: torch.dtype | None = None, grid: ShapeGrid | None = None) -> CharPlan:
    """Plan the character encoder's distinct words of a batch on the host.

    Args:
        chars: Character ids ``[N, C]``.
        char_len: Word lengths ``[N]`` (clamped to ``[1, C]``).
        buckets: Most length buckets.
        device: Where the plan's tensors go.
        dtype: Floating dtype of the layout (the model's; default: torch's default dtype).
        grid: The padded shapes of the layout (:class:`ShapeGrid`; ``None``: none).
    """
    chars = chars.detach().cpu().numpy() if isinstance(chars, Tensor) else np.asarray(chars)
    char_len = _as_numpy(char_len)
    width = chars.shape[1]
    char_len = np.clip(char_len, 1, width)
    key = np.concatenate([chars, char_len[:, None]], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    layout = SequenceLayout.from_lengths(char_len[first], np.arange(first.size) * width, buckets,
                                         dtype, grid)
    plan = CharPlan(torch.from_numpy(first), torch.from_numpy(inverse.reshape(-1)), layout)
    return plan._map(lambda t: t.to(device))


def length_partition(lengths: np.ndarray, buckets: int, row_quantum: int = 1) -> np.ndarray:
    r"""Bucket of every sequence: at most ``buckets`` groups of consecutive lengths that pad
    the fewest steps, by dynamic programming over the distinct lengths. A bucket of :math:`n`
    sequences whose longest is :math:`L` pads :math:`\lceil n / q \rceil q \cdot L` steps
    (``row_quantum`` :math:`q`: its call's rows are a multiple of it, as on a
    :class:`ShapeGrid`); of equal costs, the fewest buckets. Buckets are numbered shortest
    first."""
    values, counts = np.unique(lengths, return_counts=True)
    distinct = values.size
    if distinct <= 1 or buckets <= 1:
        return np.zeros(lengths.size, dtype=np.int64)
    if distinct <= buckets and row_quantum == 1:
        return np.searchsorted(values, lengths)
    below = np.concatenate([[0], np.cumsum(counts)])  # sequences shorter than values[j]

    def rows(sequences: np.ndarray) -> np.ndarray:
        return -(-sequences // row_quantum) * row_quantum

    # best[j]: the least cost of the lengths values[:j + 1] in the current bucket count
    best = (values * rows(below[1:])).astype(np.float64)
    cuts = []
    for _ in range(1, min(buckets, distinct)):
        # a last bucket holding values[i + 1 : j + 1], the rest best[i]
        cost = best[:, None] + values[None, :] * rows(below[None, 1:] - below[1:, None])
        cost[np.tril_indices(distinct)] = np.inf
        choice = np.argmin(np.concatenate([best[None, :], cost], axis=0), axis=0) - 1
        best = np.minimum(best, cost.min(axis=0))
        cuts.append(choice)
    # follow the choices back from the last distinct length
    bounds, j = [], distinct - 1
    for choice in reversed(cuts):
        i = int(choice[j])
        if i < 0:
            continue
        bounds.append(i)
        j = i
    edges = np.array(sorted(bounds), dtype=np.int64)  # last index of each lower bucket
    return np.searchsorted(values[edges], lengths, side="left")


def _as_numpy(values: Sequence[int] | np.ndarray | Tensor) -> np.ndarray:
    if isinstance(values, Tensor):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=np.int64).reshape(-1)


#: cuDNN's number of the LSTM mode (``CUDNN_LSTM`` of ``cudnnRNNMode_t``; what
#: ``torch.backends.cudnn.rnn.get_cudnn_mode("LSTM")`` returns where cuDNN is present).
CUDNN_LSTM = 2


class DirectionLSTM(torch.nn.LSTM):
    """A one-layer bidirectional ``batch_first`` LSTM whose directions run as separate calls
    (:func:`lstm_direction`, :func:`run_bilstm`): on CUDA each direction's weights are kept
    in a flat buffer of their own, the layout cuDNN takes as it is.

    :meth:`torch.nn.LSTM.flatten_parameters` puts both directions in one buffer, which a
    call of one direction cannot use: cuDNN then warns that the "weights are not part of
    single contiguous chunk of memory" and copies them at every call. Parameters, their
    names and the state dict are those of :class:`torch.nn.LSTM`.
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__(input_size, hidden_size, num_layers=1, batch_first=True,
                         bidirectional=True)

    def flatten_calls(self) -> list[tuple[list[Tensor], tuple]] | None:
        """What :meth:`flatten_parameters` hands cuDNN: for each direction (left to right,
        then right to left) the arguments of ``torch._cudnn_rnn_flatten_weight``, its weights
        in the order of :func:`direction_weights` and ``(weights per direction, input size,
        cuDNN mode, hidden size, projection size, layers = 1, batch_first,
        bidirectional = False)``. ``None`` when the weights cannot share a buffer (one missing,
        several dtypes, two sharing memory). Pure: runs on any device."""
        weights = self._flat_weights
        if (len(weights) != len(self._flat_weights_names)
                or not all(isinstance(w, Tensor) for w in weights)
                or len({w.dtype for w in weights}) != 1
                or len({w.data_ptr() for w in weights}) != len(weights)):
            return None
        calls = []
        for suffix in ("", "_reverse"):
            group = direction_weights(self, suffix)
            calls.append((group, (len(group), self.input_size, CUDNN_LSTM, self.hidden_size,
                                  self.proj_size, 1, self.batch_first, False)))
        return calls

    def flatten_parameters(self) -> None:
        """Flatten each direction's weights into a cuDNN buffer of its own (CUDA only): the
        calls of :meth:`flatten_calls`, when cuDNN takes every weight."""
        calls = self.flatten_calls()
        if (calls is None or not torch._use_cudnn_rnn_flatten_weight()
                or not all(_cudnn_takes(w) for w in self._flat_weights)):
            return
        with torch.cuda.device_of(calls[0][0][0]), torch.no_grad():
            for weights, args in calls:
                torch._cudnn_rnn_flatten_weight(weights, *args)


def _cudnn_takes(weight: Tensor) -> bool:
    """Whether cuDNN can hold ``weight`` (a CUDA tensor it accepts)."""
    return weight.is_cuda and torch.backends.cudnn.is_acceptable(weight)


def direction_weights(lstm: torch.nn.LSTM, suffix: str) -> list[Tensor]:
    """The parameters of one direction (``suffix`` ``""`` or ``"_reverse"``) of a one-layer
    LSTM in the order its calls and cuDNN's flat buffer take them: ``weight_ih``,
    ``weight_hh``, then (with biases) ``bias_ih``, ``bias_hh``."""
    names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if lstm.bias else [])
    return [getattr(lstm, f"{name}_l0{suffix}") for name in names]


def lstm_direction(lstm: torch.nn.LSTM, x: Tensor, suffix: str, h0: Tensor | None = None
                   ) -> Tensor:
    """One direction (``suffix`` ``""`` or ``"_reverse"``) of a one-layer ``batch_first`` LSTM
    over the padded batch ``x`` from the state ``h0`` (zeros when ``None``); in int8 when the
    LSTM was quantised (:func:`docgraph.nn.quantized.quantize_int8`)."""
    if h0 is None:
        h0 = x.new_zeros(1, x.size(0), lstm.hidden_size)
    cells = getattr(lstm, "int8_cells", None)  # docgraph.nn.quantized.quantize_int8
    if cells is not None:
        h0 = h0.float()
        return torch.quantized_lstm(x.float(), (h0, h0), [cells[suffix == "_reverse"]],
                                    lstm.bias, 1, 0.0, False, False, True, dtype=torch.qint8,
                                    use_dynamic=True)[0]
    weights = direction_weights(lstm, suffix)
    out, _, _ = torch._VF.lstm(x, (h0, h0), weights, lstm.bias, 1, 0.0, lstm.training, False,
                               True)
    return out


def run_bilstm(lstm: torch.nn.LSTM, x: Tensor, layout: SequenceLayout,
               final_states: bool = False, reduce: str | None = None) -> Tensor:
    r"""Run a one-layer bidirectional ``batch_first`` LSTM over every sequence of ``layout``.

    Exact: each output equals running the LSTM on that sequence alone. Each bucket costs one
    gather and one LSTM call per direction; the right-to-left direction runs left to right
    over the sequences reversed within their lengths. Every gather is :func:`gather_rows`
    (a deterministic backward that sums repeated rows in parallel: the padding positions all
    read one row).

    Args:
        lstm: A one-layer bidirectional LSTM (``batch_first``).
        x: Source rows ``[R, D]`` (the sequences index into them).
        layout: Where the sequences lie in ``x``.
        final_states: Return ``[B, 2H]``, each sequence's final left-to-right state and the
            right-to-left state at its first position, instead of every position.
        reduce: ``"mean"`` or ``"sum"``: return ``[B, 2H]``, each sequence's mean (sum)
            output over its positions (summed in the padded buckets, no scatter).

    Returns:
        ``[M, 2H]``, the outputs at the real positions of all sequences in order (sequence by
        sequence), or ``[B, 2H]`` with ``final_states`` or ``reduce``.
    """
    if reduce not in (None, "mean", "sum"):
        raise ValueError(f"reduce must be None, 'mean' or 'sum', got {reduce!r}")
    hidden = lstm.hidden_size
    forward, reverse = [], []
    for bucket in layout.buckets:
        h0 = x.new_zeros(1, bucket.forward_index.size(0), hidden)
        out_f = lstm_direction(lstm, gather_rows(x, bucket.forward_index), "", h0)
        out_r = lstm_direction(lstm, gather_rows(x, bucket.reverse_index), "_reverse", h0)
        if reduce is not None:
            weights = bucket.mean_weights if reduce == "mean" else bucket.mean_weights > 0
            weights = weights.to(out_f.dtype).unsqueeze(2)  # bf16 under autocast
            forward.append((out_f * weights).sum(dim=1))
            reverse.append((out_r * weights).sum(dim=1))
        else:
            forward.append(out_f.reshape(-1, hidden))
            reverse.append(out_r.reshape(-1, hidden))
    if reduce is not None:
        rows_f = rows_r = layout.member_rows
    elif final_states:
        rows_f = rows_r = layout.last_rows
    else:
        rows_f, rows_r = layout.forward_positions, layout.reverse_positions
    if len(forward) == 1:
        return torch.cat([gather_rows(forward[0], rows_f), gather_rows(reverse[0], rows_r)],
                         dim=1)
    return torch.cat([gather_rows(torch.cat(forward), rows_f),
                      gather_rows(torch.cat(reverse), rows_r)], dim=1)


def segment_means(values: Tensor, layout: SequenceLayout) -> Tensor:
    """Mean of ``values`` ``[M, F]`` (real positions in order, as :func:`run_bilstm` returns
    them) over each sequence: ``[B, F]`` (ordered segment sums, deterministic on any device;
    :func:`run_bilstm` with ``reduce="mean"`` is cheaper where the outputs come from it)."""
    sums = segment_sum(values, layout.segment_offsets)
    return sums / layout.lengths.unsqueeze(1).to(values.dtype)
