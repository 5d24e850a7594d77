"""Markdown results tables and figures generated from run directories (never typed by hand).

A run directory holds ``metrics.json`` (see :func:`docgraph.experiment.run_experiment`),
``command.txt``, ``train_log.jsonl`` and ``config.json``. Runs are grouped by configuration
name: the run directory name minus a trailing ``-s<seed>`` / ``seed-<n>`` (a directory named
just ``seed-<n>`` takes its parent's name). Each group gets mean ± sample standard deviation
over its seeds, next to the paper's numbers.

Besides the per-group tables, runs are classified by their model configuration
(:func:`model_variant`) into the rows of the paper's ablation tables (Tables V, VI, VII) and the
window-size curve (Fig. 4); each of those compares only runs with the same training settings
and hardware (:func:`setting_key`), and says which selection it shows.

Every run is labelled by why it stopped (:func:`stop_reason`): only a run whose early stopping
fired counts as *converged*; the others were cut by their time budget or their epoch cap.

Fields read from ``metrics.json`` beyond the scores: ``epochs``, ``best_epoch``,
``train_seconds``, ``seed``, ``config``, ``command``, ``torch``, ``device``, and, where the
training code records them, ``date`` (ISO 8601 UTC, e.g. ``2026-11-26T09:58``),
``stop_reason`` (``"early_stopping"``, ``"budget"`` or ``"max_epochs"``) and ``hardware``
(e.g. ``"NVIDIA H200"``).
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import statistics
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from glob import glob
from pathlib import Path
from types import MappingProxyType
from typing import Any

from docgraph.atomic import atomic_write_bytes, atomic_write_text

BASELINE_ROW = "BiLSTM-CRF"
GCDOC_ROW = "GCDoc"

PAPER_OVERALL: Mapping[str, Mapping[str, tuple[float, float, float]]] = MappingProxyType(
    {
        "conll03": MappingProxyType(
            {
                BASELINE_ROW: (90.96, 91.07, 91.01),
                GCDOC_ROW: (92.12, 92.33, 92.22),
            }
        ),
        "ontonotes": MappingProxyType(
            {
                BASELINE_ROW: (87.58, 87.70, 87.64),
                GCDOC_ROW: (87.90, 88.74, 88.32),
            }
        ),
    }
)
"""Paper test precision / recall / F1 per data set and model."""

PAPER_RECALL: Mapping[str, Mapping[str, Mapping[str, float]]] = MappingProxyType(
    {
        "conll03": MappingProxyType(
            {
                BASELINE_ROW: MappingProxyType(
                    {"PER": 95.18, "LOC": 94.12, "ORG": 88.44, "MISC": 80.91}
                ),
                GCDOC_ROW: MappingProxyType(
                    {"PER": 97.34, "LOC": 93.65, "ORG": 90.79, "MISC": 81.91}
                ),
            }
        ),
    }
)
"""Paper per-type test recall (CoNLL-2003 only)."""

CONLL_TYPES = ("PER", "LOC", "ORG", "MISC")
PAPER_EMBEDDINGS = "300d GloVe"

SUMMARY_START = "<!-- summary:start -->"
SUMMARY_END = "<!-- summary:end -->"
REPRODUCE_START = "<!-- reproduce:start -->"
REPRODUCE_END = "<!-- reproduce:end -->"
"""Markers around the generated summary block of the README."""

_SEED_SUFFIX = re.compile(r"^(?P<name>.+?)-(?:s|seed-?)(?P<seed>\d+)$")
_SEED_DIR = re.compile(r"^seed-?(?P<seed>\d+)$")
_GPU_TAG = re.compile(r"(?:^|-)(?P<tag>[ahv]\d{2,3})(?:-|$)")

# ------------------------------------------------------------------------ stop reasons
STOP_LABELS: Mapping[str, str] = MappingProxyType(
    {"early_stopping": "converged", "budget": "budget-stopped", "max_epochs": "max-epochs",
     "unknown": "stop reason unknown"}
)
"""``stop_reason`` -> the word the tables use. Only ``early_stopping`` is *converged*."""

# ------------------------------------------------------------------------ model variants
VARIANT_LABELS: Mapping[str, str] = MappingProxyType(
    {
        "baseline": "BiLSTM-CRF (base model)",
        "cross_only": "+ cross-sentence module only",
        "graph_only": "+ document graph module only",
        "plain_graph": "cross-sentence + plain mean document graph",
        "pruning": "cross-sentence + document graph with pruning",
        "weighted_graph": "cross-sentence + edge-weighted document graph without pruning",
        "full": "GCDoc (all modules, k = 2)",
        "current_only": "GCDoc, current sentence only",
        "previous_only": "GCDoc, previous sentences only",
        "next_only": "GCDoc, next sentences only",
        "window-1": "GCDoc, window k = 1",
        "window-3": "GCDoc, window k = 3",
        "window-4": "GCDoc, window k = 4",
        "other": "other model configuration",
        "unknown": "no model configuration recorded",
    }
)
"""Names of the model variants of :func:`model_variant`."""

ROW_FIELDS = ("graph", "pruning", "edge_weights", "cross_sentence", "use_previous", "use_next",
              "window")
"""Model fields that decide a run's row; every other setting must match within a table."""

_FREE_TRAIN_FIELDS = ("epochs", "max_minutes", "threads", "processes", "eval_batch_tokens")
"""Training fields that may differ within a table (caps, threads, CPU processes, evaluation
batching): they change the speed, not the model. Two DDP processes train to the same dev F1
as one (``benchmarks/results/measurements/ddp-quality``: 90.74 ± 0.18 with one, 90.68 ± 0.15
with two, Welch p = 0.71)."""


@dataclass(frozen=True)
class PaperTable:
    """One of the paper's ablation tables: rows are model variants, with the paper's F1."""

    key: str
    title: str
    rows: tuple[tuple[str, str], ...]
    """``(variant, row label)`` in the paper's order."""
    paper: Mapping[str, Mapping[str, tuple[float, float]]]
    """``dataset -> variant -> (F1, std)`` as printed in the paper."""


PAPER_TABLES: tuple[PaperTable, ...] = (
    PaperTable(
        "table4",
        "Table V: ablation of the overall architecture",
        (("baseline", "base model (BiLSTM-CRF)"),
         ("cross_only", "+ Cross-Sentence Module only"),
         ("graph_only", "+ Document Graph Module only"),
         ("full", "+ ALL (GCDoc)")),
        MappingProxyType({
            "conll03": MappingProxyType({"baseline": (91.01, 0.21), "cross_only": (91.53, 0.09),
                                         "graph_only": (91.86, 0.02), "full": (92.22, 0.02)}),
            "ontonotes": MappingProxyType({"baseline": (87.64, 0.23),
                                           "cross_only": (87.91, 0.21),
                                           "graph_only": (88.20, 0.11),
                                           "full": (88.32, 0.04)}),
        }),
    ),
    PaperTable(
        "table5",
        "Table VI: strategies of the document graph module",
        (("cross_only", "Base (cross-sentence module only)"),
         ("plain_graph", "+ Doc Graph (plain mean)"),
         ("pruning", "+ Pruning"),
         ("full", "+ Edge Weights (GCDoc)")),
        MappingProxyType({
            "conll03": MappingProxyType({"cross_only": (91.53, 0.09),
                                         "plain_graph": (92.00, 0.07),
                                         "pruning": (92.10, 0.03), "full": (92.22, 0.02)}),
        }),
    ),
    PaperTable(
        "table6",
        "Table VII: context of the cross-sentence module",
        (("current_only", "current sentence only (neither previous nor next)"),
         ("previous_only", "previous sentences only"),
         ("next_only", "next sentences only"),
         ("full", "previous and next (GCDoc)")),
        MappingProxyType({
            "conll03": MappingProxyType({"current_only": (91.92, 0.14),
                                         "previous_only": (92.04, 0.13),
                                         "next_only": (91.96, 0.18), "full": (92.22, 0.02)}),
        }),
    ),
)
"""The paper's Tables V, VI and VII (test F1 ± std; Table V on both corpora, VI and VII CoNLL-2003)."""

