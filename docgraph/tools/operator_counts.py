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
  kernel reads them there).

The counts are properties of the code and the batch, not of the machine: the same batch
gives the same counts on any CPU.
"""

from __future__ import annotations

import datetime as _dt
import platform
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

from docgraph.batching import collate
from docgraph.config import TrainConfig
from docgraph.data.registry import load_dataset
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.model_dir import build_model
from docgraph.tools.batches import select_batch_indices
from docgraph.training import clip_groups, make_optimizer, training_step

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


@dataclass
class OperatorCount:
    """Operators issued by one call of a step function.

    Attributes:
        operators: Top-level aten operators (parent not an aten operator).
        synchronising: Synchronising operators (outermost only).
        by_name: Top-level operators by name, most frequent first.
        sync_by_name: Synchronising operators by name.
    """

    operators: int
    synchronising: int
    by_name: dict[str, int] = field(default_factory=dict)
    sync_by_name: dict[str, int] = field(default_factory=dict)

    def to_dict(self, top: int = 15) -> dict[str, Any]:
        """JSON form with the ``top`` most frequent operators."""
        return {
            "operators": self.operators,
            "synchronising": self.synchronising,
            "most_frequent": dict(list(self.by_name.items())[:top]),
            "synchronising_by_name": self.sync_by_name,
        }


def _is_aten(event: Any) -> bool:
    return event.name.startswith("aten::")


def count_operators(step: Callable[[], object]) -> OperatorCount:
    """Profile one call of ``step`` (on the CPU) and count its operators.

    Args:
        step: The work to count, e.g. a closure running forward, backward and optimizer step.
    """
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    top: Counter[str] = Counter()
    sync: Counter[str] = Counter()
    for event in prof.events():
        if not _is_aten(event):
            continue
        parent = event.cpu_parent
        if parent is None or not _is_aten(parent):
            top[event.name] += 1
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
    )


def training_step_counts(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                         batch: Any, step: Callable[..., object]) -> OperatorCount:
    """Operators of ``step(model, optimizer, batch)`` after one warm-up call (lazy state such
    as Adam's moments is created on the first step and would count once only)."""
    step(model, optimizer, batch)
    return count_operators(lambda: step(model, optimizer, batch))


#: Issue 30's targets for a training step of about 4000 tokens, and the growth allowed to a
#: step of about 16000 tokens.
TARGETS = {"gcdoc_train_operators": 2500, "baseline_train_operators": 1200,
           "train_synchronising": 5, "tag_synchronising": 5, "growth_16k_over_4k": 1.2}


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
    (:func:`~docgraph.batching.collate` with the host-side plan, then
    :func:`~docgraph.training.training_step` with clipping and the fused Adam of the presets;
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
        worst = max(r[kind]["synchronising"] for r in rows)
        checks[f"{kind}_synchronising"] = {"value": worst,
                                           "target": TARGETS[f"{kind}_synchronising"],
                                           "met": worst <= TARGETS[f"{kind}_synchronising"]}
    return checks


def format_counts(result: dict[str, Any]) -> str:
    """A plain-text table of a :func:`run_operator_counts` result."""
    lines = [f"{result['dataset']} {result['split']}: operators per step (synchronising)",
             f"{'model':<9} {'budget':>6} {'tokens':>6} {'train':>13} {'tag':>11}"]
    for r in result["rows"]:
        lines.append(
            f"{r['model']:<9} {r['batch_tokens']:>6} {r['tokens']:>6} "
            f"{r['train']['operators']:>7} ({r['train']['synchronising']:>2}) "
            f"{r['tag']['operators']:>6} ({r['tag']['synchronising']:>2})")
    for key, check in result["checks"].items():
        lines.append(f"{key}: {check['value']} (target {check['target']}) "
                     f"{'met' if check['met'] else 'NOT met'}")
    return "\n".join(lines)
