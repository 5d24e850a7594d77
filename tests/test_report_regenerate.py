"""Tests of :mod:`docgraph_dev.report.regenerate`: the command written at the top of
``RESULTS.md`` and the recorded arguments of ``python scripts/report.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgraph_dev.report.regenerate import (
    ARGS_FILE,
    DEFAULT_OUT,
    documented_command,
    parse_command,
    recorded_arguments,
    regenerate_command,
)


def test_regenerate_command_round_trip() -> None:
    from docgraph_dev.report import documented_command, parse_command, regenerate_command

    argv = ["a b", "--speed", "x/speed-*.json", "--out", "R.md", "--check"]
    command = regenerate_command(argv)
    assert "--check" not in command and "'x/speed-*.json'" in command
    assert parse_command(command) == argv[:-1]
    assert documented_command(f"# R\n\n```bash\n{command}\n```\n") == argv[:-1]


def test_regenerate_command_puts_one_option_on_a_line() -> None:
    assert regenerate_command(["runs", "--out", "R.md", "--speed", "a b.json"]) == (
        "python scripts/report.py runs \\\n    --out R.md \\\n    --speed 'a b.json'")
    assert regenerate_command([]) == "python scripts/report.py"
    assert regenerate_command(["--check"]) == "python scripts/report.py"


def test_parse_command_refuses_another_command() -> None:
    with pytest.raises(ValueError) as info:
        parse_command("python scripts/train.py --epochs 1")
    assert str(info.value) == ("not a scripts/report.py command: 'python scripts/train.py "
                               "--epochs 1'")
    assert parse_command("python scripts/report.py") == []


def test_documented_command_needs_the_bash_block() -> None:
    with pytest.raises(ValueError, match="^no regeneration command at the top of the report$"):
        documented_command("# Results\n\n```bash\npython scripts/train.py\n```\n")
    text = "# R\n\n```bash\npython scripts/report.py a\n```\n\n```bash\nls\n```\n"
    assert documented_command(text) == ["a"]


def test_recorded_arguments_one_a_line(tmp_path: Path) -> None:
    path = tmp_path / "report.args"
    path.write_text("runs\n\n--out\nR.md\n", encoding="utf-8")
    assert recorded_arguments(path) == ["runs", "--out", "R.md"]
    assert recorded_arguments(str(path)) == ["runs", "--out", "R.md"]
    with pytest.raises(FileNotFoundError) as info:
        recorded_arguments(tmp_path / "none.args")
    assert str(info.value).startswith(f"{tmp_path / 'none.args'}: no recorded report arguments; "
                                      "run scripts/report.py with its arguments once")


def test_the_committed_documents_and_their_arguments() -> None:
    assert ARGS_FILE == "benchmarks/results/report.args"
    assert DEFAULT_OUT == "benchmarks/results/RESULTS.md"