WINDOW_VARIANTS: tuple[tuple[int, str], ...] = (
    (1, "window-1"), (2, "full"), (3, "window-3"), (4, "window-4"))
"""Fig. 4: window size k -> model variant (k = 2 is the full model)."""

PAPER_WINDOW: Mapping[int, tuple[float, float]] = MappingProxyType({2: (92.22, 0.02)})
"""Fig. 4 points the paper states in numbers: only k = 2 (its GCDoc result); the text says
k = 2 is best and larger k drops slightly, but the figure's other values are not given."""


def _defaults(cls: type) -> dict[str, Any]:
    return {f.name: f.default for f in fields(cls) if f.default is not MISSING}


def _config_defaults() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Defaults of the model, graph and training configuration (fill fields old runs lack)."""
    from docgraph.config import TrainConfig
    from docgraph.graph import GraphConfig
    from docgraph.model import GCDocConfig

    return _defaults(GCDocConfig), _defaults(GraphConfig), _defaults(TrainConfig)


@dataclass(frozen=True)
class Run:
    """One finished run (a directory with ``metrics.json``)."""

    directory: Path
    group: str
    seed: int | None
    metrics: dict[str, Any]
    command: str
    date: str

    @property
    def config(self) -> dict[str, Any]:
        """The experiment configuration recorded with the run."""
        return self.metrics.get("config") or {}

    @property
    def dataset(self) -> str:
        """Data set name (``conll03``, ``ontonotes``, ...)."""
        return str(self.config.get("dataset", "unknown"))

    @property
    def embeddings(self) -> str:
        """The ``embeddings`` setting of the run."""
        return str(self.config.get("embeddings", "unknown"))

    @property
    def stop_reason(self) -> str:
        """Why training stopped, see :func:`stop_reason`."""
        return stop_reason(self.metrics)

    @property
    def converged(self) -> bool:
        """Whether early stopping ended the run."""
        return self.stop_reason == "early_stopping"

    @property
    def hardware(self) -> str:
        """What the run trained on, see :func:`hardware`."""
        return hardware(self)

    @property
    def variant(self) -> str:
        """The model variant, see :func:`model_variant`."""
        return model_variant(self.config, self.group)

    @property
    def lm(self) -> str:
        """The contextual encoder whose features the run used (``--lm``), ``""`` if none."""
        return lm_name(self.config)


def lm_name(config: Mapping[str, Any]) -> str:
    """Short name of the language model of a run configuration (``""`` without one).

    The last component of ``config["lm"]``, or the one above it when that is a generic
    ``model`` folder (as in a PyPI package's ``<package>/model``); ``"LM"`` when only the
    feature size ``model.lm_dim`` is recorded.
    """
    path = config.get("lm")
    if path:
        parts = Path(str(path)).parts
        name = parts[-1]
        if name == "model" and len(parts) > 1:
            name = parts[-2]
        return name
    return "LM" if (config.get("model") or {}).get("lm_dim") else ""


def stop_reason(metrics: Mapping[str, Any]) -> str:
    """Why a run stopped: ``"early_stopping"``, ``"budget"``, ``"max_epochs"`` or ``"unknown"``.

    ``metrics["stop_reason"]`` when the run recorded it. Otherwise derived from the epochs:
    early stopping fired iff ``epochs - best_epoch >= train.patience``; else a run with a
    wall-clock budget (``train.max_minutes > 0``) that ended before ``train.epochs`` was stopped
    by its budget; else it ran out of epochs.
    """
    recorded = metrics.get("stop_reason")
    if recorded:
        return str(recorded)
    train = (metrics.get("config") or {}).get("train") or {}
    epochs, best, patience = metrics.get("epochs"), metrics.get("best_epoch"), train.get("patience")
    if epochs is None or best is None or patience is None:
        return "unknown"
    if int(epochs) - int(best) >= int(patience):
        return "early_stopping"
    if float(train.get("max_minutes") or 0) > 0 and int(epochs) < int(train.get("epochs", 0)):
        return "budget"
    return "max_epochs"


def stop_label(reason: str) -> str:
    """``converged`` / ``budget-stopped`` / ``max-epochs`` for a stop reason."""
    return STOP_LABELS.get(reason, reason)


def stop_summary(runs: Sequence[Run]) -> str:
    """One label for a group of runs; groups that mix stop reasons say so with their counts."""
    counts = Counter(stop_label(r.stop_reason) for r in runs)
    order = {label: i for i, label in enumerate(STOP_LABELS.values())}
    labels = sorted(counts, key=lambda label: (order.get(label, len(order)), label))
    if len(labels) == 1:
        return labels[0]
    return "mixed: " + ", ".join(f"{counts[label]} {label}" for label in labels)


def hardware(run: Run) -> str:
    """What a run trained on.

    ``metrics["hardware"]`` when recorded. Otherwise ``CPU (<threads> thread(s))`` for CPU runs
    and, for CUDA runs, the GPU named in the run's configuration name (``...-h200`` ->
    ``NVIDIA H200``, our naming convention), or ``GPU`` when the name has none.
    """
    recorded = run.metrics.get("hardware")
    if recorded:
        return str(recorded)
    kind = str(run.metrics.get("device", "?")).split(":")[0]
    if kind == "cpu":
        threads = (run.config.get("train") or {}).get("threads")
        if threads:
            return f"CPU ({threads} thread{'s' if int(threads) > 1 else ''})"
        return "CPU"
    if kind == "cuda":
        match = _GPU_TAG.search(run.group.lower())
        return f"NVIDIA {match['tag'].upper()}" if match else "GPU"
    return kind


def model_variant(config: Mapping[str, Any], group: str = "") -> str:
    """The row a run belongs to, from its configuration's model switches.

    ``baseline`` (no graph, no cross-sentence module), ``cross_only``, ``graph_only`` (pruned
    and weighted graph), ``plain_graph`` / ``pruning`` (cross-sentence module with a graph
    lacking edge weights, and pruning too), ``weighted_graph`` (cross-sentence module with an
    edge-weighted graph that prunes nothing, not a row of the paper), ``full`` (everything,
    previous and next sentences, k = 2), ``current_only`` / ``previous_only`` / ``next_only``
    (full graph, cross-sentence context restricted), ``window-<k>`` (full model with k != 2)
    and ``other``. A run without a ``model`` section in its configuration is classified by
    its name (``baseline`` or ``gcdoc`` in it, else ``unknown``).
    """
    model = config.get("model")
    if not model:
        row = paper_row(group)
        return {BASELINE_ROW: "baseline", GCDOC_ROW: "full"}.get(row or "", "unknown")
    m = {**_config_defaults()[0], **model}
    graph, cross = bool(m["graph"]), bool(m["cross_sentence"])
    prev, nxt, k = bool(m["use_previous"]), bool(m["use_next"]), int(m["window"])
    prune, weights = bool(m["pruning"]), bool(m["edge_weights"])
    if not graph and not cross:
        return "baseline"
    full_graph = graph and prune and weights
    if not cross:
        return "graph_only" if full_graph else "other"
    both = prev and nxt
    if not graph:
        return "cross_only" if both and k == 2 else "other"
    if not full_graph:
        if not both or k != 2:
            return "other"
        if weights:
            return "weighted_graph"
        return "pruning" if prune else "plain_graph"
    if not prev and not nxt:
        return "current_only"
    if not both:
        return ("previous_only" if prev else "next_only") if k == 2 else "other"
    return "full" if k == 2 else f"window-{k}"


def _hardware_kind(run: Run) -> str:
    """:func:`hardware` without the CPU thread count (threads and processes are free fields)."""
    label = run.hardware
    return "CPU" if label.startswith("CPU") else label


def setting_key(run: Run) -> str:
    """Everything but the row's model switches that must agree between runs of one table.

    Data set, hardware, word embeddings (GloVe files cut from the same vectors count as one),
    every model field except :data:`ROW_FIELDS`, the graph construction and the training
    settings except the caps, threads and CPU processes (:data:`_FREE_TRAIN_FIELDS`). Fields an
    older run lacks take today's defaults.
    """
    model_defaults, graph_defaults, train_defaults = _config_defaults()
    model = {**model_defaults, **(run.config.get("model") or {})}
    train = {**train_defaults, **(run.config.get("train") or {})}
    key = {
        "dataset": run.dataset,
        "hardware": _hardware_kind(run),
        "embeddings": _pretty_embeddings(run.embeddings),
        "lm": run.lm,
        "model": {k: v for k, v in model.items() if k not in ROW_FIELDS},
        "graph": {**graph_defaults, **(run.config.get("graph") or {})},
        "train": {k: v for k, v in train.items() if k not in _FREE_TRAIN_FIELDS},
    }
    return json.dumps(key, sort_keys=True, default=str)


def describe_setting(key: str) -> str:
    """A short human description of a :func:`setting_key` (the fields that usually differ)."""
    s = json.loads(key)
    model, train = s["model"], s["train"]
    parts = [
        s["dataset"], s["hardware"], s["embeddings"],
        *([f"+ {s['lm']} features"] if s.get("lm") else []),
        "frozen embeddings" if model.get("freeze_embeddings") else "fine-tuned embeddings",
        f"{train.get('optimizer')} lr {train.get('lr')}",
        f"batches of {train.get('batch_tokens')} tokens",
        f"loss {train.get('loss_reduction')}",
        f"patience {train.get('patience')}",
    ]
    fast = [f"{k}={model[k]}" for k, v in (("window_encoding", "concat"), ("mc_dropout", "full"))
            if k in model and model[k] != v]
    parts.append(", ".join(fast) if fast else "faithful model")
    return "; ".join(str(p) for p in parts)


def split_run_name(directory: Path) -> tuple[str, int | None]:
    """Configuration name and seed from a run directory's name.

    ``conll03-gcdoc-s1`` -> ``("conll03-gcdoc", 1)``; ``x-seed-2`` -> ``("x", 2)``;
    ``base/seed-3`` -> ``("base", 3)``; a name without a seed suffix is its own group.
    """
    name = directory.name
    match = _SEED_DIR.match(name)
    if match:
        return directory.parent.name, int(match["seed"])
    match = _SEED_SUFFIX.match(name)
    if match:
        return match["name"], int(match["seed"])
    return name, None


def paper_row(group: str) -> str | None:
    """The paper's row for a configuration name (``baseline`` / ``gcdoc`` in the name)."""
    lowered = group.lower()
    if "baseline" in lowered:
        return BASELINE_ROW
    if "gcdoc" in lowered:
        return GCDOC_ROW
    return None


