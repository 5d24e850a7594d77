"""``docgraph <command>``: the console entry point dispatches to the scripts' mains."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from docgraph.cli.console import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]


def test_every_command_resolves_to_a_function_taking_argv():
    import importlib
    import inspect

    for name, (module, function, _) in COMMANDS.items():
        fn = getattr(importlib.import_module(module), function)
        assert list(inspect.signature(fn).parameters) == ["argv"], name


def test_stats_through_the_entry_point_equals_the_script(capsys):
    assert main(["stats", "--dataset", "sample", "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)
    script = subprocess.run([sys.executable, str(ROOT / "scripts" / "stats.py"), "--dataset",
                             "sample", "--json"], capture_output=True, text=True, check=True)
    assert ours == json.loads(script.stdout)
    assert set(ours) == {"train", "dev", "test"}


def test_usage_and_unknown_commands(capsys):
    assert main([]) == 2 and "commands:" in capsys.readouterr().out
    assert main(["--help"]) == 0 and "visualize" in capsys.readouterr().out
    assert main(["tran"]) == 2
    assert "unknown command 'tran'" in capsys.readouterr().err


def test_pyproject_installs_the_entry_point():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["docgraph"] == "docgraph.cli.console:main"
