"""Execute the notebooks in ``notebooks/`` end to end; a failing cell fails the test.

Each notebook asserts what it shows (node and edge counts of the drawn graphs, ``r_ij`` in
``[0, 1]``, a model that beats a named baseline); these tests also check that every notebook
asserts something and draws the figures it promises.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb"))

# notebook -> figures (image outputs) it must produce, at least
MIN_FIGURES = {
    "01_document_graphs.ipynb": 3,  # in-degree histogram, one document, one word
    "02_edge_weights_and_pruning.ipynb": 3,  # r_ij histogram, one word, one document
    "03_reuse_the_graph_layer.ipynb": 1,  # training curve
}


def _code(book) -> list[str]:
    return [cell.source for cell in book.cells if cell.cell_type == "code"]


def _figures(book) -> int:
    return sum("image/png" in output.get("data", {})
               for cell in book.cells if cell.cell_type == "code"
               for output in cell.get("outputs", []))


def test_notebooks_are_committed_without_outputs():
    assert NOTEBOOKS == [
        "01_document_graphs.ipynb",
        "02_edge_weights_and_pruning.ipynb",
        "03_reuse_the_graph_layer.ipynb",
    ]
    for name in NOTEBOOKS:
        book = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
        nbformat.validate(book)
        for cell in book.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, name
        asserts = sum(line.lstrip().startswith("assert ") for src in _code(book)
                      for line in src.splitlines())
        assert asserts >= 3, f"{name} asserts too little of what it shows"
    assert set(MIN_FIGURES) == set(NOTEBOOKS)


@pytest.mark.timeout(1200)  # its commands may each take minutes on a loaded machine
@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name, monkeypatch, tmp_path):
    monkeypatch.delenv("DOCGRAPH_MODEL_DIR", raising=False)
    # what a notebook writes to its temporary directories stays in the test's own
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    # the kernel imports this checkout's docgraph, not another installed (editable) copy
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(NOTEBOOK_DIR.parent), os.environ.get("PYTHONPATH")) if p))
    book = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
    client = nbclient.NotebookClient(
        book,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell
    elapsed = time.perf_counter() - start
    errors = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    assert _figures(book) >= MIN_FIGURES[name], f"{name} drew {_figures(book)} figures"
    print(f"{name}: {elapsed:.1f} s")