def load_run(metrics_path: Path) -> Run:
    """Read one run directory from the path of its ``metrics.json``.

    The run's date is ``metrics["date"]`` (written at training time; ``"–"`` when absent),
    never a file time, so the tables do not change when files are copied or checked out.
    """
    directory = metrics_path.parent
    metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
    if "config" not in metrics and (directory / "config.json").is_file():
        metrics["config"] = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    command = metrics.get("command") or ""
    if not command and (directory / "command.txt").is_file():
        command = (directory / "command.txt").read_text(encoding="utf-8").strip()
    group, seed = split_run_name(directory)
    if metrics.get("seed") is not None:
        seed = int(metrics["seed"])
    return Run(directory, group, seed, metrics, command, str(metrics.get("date") or "–"))


def find_runs(directories: Iterable[str | Path]) -> list[Run]:
    """Every run (``metrics.json``) under the given directories, sorted by directory."""
    paths = {p.resolve(): p for d in directories for p in Path(d).rglob("metrics.json")}
    return [load_run(paths[key]) for key in sorted(paths)]


def group_runs(runs: Iterable[Run]) -> dict[tuple[str, str], list[Run]]:
    """``(dataset, configuration name) -> runs``, data sets in first-seen order and their
    configurations by name; runs sorted by seed."""
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.dataset, run.group), []).append(run)
    datasets = list(dict.fromkeys(dataset for dataset, _ in groups))
    order = sorted(groups, key=lambda key: (datasets.index(key[0]), key[1]))
    return {k: sorted(groups[k], key=lambda r: (r.seed is None, r.seed or 0)) for k in order}


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    if not values:
        raise ValueError("mean_std of no values")
    mean = statistics.fmean(values)
    return mean, statistics.stdev(values) if len(values) > 1 else 0.0


def format_mean_std(values: Sequence[float]) -> str:
    """``"91.23 ± 0.15"`` (two decimals); one value alone is just ``"91.23"`` (no spread to
    show); ``"–"`` when there is no value."""
    if not values:
        return "–"
    mean, std = mean_std(values)
    return f"{mean:.2f}" if len(values) == 1 else f"{mean:.2f} ± {std:.2f}"


def _paper_f1(value: tuple[float, float] | None) -> str:
    return "–" if value is None else f"{value[0]:.2f} ± {value[1]:.2f}"


def _score(run: Run, split: str, key: str) -> float | None:
    value = run.metrics.get(split, {}).get(key)
    return None if value is None else float(value)


def _values(runs: Sequence[Run], split: str, key: str) -> list[float]:
    return [v for r in runs if (v := _score(r, split, key)) is not None]


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def epochs_cell(run: Run) -> str:
    """``"16/22 converged"``: best epoch / epochs run, and why the run stopped."""
    return (f"{run.metrics.get('best_epoch', '?')}/{run.metrics.get('epochs', '?')} "
            f"{stop_label(run.stop_reason)}")


def _paper_overall(dataset: str, variant: str) -> tuple[float, float, float] | None:
    row = {"baseline": BASELINE_ROW, "full": GCDOC_ROW}.get(variant)
    return PAPER_OVERALL.get(dataset, {}).get(row or "")


def overall_rows(dataset: str, groups: Mapping[str, list[Run]]) -> list[list[str]]:
    """Rows of the overall table: model variant, hardware, n, test P/R/F1 mean ± std, dev F1,
    best epoch / epochs and stop reason per run, stop summary, minutes, paper P/R/F1."""
    rows = []
    for group, runs in groups.items():
        variant = runs[0].variant
        paper = None if runs[0].lm else _paper_overall(dataset, variant)
        minutes = [
            float(r.metrics["train_seconds"]) / 60 for r in runs if "train_seconds" in r.metrics
        ]
        rows.append(
            [
                group,
                VARIANT_LABELS.get(variant, variant)
                + (f" + {runs[0].lm} features" if runs[0].lm else ""),
                ", ".join(sorted({r.hardware for r in runs})),
                str(len(runs)),
                format_mean_std(_values(runs, "test", "precision")),
                format_mean_std(_values(runs, "test", "recall")),
                format_mean_std(_values(runs, "test", "f1")),
                format_mean_std(_values(runs, "dev", "f1")),
                ", ".join(epochs_cell(r) for r in runs),
                stop_summary(runs),
                f"{statistics.fmean(minutes):.1f}" if minutes else "–",
                " / ".join(f"{v:.2f}" for v in paper) if paper else "–",
            ]
        )
    return rows


OVERALL_HEADER = ("Configuration", "Model", "Hardware", "n", "Test P", "Test R", "Test F1",
                  "Dev F1", "Best epoch / epochs, stop", "Stopped", "Train min",
                  "Paper P / R / F1")


def entity_types(dataset: str, runs: Iterable[Run]) -> list[str]:
    """PER, LOC, ORG, MISC for CoNLL; otherwise every type found in the test scores."""
    if dataset == "conll03":
        return list(CONLL_TYPES)
    found = {t for r in runs for t in r.metrics.get("test", {}).get("per_type", {})}
    return sorted(found)


