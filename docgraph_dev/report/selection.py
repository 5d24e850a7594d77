"""Which runs a table shows: for each ablation table and Fig. 4 the runs of one setting
(:func:`select_runs`), for the summary the best configuration of each model
(:func:`summary_choices`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docgraph_dev.report.paper import WINDOW_VARIANTS
from docgraph_dev.report.runs import Run, describe_setting, group_runs, score_values, setting_key


@dataclass(frozen=True)
class Selection:
    """The runs one ablation table shows: those of one setting
    (:func:`~docgraph_dev.report.runs.setting_key`)."""

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

    Among the settings (:func:`~docgraph_dev.report.runs.setting_key`: same training
    settings, hardware, embeddings and fixed model fields) the one that fills the most rows is
    chosen, then the one with the most seeds, the most converged runs, the latest run, and last
    the greatest key (so the choice never depends on file order). A seed counts once per row
    (:func:`_one_per_seed`).
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


def window_selection(runs: Iterable[Run], dataset: str = "conll03") -> Selection:
    """The runs of Fig. 4 (window size k = 1..4, full model otherwise)."""
    return select_runs(runs, dataset, [v for _, v in WINDOW_VARIANTS])


SUMMARY_SEEDS = 3
"""Seeds a configuration needs to rank as fully replicated on the summary: a one-seed sweep
point with a lucky dev score must not displace a configuration measured over three seeds."""


def best_group(groups: Mapping[str, list[Run]], variant: str) -> tuple[str, list[Run]] | None:
    """The configuration of ``variant`` to show on the summary.

    Among the configurations with the most seeds (counted up to :data:`SUMMARY_SEEDS`), the one
    with the highest mean dev F1; then more seeds, then the name.
    """
    candidates = [(g, rs) for g, rs in groups.items()
                  if rs[0].variant == variant and score_values(rs, "dev", "f1")]
    if not candidates:
        return None
    return max(candidates, key=lambda item: (min(len(item[1]), SUMMARY_SEEDS),
                                             statistics.fmean(score_values(item[1], "dev", "f1")),
                                             len(item[1]), item[0]))


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
