"""Markdown results tables generated from run directories (never typed by hand).

A run directory holds ``metrics.json`` (see :func:`docgraph.training.run_experiment`),
``command.txt``, ``train_log.jsonl`` and ``config.json``. Runs are grouped by configuration
name: the run directory name minus a trailing ``-s<seed>`` / ``seed-<n>`` (a directory named
just ``seed-<n>`` takes its parent's name). Each group gets mean ± sample standard deviation
over its seeds, next to the paper's numbers.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from docgraph.checkpoint import atomic_write_text

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

_SEED_SUFFIX = re.compile(r"^(?P<name>.+?)-(?:s|seed-?)(?P<seed>\d+)$")
_SEED_DIR = re.compile(r"^seed-?(?P<seed>\d+)$")


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
    """Read one run directory from the path of its ``metrics.json``."""
    directory = metrics_path.parent
    metrics = json.loads(metrics_path.read_text())
    if "config" not in metrics and (directory / "config.json").is_file():
        metrics["config"] = json.loads((directory / "config.json").read_text())
    command = metrics.get("command") or ""
    if not command and (directory / "command.txt").is_file():
        command = (directory / "command.txt").read_text().strip()
    group, seed = split_run_name(directory)
    if metrics.get("seed") is not None:
        seed = int(metrics["seed"])
    date = _dt.datetime.fromtimestamp(metrics_path.stat().st_mtime).isoformat(timespec="minutes")
    return Run(directory, group, seed, metrics, command, date)


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
    """``"91.23 ± 0.15"`` (two decimals); ``"–"`` when there is no value."""
    if not values:
        return "–"
    mean, std = mean_std(values)
    return f"{mean:.2f} ± {std:.2f}"


def _score(run: Run, split: str, key: str) -> float | None:
    value = run.metrics.get(split, {}).get(key)
    return None if value is None else float(value)


def _values(runs: Sequence[Run], split: str, key: str) -> list[float]:
    return [v for r in runs if (v := _score(r, split, key)) is not None]


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def overall_rows(dataset: str, groups: Mapping[str, list[Run]]) -> list[list[str]]:
    """Rows of the overall table: test P/R/F1 mean ± std, dev F1, epochs, minutes, paper."""
    rows = []
    for group, runs in groups.items():
        paper = PAPER_OVERALL.get(dataset, {}).get(paper_row(group) or "")
        epochs = ", ".join(
            f"{r.metrics.get('best_epoch', '?')}/{r.metrics.get('epochs', '?')}" for r in runs
        )
        minutes = [
            float(r.metrics["train_seconds"]) / 60 for r in runs if "train_seconds" in r.metrics
        ]
        rows.append(
            [
                group,
                str(len(runs)),
                format_mean_std(_values(runs, "test", "precision")),
                format_mean_std(_values(runs, "test", "recall")),
                format_mean_std(_values(runs, "test", "f1")),
                format_mean_std(_values(runs, "dev", "f1")),
                epochs,
                f"{statistics.fmean(minutes):.1f}" if minutes else "–",
                " / ".join(f"{v:.2f}" for v in paper) if paper else "–",
            ]
        )
    return rows


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
    baseline trained differently); pairs naming a group that is absent here are skipped.
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
        ])
    return rows


def run_rows(runs: Iterable[Run]) -> list[list[str]]:
    """One row per run: directory, seed, command, date, device/torch, embeddings."""
    return [
        [
            f"`{r.directory}`",
            "–" if r.seed is None else str(r.seed),
            f"`{r.command}`" if r.command else "–",
            r.date,
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


def _cpu_ratio(result: dict[str, Any], kind: str) -> str:
    value = result.get(f"{kind}_cost_ratio_cpu_time")
    return "–" if value is None else f"{value:.2f}"


def speed_rows(results: Iterable[tuple[str, dict[str, Any]]]) -> list[list[str]]:
    """One row per benchmark JSON (see :mod:`docgraph.benchmark`)."""
    rows = []
    for name, s in results:
        b, g = s["baseline"], s["gcdoc"]
        rows.append(
            [
                f"`{name}`",
                str(s.get("date", "?")),
                f"{s['dataset']}{' (quick)' if s.get('quick') else ''}",
                ", ".join(f"{k}={v}" for k, v in sorted(s.get("model_overrides", {}).items()))
                or "paper (faithful)",
                f"{s.get('threads', '?')} / {s.get('cpu', '?')}",
                f"{s['graph_build_seconds']:.2f}",
                f"{b['train_tokens_per_s']:.0f}",
                f"{g['train_tokens_per_s']:.0f}",
                f"{s['train_cost_ratio']:.2f} (≤ {s['train_cost_ratio_target']:g}: "
                f"{'met' if s['train_cost_ratio_met'] else 'not met'})",
                _cpu_ratio(s, "train"),
                f"{b['infer_tokens_per_s']:.0f}",
                f"{g['infer_tokens_per_s']:.0f}",
                f"{s['infer_cost_ratio']:.2f} (≤ {s['infer_cost_ratio_target']:g}: "
                f"{'met' if s['infer_cost_ratio_met'] else 'not met'})",
                _cpu_ratio(s, "infer"),
                f"{g['train_gflops_per_s']:.1f} / {s['matmul_gflops_per_s']:.1f}",
            ]
        )
    return rows


def render(runs: Sequence[Run], speed: Sequence[tuple[str, dict[str, Any]]] = (),
           compare: Sequence[tuple[str, str]] = ()) -> str:
    """The whole markdown report (``compare``: extra pairs for :func:`significance_rows`)."""
    lines = [
        "# Results",
        "",
        "Generated by `scripts/report.py` from the run directories; do not edit by hand.",
        "",
    ]
    if runs:
        lines += [embeddings_note(runs), ""]
    by_dataset: dict[str, dict[str, list[Run]]] = {}
    for (dataset, group), members in group_runs(runs).items():
        by_dataset.setdefault(dataset, {})[group] = members
    for dataset, groups in by_dataset.items():
        lines += [f"## {dataset}: test scores (mean ± std over seeds)", ""]
        lines += _table(
            [
                "Configuration",
                "n",
                "Test P",
                "Test R",
                "Test F1",
                "Dev F1",
                "Best epoch / epochs",
                "Train min",
                "Paper P / R / F1",
            ],
            overall_rows(dataset, groups),
        )
        types = entity_types(dataset, [r for rs in groups.values() for r in rs])
        lines += ["", f"## {dataset}: per-type test recall", ""]
        lines += _table(["Configuration", "n", *types], recall_rows(dataset, groups))
        lines.append("")
        significance = significance_rows(groups, compare)
        if significance:
            lines += [f"## {dataset}: GCDoc against the baseline (Welch's t-test on test F1)",
                      ""]
            lines += _table(["Comparison", "Seeds", "Δ test F1", "t", "df", "p (two-sided)"],
                            significance)
            lines.append("")
    if runs:
        lines += ["## Runs", ""]
        lines += _table(
            ["Directory", "Seed", "Command", "Date", "Device / torch", "Embeddings"], run_rows(runs)
        )
        lines.append("")
    if speed:
        lines += ["## Speed (scripts/benchmark.py)", ""]
        lines += _table(
            [
                "File",
                "Date",
                "Data",
                "GCDoc variant",
                "Threads / CPU",
                "Graph build s",
                "Base train tok/s",
                "GCDoc train tok/s",
                "Train ratio",
                "Train ratio (CPU time)",
                "Base infer tok/s",
                "GCDoc infer tok/s",
                "Infer ratio",
                "Infer ratio (CPU time)",
                "GCDoc train GFLOP/s / matmul GFLOP/s",
            ],
            speed_rows(speed),
        )
        lines.append("")
    return "\n".join(lines)


def load_speed(paths: Iterable[str | Path]) -> list[tuple[str, dict[str, Any]]]:
    """``(file name, benchmark result)`` for every benchmark JSON file."""
    return [(Path(p).name, json.loads(Path(p).read_text())) for p in sorted(map(str, paths))]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line of ``scripts/report.py``."""
    import argparse

    parser = argparse.ArgumentParser(description="Markdown results tables from run directories.")
    parser.add_argument("directories", nargs="+", help="directories searched for metrics.json")
    parser.add_argument("--out", required=True, help="markdown file to write (atomically)")
    parser.add_argument("--speed", nargs="*", default=[], help="benchmark JSON files")
    parser.add_argument("--compare", nargs=2, action="append", default=[], metavar=("A", "B"),
                        help="also test group A against group B (repeatable); both need 2+ seeds")
    args = parser.parse_args(argv)
    runs = find_runs(args.directories)
    groups = {group for _, group in group_runs(runs)}
    unknown = sorted({name for pair in args.compare for name in pair} - groups)
    if unknown:
        parser.error(f"--compare: no runs form the group(s) {', '.join(unknown)} "
                     f"(groups are run directory names without -s<seed>)")
    text = render(runs, load_speed(args.speed), [tuple(pair) for pair in args.compare])
    atomic_write_text(args.out, text)
    print(
        f"wrote {args.out}: {len(runs)} runs in {len(group_runs(runs))} groups, "
        f"{len(args.speed)} speed files"
    )
    return 0