def recall_rows(dataset: str, groups: Mapping[str, list[Run]]) -> list[list[str]]:
    """Rows of the per-type test recall table (ours, then the paper's references)."""
    types = entity_types(dataset, [r for runs in groups.values() for r in runs])
    rows = []
    for group, runs in groups.items():
        cells = []
        for t in types:
            values = [
                float(r.metrics["test"]["per_type"][t]["recall"])
                for r in runs
                if t in r.metrics.get("test", {}).get("per_type", {})
            ]
            cells.append(format_mean_std(values))
        rows.append([group, str(len(runs)), *cells])
    for name, recalls in PAPER_RECALL.get(dataset, {}).items():
        rows.append(
            [f"paper: {name}", "–", *(f"{recalls[t]:.2f}" if t in recalls else "–" for t in types)]
        )
    return rows


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                    -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function :math:`I_x(a, b)` for ``0 <= x <= 1``."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def welch_t_test(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Welch's unequal-variance t-test of ``mean(a) != mean(b)``.

    Args:
        a: One sample (at least two values).
        b: The other sample (at least two values).

    Returns:
        ``(t, df, p)``: the statistic, the Welch-Satterthwaite degrees of freedom and the
        two-sided p-value. Two samples without any spread give ``p = 0`` when their means
        differ and ``p = 1`` otherwise.

    Raises:
        ValueError: If a sample has fewer than two values.
    """
    if len(a) < 2 or len(b) < 2:
        raise ValueError("welch_t_test needs at least two values per sample")
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    diff = statistics.fmean(a) - statistics.fmean(b)
    if va + vb == 0.0:
        return (math.copysign(math.inf, diff) if diff else 0.0), math.inf, float(diff == 0)
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return t, df, regularized_beta(df / 2.0, 0.5, df / (df + t * t))


def significance_rows(groups: Mapping[str, list[Run]],
                      compare: Sequence[tuple[str, str]] = ()) -> list[list[str]]:
    """GCDoc groups against the baseline group of the same name, by Welch's t-test on test F1.

    A group ``X-gcdoc-Y`` is compared with ``X-baseline-Y`` when both have at least two seeds.
    ``compare`` adds pairs ``(A, B)`` of group names of this data set (e.g. GCDoc against a
    baseline trained differently); pairs naming a group that is absent here are skipped. The
    last column says whether the runs of both groups converged.
    """
    pairs = [(name, name.replace("gcdoc", "baseline")) for name in groups if "gcdoc" in name]
    pairs += [pair for pair in compare if pair not in pairs]
    rows = []
    for name, other in pairs:
        runs, partner = groups.get(name), groups.get(other)
        if runs is None or partner is None or len(runs) < 2 or len(partner) < 2:
            continue
        ours, theirs = _values(runs, "test", "f1"), _values(partner, "test", "f1")
        t, df, p = welch_t_test(ours, theirs)
        rows.append([
            f"{name} vs {other}", f"{len(runs)} / {len(partner)}",
            f"{statistics.fmean(ours) - statistics.fmean(theirs):+.2f}",
            f"{t:.2f}", f"{df:.1f}", f"{p:.3f}",
            f"{stop_summary(runs)} / {stop_summary(partner)}",
        ])
    return rows


def run_rows(runs: Iterable[Run]) -> list[list[str]]:
    """One row per run: directory, seed, command, date, stop, hardware, device/torch,
    embeddings."""
    return [
        [
            f"`{r.directory.as_posix()}`",
            "–" if r.seed is None else str(r.seed),
            f"`{r.command}`" if r.command else "–",
            r.date,
            epochs_cell(r),
            r.hardware,
            f"{r.metrics.get('device', '?')} / {r.metrics.get('torch', '?')}",
            r.embeddings,
        ]
        for r in runs
    ]


def _pretty_embeddings(name: str) -> str:
    """``GloVe 6B 50d`` for the package and for text files cut from it (``glove.6B.50d*``)."""
    if name == "glove-6b-50d" or Path(name).name.startswith("glove.6B.50d"):
        return "GloVe 6B 50d"
    return name


def embeddings_note(runs: Iterable[Run]) -> str:
    """The note line comparing our word embeddings with the paper's."""
    names = sorted({_pretty_embeddings(r.embeddings) for r in runs})
    pretty = ", ".join(names)
    return (
        f"Note: our runs use {pretty or 'unknown'} word embeddings (config.embeddings) "
        f"where the paper used {PAPER_EMBEDDINGS}."
    )


SPEED_HEADER = ["File", "Date", "Data", "GCDoc variant", "CPU", "Graph build s",
                "Base train tok/s (1 thread)", "GCDoc train tok/s (1 thread)",
                "GCDoc train GFLOP/s / matmul GFLOP/s (target ≥ 0.5)"]
SCALING_HEADER = ["File", "Setting", "Base train tok/s", "GCDoc train tok/s",
                  "Base infer tok/s", "GCDoc infer tok/s",
                  "Speed-up over 1 thread: train base / GCDoc", "infer base / GCDoc",
                  "Est. epoch min base / GCDoc", "Peak RSS MiB (all processes)"]


def speed_rows(results: Iterable[tuple[str, dict[str, Any]]]) -> list[list[str]]:
    """One row per benchmark JSON (see :mod:`docgraph.benchmark`): the one-thread figures."""
    rows = []
    for name, s in results:
        b, g = s["baseline"], s["gcdoc"]
        fraction = s["gcdoc_train_fraction_of_matmul_peak"]
        rows.append([
            f"`{name}`", str(s.get("date", "?")),
            f"{s['dataset']}{' (quick)' if s.get('quick') else ''}",
            ", ".join(f"{k}={v}" for k, v in sorted(s.get("model_overrides", {}).items()))
            or "paper (faithful)",
            str(s.get("cpu", "?")), f"{s['graph_build_seconds']:.2f}",
            f"{b['train_tokens_per_s']:.0f}", f"{g['train_tokens_per_s']:.0f}",
            f"{g['train_gflops_per_s']:.1f} / {s['matmul_gflops_per_s']:.1f} = {fraction:.2f} "
            f"({'met' if fraction >= 0.5 else 'not met'})",
        ])
    return rows


def scaling_rows(results: Iterable[tuple[str, dict[str, Any]]]) -> list[list[str]]:
    """One row per core setting of every benchmark JSON that compared them."""
    rows = []
    for name, s in results:
        scaling = s.get("scaling")
        if not scaling:
            continue
        ups = scaling.get("speedup_over_1_thread", {})
        for setting, r in scaling["settings"].items():
            up = ups.get(setting)
            est = s.get("epoch_minutes_estimate", {}).get(setting, {})
            rows.append([
                f"`{name}`", setting,
                *(f"{r[m][f'{k}_tokens_per_s']:.0f}" for k in ("train", "infer")
                  for m in ("baseline", "gcdoc")),
                f"{up['baseline_train']:.2f} / {up['gcdoc_train']:.2f}" if up else "1 / 1",
                f"{up['baseline_infer']:.2f} / {up['gcdoc_infer']:.2f}" if up else "1 / 1",
                f"{est['baseline']:.1f} / {est['gcdoc']:.1f}" if est else "–",
                f"{r.get('peak_rss_mib_all_processes', 0):.0f}",
            ])
    return rows


CONSISTENCY_HEADER = ["Configuration", "n", "Test F1", "F1 recurring-word mentions",
                      "F1 once-seen mentions", "Inconsistent string groups (gold)",
                      "Entities against their string's majority type", "Stopped"]


def consistency_rows(groups: Mapping[str, list[Run]], split: str = "test"
                     ) -> list[list[str]]:
    """Document-consistency metrics (``metrics["consistency"]``) of every configuration whose
    runs all recorded them: mean over seeds."""
    rows = []
    for group, members in sorted(groups.items()):
        records = [r.metrics.get("consistency", {}).get(split) for r in members]
        if not records or any(c is None for c in records):
            continue

        def cell(values: list[float]) -> str:
            return format_mean_std(values)

        rows.append([
            group, str(len(members)), format_mean_std(_values(members, split, "f1")),
            cell([c["recurrent"]["f1"] for c in records]),
            cell([c["singleton"]["f1"] for c in records]),
            f"{cell([100 - c['pred']['consistency'] for c in records])}% "
            f"({100 - records[0]['gold']['consistency']:.1f}%)",
            f"{cell([c['pred']['disagreement'] for c in records])}%",
            stop_summary(members),
        ])
    return rows


