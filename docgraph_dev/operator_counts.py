"""Operator counts of one training step and one tagging step (``scripts/benchmark.py --ops``).

A training step on a GPU is *launch-bound* when the host spends longer issuing kernels than
the device spends running them: then the step time follows the number of operators, not the
number of tokens. This module counts, with :mod:`torch.profiler` on the CPU, what a step
issues:

* **operators**: aten operator events whose parent event is not itself an aten operator
  (what the Python code and the autograd engine call directly; the kernels an operator runs
  inside itself are not counted again), over forward, backward and optimizer step;
* **synchronising operators**: those that make the host wait for the device on a GPU (a
  value read back to the host: ``_local_scalar_dense`` behind ``.item()`` / ``int()`` /
  ``bool()``, and the operators whose output size depends on the data: ``nonzero``,
  ``unique``, ...), counted once where one nests inside another. Not counted: the reads of
  the optimizer's step counters inside a fused optimizer kernel on the CPU (``_fused_adam_``
  reads its CPU step tensors on the host; on a GPU the counters live on the device and the
  kernel reads them there);
* **read-backs**: the Python calls that copy a tensor to the host (``.cpu()``,
  ``.to("cpu")`` (the string: ``.to(device)`` cannot be told from a copy to the device on a
  CPU run), ``.tolist()``, ``.item()``, ``bool()``/``int()``/``float()`` of a tensor,
  ``torch.equal``), seen by a :class:`~torch.overrides.TorchFunctionMode` with their call
  site: on a CPU they are no aten operator (``.cpu()`` of a CPU tensor is itself), on a GPU
  each one waits for the device;
* **accumulating index writes**: operators that add into their output at indices
  (:data:`ACCUMULATING_WRITES`: ``index_put``/``put_`` with ``accumulate=True``,
  ``index_add``, ``scatter_add``, ``scatter_reduce``, ``index_reduce``) and the autograd
  nodes whose backward is one (:data:`ACCUMULATING_BACKWARDS`: ``x[idx]``, ``gather``,
  ``index_select``, ...), at any depth, each write once; on CUDA they add with atomics or,
  for ``index_put``, sort and add the repeats of a row one after another;
* **non-deterministic**: operators that PyTorch's :func:`torch.use_deterministic_algorithms`
  documentation (:data:`DETERMINISM_DOCS`) lists as non-deterministic, with the entry that
  lists them (:data:`NONDETERMINISTIC`), at any depth;
* **cuDNN RNN calls**: the LSTM calls, which CUDA runs as cuDNN's RNN (:data:`CUDNN_RNN`).

What the CPU profile shows is what CUDA runs: a training step's code has no branch on the
device that computes differently (:func:`~docgraph.nn.layout.run_bilstm` makes the same calls
on both; the device tests left in the model decide input checks and where a plan is made),
so the counts hold for CUDA without a GPU. Autocast (``--precision bf16``) differs between
the devices only in which operators it casts (``aten::_to_copy``, deterministic).

:func:`run_operator_counts` counts every training mode of ``train.py`` (:func:`train_modes`):
the BiLSTM-CRF and GCDoc, every model switch and every non-default choice of a model
setting (``--fast``, ``--window-encoding per_sentence``, ``--constrained-decoding``,
``--precision bf16``, the ablations), contextual features (``--lm``), the unpruned warm-up
and SGD.

The counts are properties of the code and the batch, not of the machine: the same batch
gives the same counts on any CPU.
"""

from __future__ import annotations

import datetime as _dt
import platform
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.profiler import ProfilerActivity, profile

from docgraph.batching.loader import collate
from docgraph.config import TrainConfig
from docgraph.data.registry import load_dataset
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.training.loop import clip_groups, make_optimizer, training_step
from docgraph_dev.batches import select_batch_indices

__all__ = [
    "ACCUMULATING_BACKWARDS",
    "ACCUMULATING_WRITES",
    "NONDETERMINISTIC",
    "SYNCHRONISING",
    "TARGETS",
    "OperatorCount",
    "OperatorCountOptions",
    "count_operators",
    "run_operator_counts",
    "train_modes",
]

