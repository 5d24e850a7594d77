"""The committed results documents are exactly what ``scripts/report.py`` makes of the
committed run directories: ``benchmarks/results/RESULTS.md`` byte for byte, and the README's
summary block. Regenerate both with the command at the top of RESULTS.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph_dev.report import (
    REPRODUCE_END,
    REPRODUCE_START,
    documented_command,
    find_runs,
    read_block,
    reproduce_markdown,
    summary_markdown,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "RESULTS.md"
README = ROOT / "README.md"


@pytest.fixture
def argv(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The documented regeneration command's arguments, run from the repository root."""
    monkeypatch.chdir(ROOT)
    return documented_command(RESULTS.read_text(encoding="utf-8"))


def test_documented_command_covers_readme_and_figure(argv: list[str]) -> None:
    assert argv[argv.index("--out") + 1] == "benchmarks/results/RESULTS.md"
    assert argv[argv.index("--readme") + 1] == "README.md"
    assert "--figure" in argv
    assert (ROOT / argv[argv.index("--figure") + 1]).is_file()


def test_results_md_is_regenerated_byte_for_byte(argv: list[str], capsys) -> None:
    from docgraph_dev.report import main

    assert main([*argv, "--check"]) == 0, capsys.readouterr().err


def test_results_md_and_readme_block_equal_the_generated(argv: list[str]) -> None:
    from docgraph_dev.report import generate

    made = generate(argv)
    assert len(made.runs) >= 40 and made.speed_files
    assert made.report == RESULTS.read_text(encoding="utf-8")
    assert read_block(README.read_text(encoding="utf-8")) == made.summary


def test_readme_summary_block_is_generated() -> None:
    runs = find_runs([ROOT / "benchmarks" / "results" / "runs"])
    text = README.read_text(encoding="utf-8")
    assert read_block(text) == summary_markdown(runs)
    assert read_block(text, REPRODUCE_START, REPRODUCE_END) == reproduce_markdown(runs)


def test_every_summary_row_has_its_reproduce_command() -> None:
    # The README's commands are the summary rows' recorded ones: each names the row's group,
    # its seeds and every model flag its runs were trained with.
    import shlex

    from docgraph_dev.report import summary_choices

    runs = find_runs([ROOT / "benchmarks" / "results" / "runs"])
    block = read_block(README.read_text(encoding="utf-8"), REPRODUCE_START, REPRODUCE_END)
    commands = {line.rsplit("runs/", 1)[1]: shlex.split(line)
                for line in block.splitlines() if line.startswith("python scripts/train.py")}
    for choice in summary_choices(runs):
        words = commands[choice.group]
        seeds = words[words.index("--seeds") + 1:words.index("--output-dir")]
        assert seeds == [str(r.seed) for r in choice.members]
        recorded = shlex.split(choice.members[0].command)
        for flag in ("--epochs", "--threshold", "--baseline", "--freeze-embeddings",
                     "--no-graph", "--no-cross-sentence", "--no-pruning", "--no-edge-weights",
                     "--fast", "--processes", "--batch-tokens", "--lr"):
            assert (flag in words) == (flag in recorded), (choice.group, flag)
            if flag in recorded and not recorded[recorded.index(flag) + 1].startswith("--"):
                assert words[words.index(flag) + 1] == recorded[recorded.index(flag) + 1]


def test_packed_window_figures_match_their_measurement() -> None:
    import json

    text = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    pack = json.loads((ROOT / "benchmarks" / "results" / "measurements" / "lm-pack"
                       / "conll03-dev-minilm-1thread-amd.json").read_text())
    agreement = pack["agreement_packed_vs_unpacked"]
    assert f"mean cosine {agreement['cosine_mean']:.2f}" in text
    assert f"min {agreement['cosine_min']:.2f})" in text
    assert "[measured](docs/experiments.md)" in README.read_text(encoding="utf-8")


def test_front_page_is_short_and_keeps_the_install_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 12_288
    assert "python3 -m venv .venv && . .venv/bin/activate\n" in text
    assert 'pip install torch==2.13.0 -e ".[glove,dev,lm,spacy,serve,ray]"\n' in text
    assert "python -m pytest -q\n" in text
    for link in ("benchmarks/results/RESULTS.md", "docs/design.md", "notebooks/"):
        assert f"]({link})" in text
    assert (ROOT / "docs" / "design.md").is_file()


def test_every_measurement_folder_is_in_the_index() -> None:
    """``benchmarks/results/README.md`` says which script wrote each folder of measurements
    and what is there, and every folder has the command that wrote it."""
    results = ROOT / "benchmarks" / "results"
    index = (results / "README.md").read_text(encoding="utf-8")
    folders = sorted(p for p in (results / "measurements").iterdir() if p.is_dir())
    assert len(folders) > 20
    missing = [p.name for p in folders if f"measurements/{p.name}/" not in index]
    assert not missing, missing
    # the index says where these record their commands instead: inside the speed JSONs, on
    # the first line of the stats and predict outputs; lstm-padding's is historical, unknown
    elsewhere = {"benchmark-speed", "stats", "predict", "lstm-padding"}
    unrecorded = [p.name for p in folders if p.name not in elsewhere
                  and not any((p / name).exists() for name in ("command.txt", "README.md"))]
    assert not unrecorded, unrecorded
    assert all(f"`{name}/`" in index for name in elsewhere)


def test_the_model_cards_summary_rows_equal_the_shipped_records() -> None:
    """docs/models.md's summary table: one row per shipped model, its test F1 the one its
    committed evaluation wrote (benchmarks/results/shipped/<name>/test_metrics.json), its size
    the size of its files."""
    import json
    import re

    from docgraph.persistence.shipped import SHIPPED_DIR, shipped_models

    text = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| \[`([\w-]+)`\]\(#[\w-]+\) \|.*$",
                                                          text, re.MULTILINE)}
    assert sorted(rows) == shipped_models()
    for name, row in rows.items():
        metrics = json.loads((ROOT / "benchmarks" / "results" / "shipped" / name
                              / "test_metrics.json").read_text())
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[3].startswith(f"{metrics['test']['f1']:.2f}"), (name, cells[3])
        size = sum(p.stat().st_size for p in (SHIPPED_DIR / name).iterdir()) / 1e6
        assert cells[4] == f"{size:.1f} MB", (name, cells[4], size)
        assert "converged" in cells[5]