# ------------------------------------------------------------------ paper tables and Fig. 4
@dataclass(frozen=True)
class Selection:
    """The runs one ablation table shows: those of one setting (:func:`setting_key`)."""

    dataset: str
    key: str | None
    """The selected setting (``None``: no run fits any row)."""
    rows: Mapping[str, list[Run]]
    """``variant -> runs`` of the selected setting."""
    other_settings: int
    """How many other settings have runs for these rows (not shown)."""
    other_runs: int

    def describe(self) -> str:
        """The selection in words (printed above the table and by ``scripts/report.py``)."""
        if self.key is None:
            return f"Selection ({self.dataset}): no runs for any row yet."
        n = sum(len(v) for v in self.rows.values())
        text = (f"Selection ({self.dataset}): the setting that fills the most rows — "
                f"{describe_setting(self.key)} — {n} run{'s' if n != 1 else ''}.")
        if self.other_settings:
            text += (f" {self.other_runs} run{'s' if self.other_runs != 1 else ''} for these "
                     f"rows in {self.other_settings} other setting"
                     f"{'s' if self.other_settings != 1 else ''} are not mixed in (see the "
                     f"per-configuration tables).")
        return text


def select_runs(runs: Iterable[Run], dataset: str, variants: Iterable[str]) -> Selection:
    """Runs of ``dataset`` whose variant is one of ``variants``, restricted to one setting.

    Among the settings (:func:`setting_key`: same training settings, hardware, embeddings
    and fixed model fields) the one that fills the most rows is chosen, then the one with the
    most seeds, the most converged runs, the latest run, and last the greatest key (so the
    choice never depends on file order). A seed counts once per row (:func:`_one_per_seed`).
    """
    wanted = set(variants)
    candidates = [r for r in runs if r.dataset == dataset and r.variant in wanted]
    by_key: dict[str, list[Run]] = {}
    for run in candidates:
        by_key.setdefault(setting_key(run), []).append(run)
    if not by_key:
        return Selection(dataset, None, {}, 0, 0)
    by_key = {k: _one_per_seed(v) for k, v in by_key.items()}

    def rank(k: str) -> tuple[int, int, int, str, str]:
        members = by_key[k]
        return (len({r.variant for r in members}), len(members),
                sum(r.converged for r in members),
                max(r.date if r.date != "–" else "" for r in members), k)

    best = max(by_key, key=rank)
    rows: dict[str, list[Run]] = {}
    for run in by_key[best]:
        rows.setdefault(run.variant, []).append(run)
    others = sum(len(v) for k, v in by_key.items() if k != best)
    return Selection(dataset, best, rows, len(by_key) - 1, others)


def _one_per_seed(runs: Sequence[Run]) -> list[Run]:
    """One run per (variant, seed): of runs that repeat a seed in one setting (a shorter
    budget, or an earlier snapshot of a resumed run) the one that trained the most epochs."""
    kept: dict[tuple[str, Any], Run] = {}
    for run in runs:
        key = (run.variant, run.seed if run.seed is not None else str(run.directory))
        old = kept.get(key)
        rank = (int(run.metrics.get("epochs") or 0), str(run.directory))
        if old is None or rank > (int(old.metrics.get("epochs") or 0), str(old.directory)):
            kept[key] = run
    return sorted(kept.values(), key=lambda r: str(r.directory))


NOT_CONVERGED_MARK = "†"
ABLATION_HEADER = ("No", "Row", "Runs (configurations)", "n", "Test F1", "Stopped", "Paper F1")


def ablation_row(number: int, label: str, runs: Sequence[Run],
                 paper: tuple[float, float] | None) -> list[str]:
    """One row of an ablation table: test F1 mean ± std over ``runs`` (``†`` when any of them
    did not converge), or ``not run``; the paper's F1 ± std beside it."""
    if not runs:
        return [str(number), label, "–", "0", "not run", "–", _paper_f1(paper)]
    f1 = format_mean_std(_values(runs, "test", "f1"))
    if not all(r.converged for r in runs):
        f1 += f" {NOT_CONVERGED_MARK}"
    groups = ", ".join(sorted({r.group for r in runs}))
    return [str(number), label, groups, str(len(runs)), f1, stop_summary(runs), _paper_f1(paper)]


def paper_table_rows(table: PaperTable, selection: Selection) -> list[list[str]]:
    """The rows of one paper table for the selected runs."""
    paper = table.paper.get(selection.dataset, {})
    return [ablation_row(i, label, selection.rows.get(variant, []), paper.get(variant))
            for i, (variant, label) in enumerate(table.rows, start=1)]


def window_selection(runs: Iterable[Run], dataset: str = "conll03") -> Selection:
    """The runs of Fig. 4 (window size k = 1..4, full model otherwise)."""
    return select_runs(runs, dataset, [v for _, v in WINDOW_VARIANTS])


def window_rows(selection: Selection) -> list[list[str]]:
    """Fig. 4 as a table: one row per window size."""
    rows = []
    for k, variant in WINDOW_VARIANTS:
        paper = PAPER_WINDOW.get(k)
        row = ablation_row(k, f"k = {k}", selection.rows.get(variant, []), paper)
        if paper is None:
            row[-1] = "not given"
        rows.append(row[1:])
    return rows


def plot_window(selection: Selection, path: str | Path) -> None:
    """Fig. 4: test F1 against the window size k, ours (mean ± std) beside the paper's.

    The paper gives a number only for k = 2 (its full model); only that point is drawn for it.
    Written atomically as a PNG without a software stamp.
    """
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 3.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ours = [(k, mean_std(v), len(v)) for k, variant in WINDOW_VARIANTS
            if (v := _values(selection.rows.get(variant, []), "test", "f1"))]
    if ours:
        seeds = sorted({n for _, _, n in ours})
        what = ("one seed per point" if seeds == [1] else
                f"mean ± std of {'/'.join(map(str, seeds))} seeds")
        # a selection with runs in its rows always has a setting key
        hardware = json.loads(str(selection.key))["hardware"]
        ax.errorbar([k for k, _, _ in ours], [m for _, (m, _), _ in ours],
                    yerr=[s for _, (_, s), _ in ours], marker="o", capsize=3,
                    label=f"ours, {hardware} (test F1, {what})")
    paper = sorted(PAPER_WINDOW.items())
    ax.errorbar([k for k, _ in paper], [m for _, (m, _) in paper],
                yerr=[s for _, (_, s) in paper], marker="s", linestyle="--", capsize=3,
                label="paper (only k = 2 is given in numbers)")
    ax.set_xticks([k for k, _ in WINDOW_VARIANTS])
    ax.set_xlim(0.5, len(WINDOW_VARIANTS) + 0.5)
    ax.set_xlabel("window size k of the cross-sentence module")
    ax.set_ylabel("test F1")
    ax.set_title(f"Fig. 4: window size ({selection.dataset})")
    ax.grid(alpha=0.3)
    ax.legend(loc="center right", fontsize="small")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    atomic_write_bytes(path, buffer.getvalue())


def ablation_sections(runs: Sequence[Run], figure: str | None = None
                      ) -> tuple[list[str], list[str]]:
    """Markdown of Tables V, VI, VII and Fig. 4, and the selection lines (one per table)."""
    lines = [
        "## The paper's ablations: Tables V, VI, VII and Fig. 4",
        "",
        "Runs are put into rows by their configuration's model switches "
        f"({', '.join(f'`{f}`' for f in ROW_FIELDS)}), never by their names, and each table "
        "compares only runs of one setting: same data set, hardware, embeddings (and "
        "`freeze_embeddings`), other model fields, graph construction and training settings "
        "(only the epoch cap, the time budget and the CPU thread and process counts may differ). "
        f"Test F1 is mean ± sample std over the runs of a row; `{NOT_CONVERGED_MARK}` marks a "
        "row with a run that did not converge (stopped by its time budget or epoch cap before "
        "early stopping). Runs that repeat a seed of a row (a shorter budget, or an earlier "
        "snapshot of a resumed run) count once: the one that trained the most epochs.",
        "",
    ]
    printed = []
    for table in PAPER_TABLES:
        for dataset in table.paper:
            selection = select_runs(runs, dataset, [v for v, _ in table.rows])
            printed.append(f"{table.title.split(':')[0]}: {selection.describe()}")
            lines += [f"### {dataset}: {table.title}", "", selection.describe(), ""]
            lines += _table(ABLATION_HEADER, paper_table_rows(table, selection))
            lines.append("")
    selection = window_selection(runs)
    printed.append(f"Fig. 4: {selection.describe()}")
    lines += [f"### {selection.dataset}: Fig. 4: window size k of the cross-sentence module", "",
              selection.describe(), ""]
    lines += _table(ABLATION_HEADER[1:], window_rows(selection))
    known = ", ".join(f"k = {k}: {m:.2f}" for k, (m, _) in sorted(PAPER_WINDOW.items()))
    lines += ["", f"The paper states Fig. 4's values in numbers only where they equal another "
              f"table ({known}, its full model); its text says k = 2 is best and that the "
              "score drops slightly for larger k, but gives no numbers for k ≠ 2, so only "
              "those points are drawn for the paper.", ""]
    if figure:
        lines += [f"![Fig. 4: test F1 against the window size k]({figure})", ""]
    return lines, printed