#: Operators that wait for the device: a scalar read back, or an output whose size depends on
#: the data.
SYNCHRONISING = frozenset({
    "aten::_local_scalar_dense",
    "aten::nonzero",
    "aten::nonzero_static",
    "aten::unique_dim",
    "aten::_unique",
    "aten::_unique2",
    "aten::unique_consecutive",
    "aten::unique_dim_consecutive",
    "aten::masked_select",
    "aten::_cpu_to_host",
})


_FUSED_OPTIMIZER = "aten::_fused_"

#: The source of :data:`NONDETERMINISTIC`: the documentation of
#: :func:`torch.use_deterministic_algorithms` (PyTorch 2.13).
DETERMINISM_DOCS = "https://pytorch.org/docs/2.13/generated/torch.use_deterministic_algorithms.html"

#: aten operators (and autograd nodes) that :data:`DETERMINISM_DOCS` lists as
#: non-deterministic, each with the entry of the list that names it: those that only the
#: deterministic mode makes deterministic and those without a deterministic implementation.
#: Taken by name, conservatively (whatever the device, the dtype, the ``src`` or the mode the
#: entry restricts itself to), except ``cumsum``, counted when its input or its ``dtype``
#: argument is not an integer type (:func:`_documented`). Not matched, for want of a name: ``bmm``
#: of sparse and dense tensors and ``resize_`` of a quantized tensor (no sparse or quantized
#: tensor takes part in a step).
NONDETERMINISTIC: dict[str, str] = {
    **dict.fromkeys(("aten::convolution", "aten::convolution_backward"),
                    "torch.nn.Conv1d/2d/3d, ConvTranspose1d/2d/3d when called on CUDA tensor"),
    **dict.fromkeys(("aten::replication_pad1d_backward", "aten::replication_pad2d_backward",
                     "aten::replication_pad3d_backward"),
                    "torch.nn.ReplicationPad1d/2d/3d when attempting to differentiate a CUDA "
                    "tensor"),
    **dict.fromkeys(("IndexBackward0", "UnsafeIndexBackward0"),
                    "torch.Tensor.__getitem__ when attempting to differentiate a CPU tensor and "
                    "the index is a list of tensors"),
    **dict.fromkeys(("aten::index_put", "aten::index_put_", "aten::_index_put_impl_",
                     "aten::_unsafe_index_put"),
                    "torch.Tensor.index_put with accumulate=False; with accumulate=True when "
                    "called on a CPU tensor"),
    **dict.fromkeys(("aten::put", "aten::put_", "TakeBackward0"),
                    "torch.Tensor.put_ (accumulate=True on a CPU tensor; otherwise no "
                    "deterministic implementation)"),
    **dict.fromkeys(("aten::scatter_add", "aten::scatter_add_"),
                    "torch.Tensor.scatter_add_ when called on a CUDA tensor"),
    **dict.fromkeys(("aten::gather_backward", "GatherBackward0"),
                    "torch.gather when called on a CUDA tensor that requires grad"),
    **dict.fromkeys(("aten::index_add", "aten::index_add_"),
                    "torch.index_add when called on CUDA tensor"),
    **dict.fromkeys(("aten::index_select_backward", "IndexSelectBackward0"),
                    "torch.index_select when attempting to differentiate a CUDA tensor (and "
                    "torch.repeat_interleave, differentiated through index_select)"),
    **dict.fromkeys(("aten::index_copy", "aten::index_copy_"),
                    "torch.Tensor.index_copy when called on a CPU or CUDA tensor"),
    **dict.fromkeys(("aten::scatter", "aten::scatter_"),
                    "torch.Tensor.scatter when src type is Tensor and called on CUDA tensor"),
    **dict.fromkeys(("aten::scatter_reduce", "aten::scatter_reduce_"),
                    "torch.Tensor.scatter_reduce when called on CUDA tensor"),
    "aten::max_pool3d_with_indices_backward":
        "torch.nn.MaxPool3d when attempting to differentiate a CUDA tensor",
    "aten::avg_pool3d_backward": "torch.nn.AvgPool3d when attempting to differentiate a CUDA "
                                 "tensor",
    "aten::_adaptive_avg_pool2d_backward": "torch.nn.AdaptiveAvgPool2d when attempting to "
                                           "differentiate a CUDA tensor",
    "aten::_adaptive_avg_pool3d_backward": "torch.nn.AdaptiveAvgPool3d when attempting to "
                                           "differentiate a CUDA tensor",
    "aten::adaptive_max_pool2d_backward": "torch.nn.AdaptiveMaxPool2d when attempting to "
                                          "differentiate a CUDA tensor",
    **dict.fromkeys(("aten::fractional_max_pool2d_backward",
                     "aten::fractional_max_pool3d_backward"),
                    "torch.nn.FractionalMaxPool2d/3d when attempting to differentiate a CUDA "
                    "tensor"),
    **dict.fromkeys(("aten::max_unpool2d", "aten::max_unpool3d"),
                    "torch.nn.MaxUnpool1d/2d/3d"),
    **dict.fromkeys(("aten::upsample_linear1d_backward", "aten::upsample_bilinear2d_backward",
                     "aten::upsample_bicubic2d_backward", "aten::upsample_trilinear3d_backward"),
                    "torch.nn.functional.interpolate (linear, bilinear, bicubic, trilinear) "
                    "when attempting to differentiate a CUDA tensor"),
    **dict.fromkeys(("aten::reflection_pad1d_backward", "aten::reflection_pad2d_backward",
                     "aten::reflection_pad3d_backward"),
                    "torch.nn.ReflectionPad1d/2d/3d when attempting to differentiate a CUDA "
                    "tensor"),
    **dict.fromkeys(("aten::nll_loss_forward", "aten::nll_loss2d_forward"),
                    "torch.nn.NLLLoss when called on a CUDA tensor"),
    "aten::_ctc_loss_backward": "torch.nn.CTCLoss when attempting to differentiate a CUDA "
                                "tensor",
    **dict.fromkeys(("aten::_embedding_bag_backward", "aten::_embedding_bag_dense_backward",
                     "EmbeddingBagBackward0"),
                    "torch.nn.EmbeddingBag when attempting to differentiate a CUDA tensor when "
                    "mode='max'"),
    "aten::histc": "torch.histc when called on a CUDA tensor",
    "aten::bincount": "torch.bincount when called on a CUDA tensor and weights tensor is given",
    "aten::median": "torch.median with indices output when called on a CUDA tensor",
    **dict.fromkeys(("aten::grid_sampler_2d_backward", "aten::grid_sampler_3d_backward"),
                    "torch.nn.functional.grid_sample when attempting to differentiate a CUDA "
                    "tensor"),
    **dict.fromkeys(("aten::cumsum", "aten::cumsum_"),
                    "torch.cumsum when called on a CUDA tensor when dtype is floating point or "
                    "complex"),
}

