"""Every command's parser (``docgraph/cli/arguments/parsers.py``) and every parser of the
repository's scripts refuse an abbreviated flag: ``--score`` is not ``--scores`` and ``--epoch 3``
is not ``--epochs 3`` (a flag added later could change what an abbreviation means)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from docgraph.cli import predict_main, train_main
from docgraph.cli.arguments import OneLineParser, predict_parser, train_parser
from docgraph.cli.console import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_command_takes_an_abbreviation(name, capsys):
    """``--hel`` is not ``--help``: every registered command refuses it in one line."""
    with pytest.raises(SystemExit) as info:
        main([name, "--hel"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err


@pytest.mark.parametrize(("main_", "argv", "flag"), [
    (predict_main, ["--model", "conll03", "in.txt", "--score"], "--score"),
    (train_main, ["--dataset", "sample", "--epoch", "3"], "--epoch"),
])
def test_an_abbreviated_flag_is_refused_in_one_line(main_, argv, flag, capsys):
    with pytest.raises(SystemExit) as info:
        main_(argv)
    assert info.value.code == 2
    rest = " ".join(argv[argv.index(flag):])
    assert capsys.readouterr().err == f"error: unrecognized arguments: {rest}\n"


def test_the_full_flags_are_still_taken():
    assert isinstance(predict_parser(), OneLineParser)
    assert predict_parser().parse_args(["--model", "m", "in.txt", "--scores"]).scores
    assert train_parser().parse_args(["--dataset", "sample", "--epochs", "3"]).epochs == 3


def _parsers_taking_abbreviations(path: Path) -> list[int]:
    """The lines of ``path`` that build an ``ArgumentParser`` without ``allow_abbrev=False``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name != "ArgumentParser":
            continue
        value = next((k.value for k in node.keywords if k.arg == "allow_abbrev"), None)
        if not (isinstance(value, ast.Constant) and value.value is False):
            lines.append(node.lineno)
    return lines


def test_the_check_finds_a_parser_taking_abbreviations(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import argparse\np = argparse.ArgumentParser(description='x')\n"
                      "q = argparse.ArgumentParser(allow_abbrev=False)\n")
    assert _parsers_taking_abbreviations(script) == [2]


def test_no_parser_of_the_repository_takes_abbreviations():
    files = [path for folder in ("docgraph", "docgraph_dev", "scripts", "benchmarks", "examples")
             for path in sorted((ROOT / folder).rglob("*.py"))
             if "measurements" not in path.parts]
    found = [f"{path.relative_to(ROOT)}:{line}" for path in files
             for line in _parsers_taking_abbreviations(path)]
    assert not found, found