# ----------------------------------------------------------------------------- summary
SUMMARY_LABELS: Mapping[str, str] = MappingProxyType({
    "baseline": "BiLSTM-CRF", "full": "GCDoc",
    "cross_only": "GCDoc without the document graph (cross-sentence module only)",
    "graph_only": "GCDoc without the cross-sentence module (document graph only)"})
"""Names in the summary where they differ from :data:`VARIANT_LABELS`."""

SUMMARY_HEADER = ("Corpus", "Model", "Best configuration (by dev F1)", "Seeds", "Test F1",
                  "Stopped", "Hardware", "Paper F1")


def _paper_for_variant(dataset: str, variant: str) -> str:
    for table in PAPER_TABLES:
        value = table.paper.get(dataset, {}).get(variant)
        if value is not None:
            return f"{_paper_f1(value)} ({table.title.split(':')[0]})"
    return "–"


SUMMARY_SEEDS = 3
"""Seeds a configuration needs to rank as fully replicated on the summary: a one-seed sweep
point with a lucky dev score must not displace a configuration measured over three seeds."""


def best_group(groups: Mapping[str, list[Run]], variant: str) -> tuple[str, list[Run]] | None:
    """The configuration of ``variant`` to show on the summary.

    Among the configurations with the most seeds (counted up to :data:`SUMMARY_SEEDS`), the one
    with the highest mean dev F1; then more seeds, then the name.
    """
    candidates = [(g, rs) for g, rs in groups.items()
                  if rs[0].variant == variant and _values(rs, "dev", "f1")]
    if not candidates:
        return None
    return max(candidates, key=lambda item: (min(len(item[1]), SUMMARY_SEEDS),
                                             statistics.fmean(_values(item[1], "dev", "f1")),
                                             len(item[1]), item[0]))


def model_notes(run: Run) -> str:
    """``" (frozen embeddings, fast approximations)"``: how a run's model departs from the
    paper's beyond its module switches (empty when it does not)."""
    model = run.config.get("model") or {}
    notes = [f"+ {run.lm} features"] if run.lm else []
    if model.get("freeze_embeddings"):
        notes.append("frozen embeddings")
    if model.get("window_encoding", "concat") != "concat" or model.get("mc_dropout",
                                                                         "full") != "full":
        notes.append("fast approximations")
    return f" ({', '.join(notes)})" if notes else ""


SUMMARY_ABLATIONS = ("cross_only", "graph_only", "plain_graph", "pruning")
"""Ablations on the README's summary: the module ablations of Tables V and VI. The context
variants of Table VII and Fig. 4 are in ``RESULTS.md`` only (the front page stays short)."""


@dataclass(frozen=True)
class SummaryChoice:
    """One row of the summary: the best configuration of a variant on a corpus."""

    dataset: str
    variant: str
    with_lm: bool
    group: str
    members: list[Run]


def summary_choices(runs: Sequence[Run]) -> list[SummaryChoice]:
    """Per corpus: the best BiLSTM-CRF, the best GCDoc, the best run of every
    :data:`SUMMARY_ABLATIONS` variant present, then the best BiLSTM-CRF and GCDoc with
    language-model features (:func:`best_group` each)."""
    by_dataset: dict[str, dict[str, list[Run]]] = {}
    for (dataset, group), members in group_runs(runs).items():
        by_dataset.setdefault(dataset, {})[group] = members
    out = []
    for dataset, groups in by_dataset.items():
        plain = {g: rs for g, rs in groups.items() if not rs[0].lm}
        with_lm = {g: rs for g, rs in groups.items() if rs[0].lm}
        choices = [(plain, v) for v in ("baseline", "full", *SUMMARY_ABLATIONS)]
        choices += [(with_lm, v) for v in ("baseline", "full")]
        for candidates, variant in choices:
            best = best_group(candidates, variant)
            if best is not None:
                out.append(SummaryChoice(dataset, variant, candidates is with_lm, *best))
    return out


def summary_rows(runs: Sequence[Run]) -> list[list[str]]:
    """The summary table: per :func:`summary_choices` row its seeds, test F1, stop summary,
    hardware and the paper's F1."""
    rows = []
    for choice in summary_choices(runs):
        dataset, variant, group, members = (choice.dataset, choice.variant, choice.group,
                                            choice.members)
        seeds = ", ".join("?" if r.seed is None else str(r.seed) for r in members)
        f1 = format_mean_std(_values(members, "test", "f1"))
        paper = (_paper_with_bert(dataset, variant) if choice.with_lm
                 else _paper_for_variant(dataset, variant))
        rows.append([
            dataset, SUMMARY_LABELS.get(variant, VARIANT_LABELS[variant])
            + model_notes(members[0]), group,
            f"n={len(members)} ({seeds})", f1, stop_summary(members),
            ", ".join(sorted({r.hardware for r in members})), paper,
        ])
    return rows


#: Flags of a recorded ``train.py`` command that say where and how fast a run went, not what
#: it trained (each with the number of values it takes).
_MACHINE_FLAGS = {"--data-dir": 1, "--device": 1, "--threads": 1, "--quiet": 0,
                  "--max-minutes": 1, "--output-dir": 1, "--seed": 1, "--resume": 1}


def reproduce_command(choice: SummaryChoice) -> str:
    """The ``train.py`` command that trains every seed of a summary row: the recorded
    command of its first run, less the flags of :data:`_MACHINE_FLAGS` (and ``--embeddings``
    naming a copy of GloVe 6B 50d, the default), ``--lm`` pointing at ``$LM``."""
    first = next((r for r in choice.members if "--resume" not in (r.command or "")),
                 choice.members[0])
    words = shlex.split(first.command or "")
    if words and words[0].endswith("train.py"):
        words = words[1:]
    kept: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _MACHINE_FLAGS:
            i += 1 + _MACHINE_FLAGS[word]
            continue
        if word == "--seeds":
            i += 1
            while i < len(words) and not words[i].startswith("--"):
                i += 1
            continue
        if word == "--embeddings" and i + 1 < len(words) and \
                Path(words[i + 1]).name.lower().startswith("glove.6b.50d"):
            i += 2
            continue
        if word == "--lm" and i + 1 < len(words):
            kept += ["--lm", "$LM"]
            i += 2
            continue
        kept.append(word)
        i += 1
    seeds = [str(r.seed) for r in choice.members if r.seed is not None]
    return " ".join(["python scripts/train.py", *(shlex.quote(w) if w != "$LM" else w
                                                    for w in kept),
                     "--seeds", *seeds, "--output-dir", f"runs/{choice.group}"])


def _run_cost(members: Sequence[Run]) -> str:
    minutes = [float(r.metrics["train_seconds"]) / 60 for r in members
               if "train_seconds" in r.metrics]
    epochs = [int(r.metrics["epochs"]) for r in members if "epochs" in r.metrics]
    hardware = ", ".join(sorted({r.hardware.removeprefix("NVIDIA ").split(" ")[0]
                                 for r in members}))
    if not minutes or not epochs:
        return hardware
    return (f"{statistics.fmean(epochs):.0f} epochs, {statistics.fmean(minutes):.0f} min a run, "
            f"{hardware}")