#: Operators that add into their output at indices (several updates may hit one element):
#: on CUDA with atomics or a serialised sort, on the CPU in parallel. ``index_put`` and
#: ``put_`` count only with ``accumulate=True``.
ACCUMULATING_WRITES = frozenset({
    "aten::index_add", "aten::index_add_", "aten::scatter_add", "aten::scatter_add_",
    "aten::scatter_reduce", "aten::scatter_reduce_", "aten::index_reduce",
    "aten::index_reduce_", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_",
    "aten::_unsafe_index_put", "aten::put", "aten::put_",
})

#: The autograd nodes whose backward is an accumulating write: an advanced-index read
#: ``x[idx]`` (``index_put`` with ``accumulate=True``), ``gather`` (``scatter_add``),
#: ``index_select`` and ``repeat_interleave`` (``index_add``), ``take`` (``put_``),
#: ``embedding_bag``.
ACCUMULATING_BACKWARDS = frozenset({
    "IndexBackward0", "UnsafeIndexBackward0", "GatherBackward0", "IndexSelectBackward0",
    "TakeBackward0", "EmbeddingBagBackward0", "aten::gather_backward",
    "aten::index_select_backward", "aten::_embedding_bag_backward",
})

#: Position of the ``accumulate`` argument of the operators that have one.
_ACCUMULATE_ARG = {"aten::index_put": 3, "aten::index_put_": 3, "aten::_index_put_impl_": 3,
                   "aten::_unsafe_index_put": 3, "aten::put": 3, "aten::put_": 3}

