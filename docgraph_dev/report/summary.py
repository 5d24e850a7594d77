"""The README's generated blocks: the summary of the best configurations (also a section of
``RESULTS.md``) and the command that trains each of them, and the markers around the blocks.
"""

from __future__ import annotations

import shlex
import statistics
from collections.abc import Sequence
from pathlib import Path

from docgraph.cli.arguments import value_flags
from docgraph.config.fields import MACHINE
from docgraph.persistence.shipped import MANIFEST, SHIPPED_DIR, shipped_models
from docgraph.runtime.integrity import read_json_file
from docgraph_dev.report.runs import VARIANT_LABELS, Run, score_values, stop_summary
from docgraph_dev.report.selection import SummaryChoice, summary_choices
from docgraph_dev.report.stats import welch_t_test
from docgraph_dev.report.tables import (
    CONSISTENCY_HEADER,
    SUMMARY_HEADER,
    SUMMARY_LABELS,
    embeddings_note,
    markdown_table,
    model_notes,
    summary_consistency_rows,
    summary_rows,
)

SUMMARY_START = "<!-- summary:start -->"
SUMMARY_END = "<!-- summary:end -->"
REPRODUCE_START = "<!-- reproduce:start -->"
REPRODUCE_END = "<!-- reproduce:end -->"
"""Markers around the generated summary block of the README."""


#: Flags of a recorded ``train.py`` command that say where and how fast a run went, not what
#: it trained (each with the number of values it takes): the flags of the fields marked
#: :data:`~docgraph.config.fields.MACHINE`, the paths, the seed (the command gives ``--seeds``)
#: and the flags of ``train.py`` that are no setting.
_MACHINE_FLAGS = {**{flag: 1 for flag, declared in value_flags().items()
                     if MACHINE in declared.setting.marks},
                  "--data-dir": 1, "--output-dir": 1, "--seed": 1, "--resume": 1, "--quiet": 0}


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
        a, b = score_values(gcdoc.members, "test", "f1"), score_values(base.members, "test", "f1")
        if len(a) < 2 or len(b) < 2:
            continue
        _, _, p = welch_t_test(a, b)
        lm = " with LM features" if with_lm else ""
        lines.append(f"{dataset}{lm}: best GCDoc {statistics.fmean(a) - statistics.fmean(b):+.2f}"
                     f" test F1 against the best BiLSTM-CRF (Welch p = {p:.3f}; "
                     f"n = {len(a)} and {len(b)})")
    return lines


def shipped_lines(runs: Sequence[Run]) -> list[str]:
    """One line per shipped model (:mod:`docgraph.persistence.shipped`) whose run is among
    ``runs``: its name, run, the run's test F1 (and the threshold the shipped model tags at,
    when it is not the trained one) and how the run ended."""
    by_name = {run.directory.name: run for run in runs}
    lines = []
    for name in shipped_models():
        manifest = read_json_file(SHIPPED_DIR / name / MANIFEST)
        run = by_name.get(str(manifest.get("run")))
        if run is None:
            continue
        f1 = score_values([run], "test", "f1")
        config = read_json_file(SHIPPED_DIR / name / "config.json")
        tagging = config.get("model", {}).get("threshold")
        trained = run.config.get("model", {}).get("threshold")
        threshold = ("" if None in (tagging, trained) or tagging == trained
                     else f" at threshold {trained:g} (tags at {tagging:g})")
        lines.append(f"shipped [`{name}`](docs/models.md#{name}): run "
                     f"{run.directory.name}, test F1 {f1[0]:.2f}{threshold}, "
                     f"{stop_summary([run])}, {run.hardware}")
    return lines


def summary_markdown(runs: Sequence[Run], consistency: bool = False) -> str:
    """The README's summary block (without the markers): the results table, best GCDoc
    against best BiLSTM-CRF, the legend; with ``consistency`` (``RESULTS.md``) also the
    document consistency of the best models."""
    lines = markdown_table(SUMMARY_HEADER, summary_rows(runs))
    standing = [*standing_lines(runs), *shipped_lines(runs)]
    if standing:
        lines += ["", *(f"- {line}" for line in standing)]
    rows = summary_consistency_rows(runs) if consistency else []
    if rows:
        lines += ["", "Document consistency on test of the same best configurations "
                  "(definitions below):", ""]
        lines += markdown_table(["Corpus", *CONSISTENCY_HEADER], rows)
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
