"""The command line of ``scripts/report.py``: read the runs and the speed files, write (or
check) ``RESULTS.md``, the README's generated blocks and Fig. 4."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from glob import glob
from pathlib import Path
from typing import Any

from docgraph.runtime.atomic import atomic_write_text
from docgraph_dev.report.document import ablation_sections, render
from docgraph_dev.report.figure import plot_window
from docgraph_dev.report.regenerate import (
    ARGS_FILE,
    DEFAULT_OUT,
    recorded_arguments,
    regenerate_command,
)
from docgraph_dev.report.runs import Run, find_runs, group_runs
from docgraph_dev.report.selection import window_selection
from docgraph_dev.report.summary import (
    REPRODUCE_END,
    REPRODUCE_START,
    SUMMARY_END,
    SUMMARY_START,
    read_block,
    replace_block,
    reproduce_markdown,
    summary_markdown,
)


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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description="Markdown results tables from run directories.")
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