#: Operators that run on CUDA as cuDNN's RNN (forward and backward): deterministic when
#: ``CUBLAS_WORKSPACE_CONFIG`` is set (the warning of :class:`torch.nn.LSTM`'s
#: documentation), which ``--deterministic`` sets. Counted apart, not as non-deterministic.
CUDNN_RNN = frozenset({"aten::lstm"})

#: Python-level calls that copy a tensor to the host (a device read-back on a GPU).
READ_BACK_CALLS = frozenset({"cpu", "tolist", "item", "__bool__", "__int__", "__float__",
                             "__index__", "equal"})


@dataclass
class OperatorCount:
    """Operators issued by one call of a step function.

    Attributes:
        operators: Top-level aten operators (parent not an aten operator).
        synchronising: Synchronising operators (outermost only).
        by_name: Top-level operators by name, most frequent first.
        sync_by_name: Synchronising operators by name.
        accumulating_by_name: Accumulating writes by the name of their outermost event (an
            autograd node of :data:`ACCUMULATING_BACKWARDS` or an operator of
            :data:`ACCUMULATING_WRITES`; one write counts once however deep it nests).
        nondeterministic_by_name: Events (any depth) of :data:`NONDETERMINISTIC` by name.
        read_backs_by_site: Read-back calls (:data:`READ_BACK_CALLS`) by ``"call @ file:line"``.
        cudnn_rnn_calls: Events of :data:`CUDNN_RNN` (cuDNN's RNN on CUDA).
    """

    operators: int
    synchronising: int
    by_name: dict[str, int] = field(default_factory=dict)
    sync_by_name: dict[str, int] = field(default_factory=dict)
    accumulating_by_name: dict[str, int] = field(default_factory=dict)
    nondeterministic_by_name: dict[str, int] = field(default_factory=dict)
    read_backs_by_site: dict[str, int] = field(default_factory=dict)
    cudnn_rnn_calls: int = 0

    @property
    def accumulating_writes(self) -> int:
        """Accumulating index writes."""
        return sum(self.accumulating_by_name.values())

    @property
    def nondeterministic(self) -> int:
        """Events of documented non-deterministic operators."""
        return sum(self.nondeterministic_by_name.values())

    @property
    def read_backs(self) -> int:
        """Read-back calls."""
        return sum(self.read_backs_by_site.values())

    def to_dict(self, top: int = 15) -> dict[str, Any]:
        """JSON form with the ``top`` most frequent operators."""
        return {
            "operators": self.operators,
            "synchronising": self.synchronising,
            "accumulating_index_writes": self.accumulating_writes,
            "nondeterministic": self.nondeterministic,
            "read_backs": self.read_backs,
            "cudnn_rnn_calls": self.cudnn_rnn_calls,
            "most_frequent": dict(list(self.by_name.items())[:top]),
            "synchronising_by_name": self.sync_by_name,
            "accumulating_index_writes_by_name": self.accumulating_by_name,
            "nondeterministic_by_name": {
                name: {"events": n, "documented_as": NONDETERMINISTIC[name]}
                for name, n in self.nondeterministic_by_name.items()},
            "read_backs_by_site": self.read_backs_by_site,
        }


