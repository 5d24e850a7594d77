"""Markdown results tables and figures generated from run directories (never typed by hand).

``python scripts/report.py`` (:func:`~docgraph_dev.report.cli.main`) writes
``benchmarks/results/RESULTS.md``, the README's generated blocks and Fig. 4. One job per
module:

* :mod:`~docgraph_dev.report.paper`: the paper's numbers;
* :mod:`~docgraph_dev.report.runs`: run directories read and classified (configuration
  name and seed, model variant, setting, hardware, why the run stopped);
* :mod:`~docgraph_dev.report.selection`: which runs each table shows;
* :mod:`~docgraph_dev.report.stats`: mean ± std and Welch's t-test;
* :mod:`~docgraph_dev.report.tables`: the rows of every table;
* :mod:`~docgraph_dev.report.summary`: the README's summary and reproduce blocks;
* :mod:`~docgraph_dev.report.figure`: Fig. 4 as a PNG;
* :mod:`~docgraph_dev.report.document`: the whole ``RESULTS.md``, section by section;
* :mod:`~docgraph_dev.report.regenerate`: the recorded command that regenerates it;
* :mod:`~docgraph_dev.report.cli`: the command line.

The names below are re-exported here for the scripts and tests.
"""

from docgraph_dev.report.cli import Generated, generate, main
from docgraph_dev.report.document import render
from docgraph_dev.report.figure import plot_window
from docgraph_dev.report.paper import (
    PAPER_OVERALL,
    PAPER_RECALL,
    PAPER_TABLES,
    PAPER_WINDOW,
    PAPER_WITH_BERT,
    PaperTable,
)
from docgraph_dev.report.regenerate import (
    ARGS_FILE,
    DEFAULT_OUT,
    documented_command,
    parse_command,
    recorded_arguments,
    regenerate_command,
)
from docgraph_dev.report.runs import (
    Run,
    find_runs,
    group_runs,
    hardware,
    lm_name,
    load_run,
    model_variant,
    paper_row,
    run_stop_reason,
    setting_key,
    split_run_name,
)
from docgraph_dev.report.selection import (
    Selection,
    SummaryChoice,
    best_group,
    select_runs,
    summary_choices,
    window_selection,
)
from docgraph_dev.report.stats import mean_std, regularized_beta, welch_t_test
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
from docgraph_dev.report.tables import (
    OVERALL_HEADER,
    consistency_rows,
    embeddings_note,
    model_notes,
    overall_rows,
    paper_table_rows,
    recall_rows,
    significance_rows,
    summary_rows,
    window_rows,
)

__all__ = [
    "ARGS_FILE",
    "DEFAULT_OUT",
    "OVERALL_HEADER",
    "PAPER_OVERALL",
    "PAPER_RECALL",
    "PAPER_TABLES",
    "PAPER_WINDOW",
    "PAPER_WITH_BERT",
    "REPRODUCE_END",
    "REPRODUCE_START",
    "SUMMARY_END",
    "SUMMARY_START",
    "Generated",
    "PaperTable",
    "Run",
    "Selection",
    "SummaryChoice",
    "best_group",
    "consistency_rows",
    "documented_command",
    "embeddings_note",
    "find_runs",
    "generate",
    "group_runs",
    "hardware",
    "lm_name",
    "load_run",
    "main",
    "mean_std",
    "model_notes",
    "model_variant",
    "overall_rows",
    "paper_row",
    "paper_table_rows",
    "parse_command",
    "plot_window",
    "read_block",
    "recall_rows",
    "recorded_arguments",
    "regenerate_command",
    "regularized_beta",
    "render",
    "replace_block",
    "reproduce_markdown",
    "run_stop_reason",
    "select_runs",
    "setting_key",
    "significance_rows",
    "split_run_name",
    "summary_choices",
    "summary_markdown",
    "summary_rows",
    "welch_t_test",
    "window_rows",
    "window_selection",
]
