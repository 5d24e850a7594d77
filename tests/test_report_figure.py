"""Tests of :mod:`docgraph_dev.report.figure`: Fig. 4 drawn as a PNG, ours beside the
paper's."""

from __future__ import annotations

from pathlib import Path

from report_runs import ablation_run, model_section

from docgraph_dev.report.figure import plot_window
from docgraph_dev.report.runs import find_runs
from docgraph_dev.report.selection import Selection, window_selection

PNG = b"\x89PNG\r\n\x1a\n"


def test_window_figure_is_written(tmp_path: Path) -> None:
    for k, f1 in ((1, 91.0), (2, 92.0), (4, 91.5)):
        ablation_run(tmp_path / "runs", f"k{k}", 1, f1, model=model_section(window=k))
    selection = window_selection(find_runs([tmp_path / "runs"]))
    out = tmp_path / "fig" / "fig4.png"
    out.parent.mkdir()
    plot_window(selection, out)
    assert out.read_bytes()[:8] == PNG and out.stat().st_size > 5000


def test_a_figure_without_runs_is_the_papers_point_the_same_bytes_every_time(
        tmp_path: Path) -> None:
    empty = Selection("conll03", None, {}, 0, 0)
    plot_window(empty, tmp_path / "a.png")
    plot_window(empty, tmp_path / "b" / "b.png")  # its folder is made
    data = (tmp_path / "a.png").read_bytes()
    assert data[:8] == PNG
    assert data == (tmp_path / "b" / "b.png").read_bytes()  # --check can compare them
    assert b"Software" not in data and b"atplotlib" not in data  # no software stamp
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "b"]  # no .tmp left