def _is_aten(event: Any) -> bool:
    return event.name.startswith("aten::")


class _ReadBacks(TorchFunctionMode):
    """Counts the read-back calls of :data:`READ_BACK_CALLS` (and ``.to`` a CPU device) by
    call site: the innermost frame of the ``docgraph`` package."""

    def __init__(self) -> None:
        super().__init__()
        self.sites: Counter[str] = Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[override]
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in READ_BACK_CALLS or (name == "to" and _to_host(args[1:], kwargs)):
            self.sites[f"{name} @ {_call_site()}"] += 1
        return func(*args, **kwargs)


def _to_host(args: tuple, kwargs: dict) -> bool:
    # Only ``.to("cpu")`` spelt out: on a CPU run ``.to(device)`` of the model's device is
    # the same call as a read-back, and on a GPU it is a copy *to* the device.
    target = kwargs.get("device", args[0] if args else None)
    return isinstance(target, str) and torch.device(target).type == "cpu"


def _call_site() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename.replace("\\", "/")
        if "/docgraph/" in path and "/tools/" not in path:
            return f"{path.rsplit('/docgraph/', 1)[1]}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def _accumulates(event: Any) -> bool:
    """Whether ``event`` is an accumulating write (:data:`ACCUMULATING_WRITES` with
    ``accumulate=True`` where it has the argument; unknown counts) or a node of
    :data:`ACCUMULATING_BACKWARDS`."""
    if event.name in ACCUMULATING_BACKWARDS:
        return True
    if event.name not in ACCUMULATING_WRITES:
        return False
    position = _ACCUMULATE_ARG.get(event.name)
    if position is None:
        return True
    inputs = getattr(event, "concrete_inputs", None) or []
    return len(inputs) <= position or inputs[position] is not False


#: The profiler's names of the integer dtypes (``input_dtypes`` of an event).
_INTEGER_DTYPES = frozenset({"bool", "signed char", "unsigned char", "short int", "int",
                             "long int"})


def _documented(event: Any) -> bool:
    """Whether ``event`` is one of :data:`NONDETERMINISTIC` (``cumsum`` only of a floating or
    complex tensor, or with a ``dtype`` argument)."""
    if event.name not in NONDETERMINISTIC:
        return False
    if event.name in ("aten::cumsum", "aten::cumsum_"):
        dtypes = getattr(event, "input_dtypes", None) or [""]
        inputs = getattr(event, "concrete_inputs", None) or []
        cast = len(inputs) > 2 and inputs[2] is not None
        return cast or dtypes[0] not in _INTEGER_DTYPES
    return True


def _inside(event: Any, test: Callable[[Any], bool]) -> bool:
    """Whether an ancestor of ``event`` passes ``test``."""
    ancestor = event.cpu_parent
    while ancestor is not None:
        if test(ancestor):
            return True
        ancestor = ancestor.cpu_parent
    return False


def count_operators(step: Callable[[], object]) -> OperatorCount:
    """Profile one call of ``step`` (on the CPU) and count its operators.

    Args:
        step: The work to count, e.g. a closure running forward, backward and optimizer step.
    """
    read_backs = _ReadBacks()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof, read_backs:
        step()
    top: Counter[str] = Counter()
    sync: Counter[str] = Counter()
    nondeterministic: Counter[str] = Counter()
    writes: Counter[str] = Counter()
    rnn = 0
    for event in prof.events():
        if _documented(event):
            nondeterministic[event.name] += 1
        if _accumulates(event) and not _inside(event, _accumulates):
            writes[event.name] += 1
        if not _is_aten(event):
            continue
        parent = event.cpu_parent
        if parent is None or not _is_aten(parent):
            top[event.name] += 1
        if event.name in CUDNN_RNN:
            rnn += 1
        if event.name in SYNCHRONISING and not _inside(
                event, lambda a: a.name in SYNCHRONISING or a.name.startswith(_FUSED_OPTIMIZER)):
            sync[event.name] += 1
    return OperatorCount(
        operators=sum(top.values()),
        synchronising=sum(sync.values()),
        by_name=dict(top.most_common()),
        sync_by_name=dict(sync.most_common()),
        accumulating_by_name=dict(writes.most_common()),
        nondeterministic_by_name=dict(nondeterministic.most_common()),
        read_backs_by_site=dict(read_backs.sites.most_common()),
        cudnn_rnn_calls=rnn,
    )


