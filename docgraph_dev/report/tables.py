"""The rows of every results table, cell by cell, and the markdown table they make: scores per
configuration, per-type recall, document consistency, significance, the paper's ablation
tables, Fig. 4 as a table, the summary, the runs and the speed measurements.

Each table says mean ± sample standard deviation over the seeds of a configuration, next to
the paper's numbers (:mod:`~docgraph_dev.report.paper`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from docgraph.metrics import against_majority, bucket_f1, mixed_share
from docgraph_dev.report.paper import (
    BASELINE_ROW,
    CONLL_TYPES,
    GCDOC_ROW,
    PAPER_EMBEDDINGS,
    PAPER_OVERALL,
    PAPER_RECALL,
    PAPER_TABLES,
    PAPER_WINDOW,
    PAPER_WITH_BERT,
    WINDOW_VARIANTS,
    PaperTable,
)
from docgraph_dev.report.runs import (
    VARIANT_LABELS,
    Run,
    pretty_embeddings,
    score_values,
    stop_label,
    stop_summary,
)
from docgraph_dev.report.selection import Selection, summary_choices
from docgraph_dev.report.stats import mean_std, welch_t_test


def format_mean_std(values: Sequence[float]) -> str:
    """``"91.23 ± 0.15"`` (two decimals); one value alone is just ``"91.23"`` (no spread to
    show); ``"–"`` when there is no value."""
    if not values:
        return "–"
    mean, std = mean_std(values)
    return f"{mean:.2f}" if len(values) == 1 else f"{mean:.2f} ± {std:.2f}"


def _paper_f1(value: tuple[float, float] | None) -> str:
    return "–" if value is None else f"{value[0]:.2f} ± {value[1]:.2f}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """The lines of a markdown table with ``header`` and ``rows``."""
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
                format_mean_std(score_values(runs, "test", "precision")),
                format_mean_std(score_values(runs, "test", "recall")),
                format_mean_std(score_values(runs, "test", "f1")),
                format_mean_std(score_values(runs, "dev", "f1")),
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
        ours, theirs = score_values(runs, "test", "f1"), score_values(partner, "test", "f1")
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


def embeddings_note(runs: Iterable[Run]) -> str:
    """The note line comparing our word embeddings with the paper's."""
    names = sorted({pretty_embeddings(r.embeddings) for r in runs})
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
    """One row per speed JSON (see :mod:`docgraph_dev.speed`): the one-thread figures."""
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

        def cell(values: list[float | None], unit: str = "") -> str:
            # the seeds with something to count (n/a when none has)
            counted = [v for v in values if v is not None]
            return f"{format_mean_std(counted)}{unit}" if counted else "n/a"

        gold = mixed_share(records[0]["gold"])
        rows.append([
            group, str(len(members)), format_mean_std(score_values(members, split, "f1")),
            cell([bucket_f1(c["recurrent"]) for c in records]),
            cell([bucket_f1(c["singleton"]) for c in records]),
            f"{cell([mixed_share(c['pred']) for c in records], '%')} "
            f"({'n/a' if gold is None else f'{gold:.1f}%'})",
            cell([against_majority(c["pred"]) for c in records], "%"),
            stop_summary(members),
        ])
    return rows


NOT_CONVERGED_MARK = "†"
ABLATION_HEADER = ("No", "Row", "Runs (configurations)", "n", "Test F1", "Stopped", "Paper F1")


def ablation_row(number: int, label: str, runs: Sequence[Run],
                 paper: tuple[float, float] | None) -> list[str]:
    """One row of an ablation table: test F1 mean ± std over ``runs`` (``†`` when any of them
    did not converge), or ``not run``; the paper's F1 ± std beside it."""
    if not runs:
        return [str(number), label, "–", "0", "not run", "–", _paper_f1(paper)]
    f1 = format_mean_std(score_values(runs, "test", "f1"))
    if not all(r.converged for r in runs):
        f1 += f" {NOT_CONVERGED_MARK}"
    groups = ", ".join(sorted({r.group for r in runs}))
    return [str(number), label, groups, str(len(runs)), f1, stop_summary(runs), _paper_f1(paper)]


def paper_table_rows(table: PaperTable, selection: Selection) -> list[list[str]]:
    """The rows of one paper table for the selected runs."""
    paper = table.paper.get(selection.dataset, {})
    return [ablation_row(i, label, selection.rows.get(variant, []), paper.get(variant))
            for i, (variant, label) in enumerate(table.rows, start=1)]


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


SUMMARY_LABELS: Mapping[str, str] = MappingProxyType({
    "baseline": "BiLSTM-CRF", "full": "GCDoc",
    "cross_only": "GCDoc without the document graph (cross-sentence module only)",
    "graph_only": "GCDoc without the cross-sentence module (document graph only)"})
"""Names in the summary where they differ from
:data:`~docgraph_dev.report.runs.VARIANT_LABELS`."""

SUMMARY_HEADER = ("Corpus", "Model", "Best configuration (by dev F1)", "Seeds", "Test F1",
                  "Stopped", "Hardware", "Paper F1")


def _paper_for_variant(dataset: str, variant: str) -> str:
    for table in PAPER_TABLES:
        value = table.paper.get(dataset, {}).get(variant)
        if value is not None:
            return f"{_paper_f1(value)} ({table.title.split(':')[0]})"
    return "–"


def model_notes(run: Run) -> str:
    """``" (frozen embeddings, fast approximations)"``: how a run's model departs from the
    paper's beyond its module switches (empty when it does not)."""
    model = run.config.get("model") or {}
    notes = [f"+ {run.lm} features"] if run.lm else []
    if model.get("freeze_embeddings"):
        notes.append("frozen embeddings")
    if not run.config.get("vocab_eval_words", True):
        notes.append("training words only")
    if model.get("window_encoding", "concat") != "concat" or model.get("mc_dropout",
                                                                         "full") != "full":
        notes.append("fast approximations")
    return f" ({', '.join(notes)})" if notes else ""


def summary_rows(runs: Sequence[Run]) -> list[list[str]]:
    """The summary table: per :func:`~docgraph_dev.report.selection.summary_choices` row
    its seeds, test F1, stop summary, hardware and the paper's F1."""
    rows = []
    for choice in summary_choices(runs):
        dataset, variant, group, members = (choice.dataset, choice.variant, choice.group,
                                            choice.members)
        seeds = ", ".join("?" if r.seed is None else str(r.seed) for r in members)
        f1 = format_mean_std(score_values(members, "test", "f1"))
        paper = (_paper_with_bert(dataset, variant) if choice.with_lm
                 else _paper_for_variant(dataset, variant))
        rows.append([
            dataset, SUMMARY_LABELS.get(variant, VARIANT_LABELS[variant])
            + model_notes(members[0]), group,
            f"n={len(members)} ({seeds})", f1, stop_summary(members),
            ", ".join(sorted({r.hardware for r in members})), paper,
        ])
    return rows


def _paper_with_bert(dataset: str, variant: str) -> str:
    value = PAPER_WITH_BERT.get(dataset) if variant == "full" else None
    return f"{_paper_f1(value)} (+ BERT-large)" if value else "–"


def summary_consistency_rows(runs: Sequence[Run]) -> list[list[str]]:
    """Document consistency (test) of the best BiLSTM-CRF and the best GCDoc of each corpus
    (the :func:`~docgraph_dev.report.selection.summary_choices` of those variants), when
    their runs recorded it."""
    return [[choice.dataset, *row] for choice in summary_choices(runs)
            if choice.variant in ("baseline", "full")
            for row in consistency_rows({choice.group: choice.members})]
