"""Fig. 4 drawn: test F1 against the window size k of the cross-sentence module, ours beside
the paper's."""

from __future__ import annotations

import json
from pathlib import Path

from docgraph.runtime.atomic import atomic_write_bytes
from docgraph_dev.report.paper import PAPER_WINDOW, WINDOW_VARIANTS
from docgraph_dev.report.runs import score_values
from docgraph_dev.report.selection import Selection
from docgraph_dev.report.stats import mean_std


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
            if (v := score_values(selection.rows.get(variant, []), "test", "f1"))]
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