#: Targets: operators of a training step of about 4000 tokens and the growth allowed to a
#: step of about 16000 tokens (lean steps, the BiLSTM-CRF and GCDoc); in every mode,
#: synchronising operators and read-backs of a training step and a tagging batch, and
#: accumulating index writes and documented non-deterministic operators of a training step.
TARGETS = {"gcdoc_train_operators": 2500, "baseline_train_operators": 1200,
           "train_synchronising": 5, "tag_synchronising": 5, "growth_16k_over_4k": 1.2,
           "train_read_backs": 0, "tag_read_backs": 1,
           "train_accumulating_index_writes": 0, "train_nondeterministic": 0}

#: The training settings of the counted steps (the presets'), under a mode's own.
COUNTED_TRAIN: dict[str, Any] = {"optimizer": "adam", "lr": 0.002, "clip_norm": 5.0}

#: Size of the contextual features of the ``lm`` mode (all-MiniLM-L6-v2's).
LM_DIM = 384

#: The modes counted at every budget (the others at the smallest): their operator counts
#: have targets.
MAIN_MODES = ("baseline", "gcdoc")


def train_modes() -> dict[str, dict[str, dict[str, Any]]]:
    """Every training mode of ``train.py``: name -> the settings it changes, nested like a
    preset (``{"model": {...}, "train": {...}}``).

    GCDoc (``gcdoc``, the defaults), every switch of ``train.py`` that sets model fields
    (``baseline``, ``fast``, ``constrained-decoding``, the ablations), every non-default
    choice of a model setting and every other optimizer (``precision=bf16``,
    ``window-encoding=per_sentence``, ...), the unpruned warm-up (``unpruned-epochs=1``) and
    contextual features (``lm``, :data:`LM_DIM` random features). The training settings
    are :data:`COUNTED_TRAIN` unless the mode changes them.
    """
    from docgraph.cli.arguments import SWITCHES, value_flags

    modes: dict[str, dict[str, dict[str, Any]]] = {"gcdoc": {}}
    for flag, values in SWITCHES.items():
        if "model" in values:
            modes[flag.lstrip("-")] = {"model": dict(values["model"])}
    defaults = {"model": GCDocConfig(), "train": TrainConfig(**COUNTED_TRAIN)}
    for flag, found in value_flags().items():
        choices = found.setting.rule.choices
        if found.section in defaults and choices and (
                found.section == "model" or found.key == "optimizer"):
            default = getattr(defaults[found.section], found.key)
            for value in choices:
                if value != default:
                    modes[f"{flag.lstrip('-')}={value}"] = {found.section: {found.key: value}}
    modes["unpruned-epochs=1"] = {"model": {"unpruned_epochs": 1}}
    modes["lm"] = {"model": {"lm_dim": LM_DIM}}
    return modes


@dataclass
class OperatorCountOptions:
    """What :func:`run_operator_counts` measures.

    Args:
        dataset: Registry name.
        data_dir: Directory of the split files.
        split: The split whose batches are counted (the training batches by default).
        batch_tokens: Token budgets of the counted batches (:data:`MAIN_MODES` at each, the
            other modes at the smallest).
        seed: Seed of the sampler's shuffle (which batch is taken) and of the models.
        model_overrides: :class:`~docgraph.model.GCDocConfig` fields set on every model
            (e.g. tiny sizes in tests; the counts of record use the paper's settings).
        modes: The modes counted (names of :func:`train_modes`; default: all).
    """

    dataset: str = "ontonotes"
    data_dir: str | None = None
    split: str = "train"
    batch_tokens: tuple[int, ...] = (4000, 16000)
    seed: int = 0
    model_overrides: dict[str, Any] = field(default_factory=dict)
    modes: tuple[str, ...] | None = None


