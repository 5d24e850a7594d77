"""Run directories read and classified: what each run is, how it ended and what it ran on.

A run directory holds ``metrics.json`` (see :func:`docgraph.training.experiment.run_experiment`),
``command.txt``, ``train_log.jsonl`` and ``config.json``. Runs are grouped by configuration
name: the run directory name minus a trailing ``-s<seed>`` / ``seed-<n>`` (a directory named
just ``seed-<n>`` takes its parent's name).

Every run is classified by its model configuration (:func:`model_variant`) into a row of the
paper's ablation tables, keyed by its training settings and hardware (:func:`setting_key`),
and labelled by why it stopped (:func:`run_stop_reason`): only a run whose early stopping
fired counts as *converged*; the others were cut by their time budget or their epoch cap.

Fields read from ``metrics.json`` beyond the scores: ``epochs``, ``best_epoch``,
``train_seconds``, ``seed``, ``config``, ``command``, ``torch``, ``device``, and, where the
training code records them, ``date`` (ISO 8601 UTC, e.g. ``2026-11-26T09:58``),
``stop_reason`` (``"early_stopping"``, ``"budget"`` or ``"max_epochs"``) and ``hardware``
(e.g. ``"NVIDIA H200"``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from docgraph.config import ExperimentConfig, GCDocConfig, TrainConfig
from docgraph.config.fields import CAP, MACHINE, SHARDING, VARIANT, fields_marked
from docgraph.runtime.integrity import read_json_file
from docgraph_dev.report.paper import BASELINE_ROW, GCDOC_ROW

_SEED_SUFFIX = re.compile(r"^(?P<name>.+?)-(?:s|seed-?)(?P<seed>\d+)$")
_SEED_DIR = re.compile(r"^seed-?(?P<seed>\d+)$")
_GPU_TAG = re.compile(r"(?:^|-)(?P<tag>[ahv]\d{2,3})(?:-|$)")


STOP_LABELS: Mapping[str, str] = MappingProxyType(
    {"early_stopping": "converged", "budget": "budget-stopped", "max_epochs": "max-epochs",
     "unknown": "stop reason unknown"}
)
"""``stop_reason`` -> the word the tables use. Only ``early_stopping`` is *converged*."""

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

ROW_FIELDS = fields_marked(GCDocConfig, VARIANT)
"""Model fields that decide a run's row; every other setting must match within a table."""

_FREE_TRAIN_FIELDS = tuple(sorted({name for mark in (CAP, MACHINE, SHARDING)
                                   for name in fields_marked(TrainConfig, mark)}))
"""Training fields that may differ within a table (caps, threads, CPU processes, evaluation
batching): they change the speed, not the model (docs/experiments.md, "DDP gives the model of
one process")."""


def _config_defaults() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Defaults of the model, graph and training configuration as a run records them (fill
    fields old runs lack; every field, ``default_factory`` ones such as ``skip_tokens`` too)."""
    recorded = ExperimentConfig().to_dict()
    return recorded["model"], recorded["graph"], recorded["train"]


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
        """Why training stopped, see :func:`run_stop_reason`."""
        return run_stop_reason(self.metrics)

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


def run_stop_reason(metrics: Mapping[str, Any]) -> str:
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
    whether dev/test words with a vector were added to the vocabulary, every model field except
    :data:`ROW_FIELDS`, the graph construction and the training settings except the caps,
    threads and CPU processes (:data:`_FREE_TRAIN_FIELDS`). Fields an older run lacks take
    today's defaults.
    """
    model_defaults, graph_defaults, train_defaults = _config_defaults()
    model = {**model_defaults, **(run.config.get("model") or {})}
    train = {**train_defaults, **(run.config.get("train") or {})}
    key = {
        "dataset": run.dataset,
        "hardware": _hardware_kind(run),
        "embeddings": pretty_embeddings(run.embeddings),
        "lm": run.lm,
        "vocab_eval_words": bool(run.config.get("vocab_eval_words", True)),
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
        *([] if s.get("vocab_eval_words", True) else ["training words only"]),
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
        # a run's record: runs written before docgraph sealed its files carry no seal
        metrics["config"] = read_json_file(directory / "config.json", sealed=False)
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


def _score(run: Run, split: str, key: str) -> float | None:
    value = run.metrics.get(split, {}).get(key)
    return None if value is None else float(value)


def score_values(runs: Sequence[Run], split: str, key: str) -> list[float]:
    """The ``split`` ``key`` scores (e.g. test F1) of the runs that recorded one."""
    return [v for r in runs if (v := _score(r, split, key)) is not None]


def pretty_embeddings(name: str) -> str:
    """``GloVe 6B 50d`` for the package and for text files cut from it (``glove.6B.50d*``)."""
    if name == "glove-6b-50d" or Path(name).name.startswith("glove.6B.50d"):
        return "GloVe 6B 50d"
    return name
