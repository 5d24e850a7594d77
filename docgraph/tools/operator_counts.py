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
* **accumulating index writes**: ``aten::_index_put_impl_`` events (at any depth), the
  backward of an advanced-indexing gather ``x[idx]``; on CUDA its
  ``indexing_backward_kernel`` adds the repeats of a row one after another;
* **non-deterministic on CUDA**: operators that PyTorch's
  :func:`torch.use_deterministic_algorithms` documentation lists as non-deterministic on
  CUDA (:data:`NONDETERMINISTIC_ON_CUDA`), at any depth. The CPU profile names the operators
  a GPU would run, so the count holds for CUDA without a GPU.

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
from docgraph.tools.batches import select_batch_indices
from docgraph.training.loop import clip_groups, make_optimizer, training_step

__all__ = [
    "SYNCHRONISING",
    "TARGETS",
    "OperatorCount",
    "OperatorCountOptions",
    "count_operators",
    "run_operator_counts",
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

#: aten operators that ``torch.use_deterministic_algorithms``'s documentation (PyTorch 2.13)
#: lists as non-deterministic on CUDA: those that only the deterministic mode makes
#: deterministic (most of them by falling back to the sorted, slow ``index_put_``) and those
#: without a deterministic CUDA implementation. Taken by name, conservatively: ``scatter_``
#: and ``cumsum`` are listed whatever their arguments (the documentation limits them to a
#: tensor ``src`` and floating dtypes), ``embedding_bag``'s backward whatever its mode.
NONDETERMINISTIC_ON_CUDA = frozenset({
    "aten::index_add", "aten::index_add_",
    "aten::index_select_backward",  # index_select differentiated on CUDA
    "aten::gather_backward",  # gather of a CUDA tensor that requires grad
    "aten::scatter_add", "aten::scatter_add_",
    "aten::scatter", "aten::scatter_",
    "aten::scatter_reduce", "aten::scatter_reduce_",
    "aten::index_copy", "aten::index_copy_",
    "aten::put", "aten::put_",
    "aten::nll_loss_forward", "aten::nll_loss2d_forward",
    "aten::_embedding_bag_backward", "aten::_embedding_bag_dense_backward",
    "aten::cumsum", "aten::cumsum_",
    "aten::histc", "aten::bincount", "aten::median",
    "aten::grid_sampler_2d_backward", "aten::grid_sampler_3d_backward",
    "aten::_ctc_loss_backward",
    "aten::avg_pool3d_backward", "aten::_adaptive_avg_pool2d_backward",
    "aten::_adaptive_avg_pool3d_backward", "aten::adaptive_max_pool2d_backward",
    "aten::max_pool3d_with_indices_backward", "aten::fractional_max_pool2d_backward",
    "aten::fractional_max_pool3d_backward", "aten::max_unpool2d", "aten::max_unpool3d",
    "aten::reflection_pad1d_backward", "aten::reflection_pad2d_backward",
    "aten::reflection_pad3d_backward", "aten::replication_pad1d_backward",
    "aten::replication_pad2d_backward", "aten::replication_pad3d_backward",
    "aten::upsample_linear1d_backward", "aten::upsample_bilinear2d_backward",
    "aten::upsample_bicubic2d_backward", "aten::upsample_trilinear3d_backward",
})

#: The backward of ``x[idx]``: an accumulating index write.
ACCUMULATING_WRITE = "aten::_index_put_impl_"

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
        accumulating_writes: ``aten::_index_put_impl_`` events (any depth).
        nondeterministic_by_name: Events of :data:`NONDETERMINISTIC_ON_CUDA` by name.
        read_backs_by_site: Read-back calls (:data:`READ_BACK_CALLS`) by ``"call @ file:line"``.
    """

    operators: int
    synchronising: int
    by_name: dict[str, int] = field(default_factory=dict)
    sync_by_name: dict[str, int] = field(default_factory=dict)
    accumulating_writes: int = 0
    nondeterministic_by_name: dict[str, int] = field(default_factory=dict)
    read_backs_by_site: dict[str, int] = field(default_factory=dict)

    @property
    def nondeterministic(self) -> int:
        """Events of operators non-deterministic on CUDA."""
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
            "nondeterministic_on_cuda": self.nondeterministic,
            "read_backs": self.read_backs,
            "most_frequent": dict(list(self.by_name.items())[:top]),
            "synchronising_by_name": self.sync_by_name,
            "nondeterministic_on_cuda_by_name": self.nondeterministic_by_name,
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


def count_operators(step: Callable[[], object]) -> OperatorCount:
    """Profile one call of ``step`` (on the CPU) and count its operators.

    Args:
        step: The work to count, e.g. a closure running forward, backward and optimizer step.
    """
    read_backs = _ReadBacks()
    with profile(activities=[ProfilerActivity.CPU]) as prof, read_backs:
        step()
    top: Counter[str] = Counter()
    sync: Counter[str] = Counter()
    nondeterministic: Counter[str] = Counter()
    writes = 0
    for event in prof.events():
        if not _is_aten(event):
            continue
        parent = event.cpu_parent
        if parent is None or not _is_aten(parent):
            top[event.name] += 1
        if event.name == ACCUMULATING_WRITE:
            writes += 1
        if event.name in NONDETERMINISTIC_ON_CUDA:
            nondeterministic[event.name] += 1
        if event.name in SYNCHRONISING:
            ancestor, nested = parent, False
            while ancestor is not None:
                if ancestor.name in SYNCHRONISING or ancestor.name.startswith(_FUSED_OPTIMIZER):
                    nested = True
                    break
                ancestor = ancestor.cpu_parent
            if not nested:
                sync[event.name] += 1
    return OperatorCount(
        operators=sum(top.values()),
        synchronising=sum(sync.values()),
        by_name=dict(top.most_common()),
        sync_by_name=dict(sync.most_common()),
        accumulating_writes=writes,
        nondeterministic_by_name=dict(nondeterministic.most_common()),
        read_backs_by_site=dict(read_backs.sites.most_common()),
    )


def training_step_counts(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                         batch: Any, step: Callable[..., object]) -> OperatorCount:
    """Operators of ``step(model, optimizer, batch)`` after one warm-up call (lazy state such
    as Adam's moments is created on the first step and would count once only)."""
    step(model, optimizer, batch)
    return count_operators(lambda: step(model, optimizer, batch))


#: Targets: operators of a training step of about 4000 tokens and the growth allowed to a
#: step of about 16000 tokens (lean steps); synchronising operators and read-backs of a
#: training step and a tagging batch; accumulating index writes and operators
#: non-deterministic on CUDA in a training step (deterministic gathers).
TARGETS = {"gcdoc_train_operators": 2500, "baseline_train_operators": 1200,
           "train_synchronising": 5, "tag_synchronising": 5, "growth_16k_over_4k": 1.2,
           "train_read_backs": 0, "tag_read_backs": 1,
           "train_accumulating_index_writes": 2, "train_nondeterministic_on_cuda": 0}


@dataclass
class OperatorCountOptions:
    """What :func:`run_operator_counts` measures.

    Args:
        dataset: Registry name.
        data_dir: Directory of the split files.
        split: The split whose batches are counted (the training batches by default).
        batch_tokens: Token budgets of the counted batches.
        seed: Seed of the sampler's shuffle (which batch is taken) and of the models.
        model_overrides: :class:`~docgraph.model.GCDocConfig` fields set on both models
            (e.g. tiny sizes in tests; the counts of record use the paper's settings).
    """

    dataset: str = "ontonotes"
    data_dir: str | None = None
    split: str = "train"
    batch_tokens: tuple[int, ...] = (4000, 16000)
    seed: int = 0
    model_overrides: dict[str, Any] = field(default_factory=dict)


def run_operator_counts(options: OperatorCountOptions, command: str = "") -> dict[str, Any]:
    """Count the operators of one training step and one tagging step of the BiLSTM-CRF and
    GCDoc (the paper's settings) on real batches of each size, as the trainer runs them
    (:func:`~docgraph.batching.loader.collate` with the host-side plan, then
    :func:`~docgraph.training.loop.training_step` with clipping and the fused Adam of the presets;
    tagging is :meth:`~docgraph.model.GCDoc.predict`). The counted batch of each budget is
    the longest of the first 20 of the training sampler's shuffled epoch
    (:func:`~docgraph.tools.batches.select_batch_indices`)."""
    docs = load_dataset(options.dataset, options.data_dir, splits=(options.split,))[
        options.split]
    vocabs = Vocabularies.build(docs)
    graphs = documents_to_graphs(docs, vocabs, GraphConfig())
    lengths = [int(g.num_nodes) for g in graphs]
    train = TrainConfig(optimizer="adam", lr=0.002, clip_norm=5.0)
    device = torch.device("cpu")
    rows: list[dict[str, Any]] = []
    for budget in options.batch_tokens:
        indices = max(select_batch_indices(lengths, budget, 20, options.seed),
                      key=lambda b: sum(lengths[i] for i in b))
        extra = options.model_overrides
        for name, config in (("baseline", GCDocConfig.baseline(**extra)),
                             ("gcdoc", GCDocConfig(**extra))):
            torch.manual_seed(options.seed)
            model = build_model(config, vocabs)
            batch = collate(graphs, indices, device, model)
            optimizer = make_optimizer(model, train)
            groups = clip_groups(model)

            def step(model=model, optimizer=optimizer, batch=batch, groups=groups) -> None:
                training_step(model, optimizer, batch, groups, train.clip_norm)

            step()  # the optimizer's state is created on the first step
            counted = count_operators(step)
            tagged = count_operators(lambda model=model, batch=batch: model.predict(batch))
            rows.append({
                "model": name, "batch_tokens": budget, "tokens": int(batch.num_nodes),
                "sentences": int(batch.sent_len.numel()),
                "longest_sentence": int(batch.sent_len.max()),
                "train": counted.to_dict(), "tag": tagged.to_dict(),
            })
    return {
        "dataset": options.dataset, "split": options.split, "seed": options.seed,
        "model_overrides": dict(options.model_overrides),
        "rows": rows, "targets": TARGETS, "checks": check_targets(rows),
        "definition": ("operators: aten operator events whose parent event is not an aten "
                       "operator (forward, backward, clipping and optimizer step); "
                       "synchronising: _local_scalar_dense, nonzero, unique*, masked_select "
                       "(outermost; not the CPU fused optimizer's reads of its CPU step "
                       "counters)"),
        "torch": torch.__version__, "python": platform.python_version(),
        "date": _dt.datetime.now().isoformat(timespec="seconds"), "command": command,
    }


def check_targets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each of :data:`TARGETS` against the counted rows: the value and whether it is met."""
    by = {(r["model"], r["batch_tokens"]): r for r in rows}
    small, large = min(r["batch_tokens"] for r in rows), max(r["batch_tokens"] for r in rows)
    checks: dict[str, Any] = {}
    for name in ("baseline", "gcdoc"):
        ops = by[(name, small)]["train"]["operators"]
        checks[f"{name}_train_operators"] = {
            "value": ops, "target": TARGETS[f"{name}_train_operators"],
            "met": ops <= TARGETS[f"{name}_train_operators"]}
        growth = by[(name, large)]["train"]["operators"] / ops
        checks[f"{name}_growth"] = {"value": round(growth, 3),
                                    "target": TARGETS["growth_16k_over_4k"],
                                    "met": growth <= TARGETS["growth_16k_over_4k"]}
    for kind in ("train", "tag"):
        for field_name in ("synchronising", "read_backs"):
            worst = max(r[kind][field_name] for r in rows)
            target = TARGETS[f"{kind}_{field_name}"]
            checks[f"{kind}_{field_name}"] = {"value": worst, "target": target,
                                              "met": worst <= target}
    for field_name in ("accumulating_index_writes", "nondeterministic_on_cuda"):
        worst = max(r["train"][field_name] for r in rows)
        target = TARGETS[f"train_{field_name}"]
        checks[f"train_{field_name}"] = {"value": worst, "target": target,
                                         "met": worst <= target}
    return checks


def format_counts(result: dict[str, Any]) -> str:
    """A plain-text table of a :func:`run_operator_counts` result."""
    lines = [f"{result['dataset']} {result['split']}: per step, operators (synchronising, "
             "read-backs); training: accumulating index writes, non-deterministic on CUDA",
             f"{'model':<9} {'budget':>6} {'tokens':>6} {'train':>16} {'writes':>6} "
             f"{'nondet':>6} {'tag':>14}"]
    for r in result["rows"]:
        train, tag = r["train"], r["tag"]
        lines.append(
            f"{r['model']:<9} {r['batch_tokens']:>6} {r['tokens']:>6} "
            f"{train['operators']:>6} ({train['synchronising']:>2}, {train['read_backs']:>2}) "
            f"{train['accumulating_index_writes']:>6} {train['nondeterministic_on_cuda']:>6} "
            f"{tag['operators']:>5} ({tag['synchronising']:>2}, {tag['read_backs']:>2})")
    sites = sorted({site for r in result["rows"] for site in r["tag"]["read_backs_by_site"]})
    if sites:
        lines.append("tagging read-backs: " + "; ".join(sites))
    for key, check in result["checks"].items():
        lines.append(f"{key}: {check['value']} (target {check['target']}) "
                     f"{'met' if check['met'] else 'NOT met'}")
    return "\n".join(lines)