def _with_features(graphs: list, indices: list[int], dim: int, seed: int) -> list:
    """``graphs`` with the graphs at ``indices`` replaced by copies holding random contextual
    features ``lm`` of size ``dim``."""
    generator = torch.Generator().manual_seed(seed)
    out = list(graphs)
    for i in indices:
        out[i] = graphs[i].clone()
        out[i].lm = torch.randn(int(graphs[i].num_nodes), dim, generator=generator)
    return out


def run_operator_counts(options: OperatorCountOptions, command: str = "") -> dict[str, Any]:
    """Count the operators of one training step and one tagging step of every training mode
    (:func:`train_modes`, the paper's settings otherwise) on real batches of each size, as
    the trainer runs them (:func:`~docgraph.batching.loader.collate` with the host-side plan,
    then :func:`~docgraph.training.loop.training_step` with clipping and the fused Adam of the
    presets, after :meth:`~docgraph.model.GCDoc.set_epoch` of the first epoch; tagging is
    :meth:`~docgraph.model.GCDoc.predict`). The counted batch of each budget is the longest
    of the first 20 of the training sampler's shuffled epoch
    (:func:`~docgraph_dev.batches.select_batch_indices`).

    Returns:
        The common fields and ``modes``: for each mode its ``settings``, ``rows`` (one per
        budget) and ``checks`` (:func:`check_targets`).
    """
    modes = train_modes()
    names = list(modes) if options.modes is None else list(options.modes)
    unknown = [name for name in names if name not in modes]
    if unknown:
        raise ValueError(f"unknown modes {unknown}; expected some of {list(modes)}")
    docs = load_dataset(options.dataset, options.data_dir, splits=(options.split,))[
        options.split]
    vocabs = Vocabularies.build(docs)
    graphs = documents_to_graphs(docs, vocabs, GraphConfig())
    lengths = [int(g.num_nodes) for g in graphs]
    device = torch.device("cpu")
    budgets = sorted(options.batch_tokens)
    chosen = {budget: max(select_batch_indices(lengths, budget, 20, options.seed),
                          key=lambda b: sum(lengths[i] for i in b)) for budget in budgets}
    counted_modes: dict[str, Any] = {}
    for name in names:
        settings = modes[name]
        config = GCDocConfig(**{**options.model_overrides, **settings.get("model", {})})
        train = TrainConfig(**{**COUNTED_TRAIN, **settings.get("train", {})})
        rows = []
        for budget in budgets if name in MAIN_MODES else budgets[:1]:
            indices = chosen[budget]
            source = (_with_features(graphs, indices, config.lm_dim, options.seed)
                      if config.lm_dim else graphs)
            torch.manual_seed(options.seed)
            model = build_model(config, vocabs)
            model.set_epoch(1)
            batch = collate(source, indices, device, model)
            optimizer = make_optimizer(model, train)
            groups = clip_groups(model)

            def step(model=model, optimizer=optimizer, batch=batch, groups=groups,
                     train=train) -> None:
                training_step(model, optimizer, batch, groups, train.clip_norm)

            step()  # the optimizer's state is created on the first step
            counted = count_operators(step)
            tagged = count_operators(lambda model=model, batch=batch: model.predict(batch))
            rows.append({
                "batch_tokens": budget, "tokens": int(batch.num_nodes),
                "sentences": int(batch.sent_len.numel()),
                "longest_sentence": int(batch.sent_len.max()),
                "train": counted.to_dict(), "tag": tagged.to_dict(),
            })
        counted_modes[name] = {"settings": settings, "rows": rows,
                               "checks": check_targets(name, rows)}
    return {
        "dataset": options.dataset, "split": options.split, "seed": options.seed,
        "model_overrides": dict(options.model_overrides),
        "modes": counted_modes, "targets": TARGETS,
        "met": all(c["met"] for m in counted_modes.values() for c in m["checks"].values()),
        "definition": ("operators: aten operator events whose parent event is not an aten "
                       "operator (forward, backward, clipping and optimizer step); "
                       "synchronising: _local_scalar_dense, nonzero, unique*, masked_select "
                       "(outermost; not the CPU fused optimizer's reads of its CPU step "
                       "counters); accumulating index writes: index_put/put_ with "
                       "accumulate=True, index_add, scatter_add, scatter_reduce, "
                       "index_reduce and the autograd nodes whose backward is one (x[idx], "
                       "gather, index_select, take, embedding_bag), each once; "
                       "non-deterministic: the operators listed as such by "
                       f"{DETERMINISM_DOCS}, by name (see nondeterministic_by_name)"),
        "nondeterministic_source": DETERMINISM_DOCS,
        "torch": torch.__version__, "python": platform.python_version(),
        "date": _dt.datetime.now().isoformat(timespec="seconds"), "command": command,
    }