def reproduce_markdown(runs: Sequence[Run]) -> str:
    """The README's reproduce block: for every summary row, the command that trains it and
    what one of its runs cost."""
    lines = ["```bash"]
    for choice in summary_choices(runs):
        label = SUMMARY_LABELS.get(choice.variant, VARIANT_LABELS[choice.variant])
        lines.append(f"# {choice.dataset} {label}{model_notes(choice.members[0])}: "
                     f"{_run_cost(choice.members)}")
        lines.append(reproduce_command(choice))
    lines.append("```")
    return "\n".join(lines) + "\n"


def standing_lines(runs: Sequence[Run]) -> list[str]:
    """Best GCDoc against best BiLSTM-CRF of each corpus (plain and with LM features), by
    Welch's t-test on test F1, when both have at least two seeds."""
    chosen = {(c.dataset, c.variant, c.with_lm): c for c in summary_choices(runs)}
    lines = []
    for (dataset, variant, with_lm), gcdoc in chosen.items():
        base = chosen.get((dataset, "baseline", with_lm))
        if variant != "full" or base is None:
            continue
        a, b = _values(gcdoc.members, "test", "f1"), _values(base.members, "test", "f1")
        if len(a) < 2 or len(b) < 2:
            continue
        _, _, p = welch_t_test(a, b)
        lm = " with LM features" if with_lm else ""
        lines.append(f"{dataset}{lm}: best GCDoc {statistics.fmean(a) - statistics.fmean(b):+.2f}"
                     f" test F1 against the best BiLSTM-CRF (Welch p = {p:.3f}; "
                     f"n = {len(a)} and {len(b)})")
    return lines


PAPER_WITH_BERT: Mapping[str, tuple[float, float]] = MappingProxyType(
    {"conll03": (93.40, 0.02), "ontonotes": (90.49, 0.09)})
"""GCDoc + BERT-large features, test F1 ± std (Wang et al., Tables II and III); the paper has
no BiLSTM-CRF + BERT row."""


def _paper_with_bert(dataset: str, variant: str) -> str:
    value = PAPER_WITH_BERT.get(dataset) if variant == "full" else None
    return f"{_paper_f1(value)} (+ BERT-large)" if value else "–"


def summary_consistency_rows(runs: Sequence[Run]) -> list[list[str]]:
    """Document consistency (test) of the best BiLSTM-CRF and the best GCDoc of each corpus
    (the :func:`summary_choices` of those variants), when their runs recorded it."""
    return [[choice.dataset, *row] for choice in summary_choices(runs)
            if choice.variant in ("baseline", "full")
            for row in consistency_rows({choice.group: choice.members})]


def summary_markdown(runs: Sequence[Run], consistency: bool = False) -> str:
    """The README's summary block (without the markers): the results table, best GCDoc
    against best BiLSTM-CRF, the legend; with ``consistency`` (``RESULTS.md``) also the
    document consistency of the best models."""
    lines = _table(SUMMARY_HEADER, summary_rows(runs))
    standing = standing_lines(runs)
    if standing:
        lines += ["", *(f"- {line}" for line in standing)]
    rows = summary_consistency_rows(runs) if consistency else []
    if rows:
        lines += ["", "Document consistency on test of the same best configurations "
                  "(definitions below):", ""]
        lines += _table(["Corpus", *CONSISTENCY_HEADER], rows)
    lines += [
        "",
        "Best configuration: highest mean dev F1 among the configurations (run directory "
        "without its seed) of that model with the most seeds (up to 3). Test F1: mean ± "
        "sample std over seeds. Converged: early stopping fired (budget-stopped and "
        "max-epochs runs could still improve). Paper: Wang et al., Tables V–VII. "
        + embeddings_note(runs)
        + ("" if consistency else " Document consistency of these models: `RESULTS.md`."),
    ]
    return "\n".join(lines) + "\n"


def replace_block(text: str, block: str, start: str = SUMMARY_START,
                  end: str = SUMMARY_END) -> str:
    """``text`` with everything between the ``start`` and ``end`` markers replaced by
    ``block``.

    Raises:
        ValueError: If the markers are missing or out of order.
    """
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"markers {start} ... {end} not found (in this order)")
    return text[: i + len(start)] + "\n" + block + text[j:]


def read_block(text: str, start: str = SUMMARY_START, end: str = SUMMARY_END) -> str:
    """The text between the markers (as :func:`replace_block` writes it)."""
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"markers {start} ... {end} not found (in this order)")
    return text[i + len(start) + 1: j]


# ------------------------------------------------------------------------------ render
def render(runs: Sequence[Run], speed: Sequence[tuple[str, dict[str, Any]]] = (),
           compare: Sequence[tuple[str, str]] = (), command: str | None = None,
           figure: str | None = None) -> str:
    """The whole markdown report.

    Args:
        runs: The runs (see :func:`find_runs`).
        speed: ``(file name, result)`` of benchmark JSON files.
        compare: Extra pairs for :func:`significance_rows`.
        command: The command that regenerates the report, shown at its top.
        figure: Link (relative to the report) to the Fig. 4 PNG, if one is written.
    """
    lines = ["# Results", ""]
    lines += ["Generated by `scripts/report.py` from the run directories; do not edit by hand."]
    if command:
        lines += ["Regenerate it (and the README's summary block) from the repository root with "
                  f"`python scripts/report.py` (its arguments are recorded in `{ARGS_FILE}`; "
                  "add `--check` to verify instead), which runs", "", "```bash", command, "```"]
    lines.append("")
    if runs:
        lines += [
            embeddings_note(runs),
            "",
            "Every run says why it stopped: **converged** (early stopping fired: `epochs - "
            "best_epoch >= patience`), **budget-stopped** (its wall-clock budget "
            "`--max-minutes` ended it first) or **max-epochs** (it reached `--epochs`). Runs "
            "that record `stop_reason` in `metrics.json` are taken at their word; for older "
            "runs it is derived from their epochs and configuration as just described. Run "
            "dates are `metrics.json`'s `date` (UTC); runs trained before that field existed "
            "carry the author date of the commit that added their `metrics.json`. Hardware "
            "is `metrics.json`'s `hardware`, else `CPU` or the GPU named in the run's name.",
            "",
            "## Summary",
            "",
            summary_markdown(runs, consistency=True).rstrip("\n"),
            "",
        ]
        ablation, _ = ablation_sections(runs, figure)
        lines += ablation
    by_dataset: dict[str, dict[str, list[Run]]] = {}
    for (dataset, group), members in group_runs(runs).items():
        by_dataset.setdefault(dataset, {})[group] = members
    for dataset, groups in by_dataset.items():
        lines += [f"## {dataset}: test scores (mean ± std over seeds)", ""]
        lines += _table(OVERALL_HEADER, overall_rows(dataset, groups))
        types = entity_types(dataset, [r for rs in groups.values() for r in rs])
        lines += ["", f"## {dataset}: per-type test recall", ""]
        lines += _table(["Configuration", "n", *types], recall_rows(dataset, groups))
        lines.append("")
        consistency = consistency_rows(groups)
        if consistency:
            lines += [f"## {dataset}: document consistency on test (mean ± std over seeds)", "",
                      "Mentions are *recurring* when one of their words occurs again in the "
                      "document (the graph can only help those). A string group is the "
                      "mentions of one string in one document (≥ 2); it is inconsistent when "
                      "they get more than one type (gold share in brackets).", ""]
            lines += _table(CONSISTENCY_HEADER, consistency)
            lines.append("")
        significance = significance_rows(groups, compare)
        if significance:
            lines += [f"## {dataset}: GCDoc against the baseline (Welch's t-test on test F1)",
                      ""]
            lines += _table(["Comparison", "Seeds", "Δ test F1", "t", "df", "p (two-sided)",
                             "Stopped"], significance)
            lines.append("")
    if runs:
        lines += ["## Runs", ""]
        lines += _table(
            ["Directory", "Seed", "Command", "Date (UTC)", "Best epoch / epochs, stop",
             "Hardware", "Device / torch", "Embeddings"],
            run_rows(runs),
        )
        lines.append("")
    if speed:
        lines += ["## Speed (scripts/benchmark.py)", "",
                  "One thread, both models on the same batches (FLOPs: analytic; a training "
                  "step counts no backward for the no-grad Monte-Carlo passes):", ""]
        lines += _table(SPEED_HEADER, speed_rows(speed))
        scaling = scaling_rows(speed)
        if scaling:
            lines += ["", "Core settings, each in fresh processes on the same batches "
                      "(target: speed-up ≥ 1.8 with two cores); estimated epoch = train "
                      "tokens / train tok/s + dev tokens / infer tok/s:", ""]
            lines += _table(SCALING_HEADER, scaling)
        lines.append("")
    return "\n".join(lines)