def check_targets(mode: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each of :data:`TARGETS` that applies to ``mode`` against its counted rows: the value
    and whether it is met."""
    checks: dict[str, Any] = {}

    def check(key: str, value: float, target: float) -> None:
        checks[key] = {"value": value, "target": target, "met": value <= target}

    if mode in MAIN_MODES:
        by = {r["batch_tokens"]: r for r in rows}
        ops = by[min(by)]["train"]["operators"]
        check("train_operators", ops, TARGETS[f"{mode}_train_operators"])
        if len(by) > 1:
            check("growth", round(by[max(by)]["train"]["operators"] / ops, 3),
                  TARGETS["growth_16k_over_4k"])
    for kind in ("train", "tag"):
        for field_name in ("synchronising", "read_backs"):
            check(f"{kind}_{field_name}", max(r[kind][field_name] for r in rows),
                  TARGETS[f"{kind}_{field_name}"])
    for field_name in ("accumulating_index_writes", "nondeterministic"):
        check(f"train_{field_name}", max(r["train"][field_name] for r in rows),
              TARGETS[f"train_{field_name}"])
    return checks


def format_counts(result: dict[str, Any]) -> str:
    """A plain-text table of a :func:`run_operator_counts` result."""
    lines = [f"{result['dataset']} {result['split']}: per step, operators (synchronising, "
             "read-backs); training: accumulating index writes, non-deterministic operators, "
             "cuDNN RNN calls",
             f"{'mode':<30} {'budget':>6} {'tokens':>6} {'train':>16} {'writes':>6} "
             f"{'nondet':>6} {'rnn':>4} {'tag':>14}"]
    for name, mode in result["modes"].items():
        for r in mode["rows"]:
            train, tag = r["train"], r["tag"]
            lines.append(
                f"{name:<30} {r['batch_tokens']:>6} {r['tokens']:>6} "
                f"{train['operators']:>6} ({train['synchronising']:>2}, "
                f"{train['read_backs']:>2}) {train['accumulating_index_writes']:>6} "
                f"{train['nondeterministic']:>6} {train['cudnn_rnn_calls']:>4} "
                f"{tag['operators']:>5} ({tag['synchronising']:>2}, {tag['read_backs']:>2})")
    for name, mode in result["modes"].items():
        for key, check in mode["checks"].items():
            if not check["met"] or name in MAIN_MODES:
                lines.append(f"{name} {key}: {check['value']} (target {check['target']}) "
                             f"{'met' if check['met'] else 'NOT met'}")
        for r in mode["rows"]:
            for kind in ("accumulating_index_writes_by_name", "nondeterministic_by_name"):
                if r["train"][kind]:
                    lines.append(f"{name} {r['batch_tokens']} {kind}: "
                                 f"{sorted(r['train'][kind])}")
    lines.append("every target met" if result["met"] else "SOME TARGETS NOT MET")
    return "\n".join(lines)