def expand_paths(patterns: Iterable[str]) -> list[str]:
    """Paths from arguments that may be glob patterns (expanded here, sorted), so a quoted
    pattern gives the same result in every shell."""
    paths: list[str] = []
    for pattern in patterns:
        paths += sorted(glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]
    return paths


def load_speed(paths: Iterable[str | Path]) -> list[tuple[str, dict[str, Any]]]:
    """``(file name, benchmark result)`` for every benchmark JSON file."""
    return [(Path(p).name, json.loads(Path(p).read_text(encoding="utf-8")))
            for p in sorted(map(str, paths))]


def regenerate_command(argv: Sequence[str]) -> str:
    """The documented command: ``python scripts/report.py`` and the arguments (``--check``
    left out), one option per line."""
    parts = ["python scripts/report.py"]
    for arg in argv:
        if arg == "--check":
            continue
        quoted = shlex.quote(arg)
        if arg.startswith("--"):
            parts.append(" \\\n    " + quoted)
        else:
            parts.append(" " + quoted)
    return "".join(parts)


def parse_command(command: str) -> list[str]:
    """The arguments of a :func:`regenerate_command` string (inverse of it)."""
    words = shlex.split(command.replace("\\\n", " "))
    if words[:2] != ["python", "scripts/report.py"]:
        raise ValueError(f"not a scripts/report.py command: {command!r}")
    return words[2:]


def documented_command(results_text: str) -> list[str]:
    """The arguments of the command written at the top of a generated RESULTS.md."""
    match = re.search(r"```bash\n(python scripts/report\.py.*?)\n```", results_text, flags=re.S)
    if not match:
        raise ValueError("no regeneration command at the top of the report")
    return parse_command(match.group(1))


def _parser() -> Any:
    import argparse

    parser = argparse.ArgumentParser(description="Markdown results tables from run directories.")
    parser.add_argument("directories", nargs="+", help="directories searched for metrics.json")
    parser.add_argument("--out", required=True, help="markdown file to write (atomically)")
    parser.add_argument("--speed", nargs="*", default=[],
                        help="benchmark JSON files (glob patterns are expanded here, sorted)")
    parser.add_argument("--compare", nargs=2, action="append", default=[], metavar=("A", "B"),
                        help="also test group A against group B (repeatable); both need 2+ seeds")
    parser.add_argument("--readme", help="replace the summary block of this markdown file "
                        f"(between {SUMMARY_START} and {SUMMARY_END})")
    parser.add_argument("--figure", help="write Fig. 4 (window size) to this PNG")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if --out or the --readme block is stale")
    return parser


@dataclass(frozen=True)
class Generated:
    """What one ``scripts/report.py`` command produces (before anything is written)."""

    runs: list[Run]
    report: str
    """The markdown report (``--out``)."""
    summary: str
    """The README's summary block (``--readme``)."""
    selections: list[str]
    """The selection line of every ablation table."""
    speed_files: list[str]
    reproduce: str = ""
    """The README's reproduce block (the ``train.py`` command of every summary row)."""


def generate(argv: Sequence[str]) -> Generated:
    """Everything ``scripts/report.py argv`` writes, as text (paths relative to the cwd).

    Raises:
        SystemExit: On bad arguments (argparse), e.g. ``--compare`` naming no group.
    """
    parser = _parser()
    args = parser.parse_args(list(argv))
    runs = find_runs(args.directories)
    groups = {group for _, group in group_runs(runs)}
    unknown = sorted({name for pair in args.compare for name in pair} - groups)
    if unknown:
        parser.error(f"--compare: no runs form the group(s) {', '.join(unknown)} "
                     f"(groups are run directory names without -s<seed>)")
    speed = expand_paths(args.speed)
    figure_link = None
    if args.figure:
        figure_link = Path(os.path.relpath(Path(args.figure).resolve(),
                                           Path(args.out).resolve().parent)).as_posix()
    text = render(runs, load_speed(speed), [tuple(pair) for pair in args.compare],
                  command=regenerate_command(argv), figure=figure_link)
    _, selections = ablation_sections(runs)
    return Generated(runs, text, summary_markdown(runs), selections, speed,
                     reproduce_markdown(runs))


#: The arguments that regenerate the committed results documents, one per line: what
#: ``python scripts/report.py`` (no arguments, or only ``--check``) runs. Written whenever
#: the report is generated into :data:`DEFAULT_OUT`.
ARGS_FILE = "benchmarks/results/report.args"
DEFAULT_OUT = "benchmarks/results/RESULTS.md"


def recorded_arguments(path: str | Path = ARGS_FILE) -> list[str]:
    """The recorded arguments of the committed results documents (:data:`ARGS_FILE`)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no recorded report arguments; run scripts/report.py "
                                "with its arguments once (see benchmarks/results/RESULTS.md)")
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line of ``scripts/report.py``.

    Writes the markdown report (``--out``), the README's summary block between its markers
    (``--readme``) and the Fig. 4 PNG (``--figure``); with ``--check`` writes nothing and
    exits 1 when the report or the README block differ from what the runs give. Without
    arguments (or with only ``--check``) it uses the recorded ones (:data:`ARGS_FILE`), so
    ``python scripts/report.py`` regenerates every committed document.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    recorded = None
    if not [a for a in argv if a != "--check"]:
        recorded = recorded_arguments()
        argv = recorded + [a for a in argv if a == "--check"]
    args = _parser().parse_args(argv)
    made = generate([a for a in argv if a != "--check"])
    if args.check:
        stale = []
        out = Path(args.out)
        if not out.is_file() or out.read_text(encoding="utf-8") != made.report:
            stale.append(str(out))
        if args.readme:
            text = Path(args.readme).read_text(encoding="utf-8")
            if read_block(text) != made.summary:
                stale.append(f"{args.readme} (summary block)")
            if REPRODUCE_START in text and \
                    read_block(text, REPRODUCE_START, REPRODUCE_END) != made.reproduce:
                stale.append(f"{args.readme} (reproduce block)")
        if stale:
            explicit = [a for a in argv if a != "--check"]
            same = recorded is not None or (Path(ARGS_FILE).is_file()
                                            and explicit == recorded_arguments())
            advice = "python scripts/report.py" if same else regenerate_command(argv)
            print(f"stale: {', '.join(stale)}; regenerate with: {advice}", file=sys.stderr)
            return 1
        print(f"up to date: {args.out}{' and ' + args.readme if args.readme else ''}")
        return 0
    atomic_write_text(args.out, made.report)
    if Path(args.out).resolve() == Path(DEFAULT_OUT).resolve():
        atomic_write_text(ARGS_FILE, "".join(f"{a}\n" for a in argv))
    if args.readme:
        readme = Path(args.readme)
        text = replace_block(readme.read_text(encoding="utf-8"), made.summary)
        if REPRODUCE_START in text:  # the reproduce block is optional
            text = replace_block(text, made.reproduce, REPRODUCE_START, REPRODUCE_END)
        atomic_write_text(readme, text)
    if args.figure:
        plot_window(window_selection(made.runs), args.figure)
    for line in made.selections:
        print(line)
    print(
        f"wrote {args.out}: {len(made.runs)} runs in {len(group_runs(made.runs))} groups, "
        f"{len(made.speed_files)} speed files"
        + (f"; summary block of {args.readme}" if args.readme else "")
        + (f"; {args.figure}" if args.figure else "")
    )
    return 0
