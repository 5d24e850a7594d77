"""``docgraph tag-corpus``'s arguments, checked before Ray or torch is imported, and the
library without the ``ray`` extra (``pip install docgraph`` alone) never importing Ray."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from docgraph.integrations.tag_corpus import main

ROOT = Path(__file__).resolve().parents[1]

#: Run in a fresh interpreter where ``import ray`` fails as it does without the extra.
WITHOUT_RAY = (
    "import sys, importlib.abc\n"
    "class NoRay(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'ray' or name.startswith('ray.'):\n"
    "            raise ModuleNotFoundError(\"No module named 'ray'\", name='ray')\n"
    "sys.meta_path.insert(0, NoRay())\n"
)


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_the_library_does_not_import_ray():
    out = _run("import sys, docgraph, docgraph.tagging.tagger, docgraph.integrations, "
               "docgraph.integrations.tag_corpus, docgraph.cli.console\n"
               "print('ray' in sys.modules)")
    assert out.stdout.strip() == "False", out.stderr


def test_without_ray_the_command_says_how_to_install_it(tmp_path):
    (tmp_path / "a.txt").write_text("Berlin.\n")
    out = _run(WITHOUT_RAY + "from docgraph.integrations.tag_corpus import main\n"
               f"sys.exit(main([{str(tmp_path / 'a.txt')!r}, '--output', "
               f"{str(tmp_path / 'out')!r}]))")
    assert out.returncode == 2
    assert out.stderr.strip() == ("error: --engine ray: needs Ray: pip install "
                                  "'docgraph[ray]'")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["missing.txt"], "error: missing.txt: no such file or directory"),
    (["*.nothing"], "error: *.nothing: matches no file"),
    (["{input}", "--model", "no-such-model"], "error: no-such-model: neither a model"),
    (["{input}", "--actors", "0"], "--actors: expected an integer >= 1, got '0'"),
    (["{input}", "--gpus-per-actor", "-1"], "--gpus-per-actor: expected"),
    (["{input}", "--format", "csv"], "--format: expected one of 'parquet', 'jsonl', got 'csv'"),
    (["{input}", "--object-store-memory", "1000000"],
     "--object-store-memory: expected an integer >= 78643200"),
    (["{input}", "--object-store-memory", "100000000", "--address", "auto"],
     "--object-store-memory 100000000: sizes the object store of a local Ray; a cluster joined "
     "with --address has its own"),
])
def test_a_bad_argument_is_one_line_before_any_work(tmp_path, capsys, monkeypatch, args,
                                                    message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("Berlin.\n")
    argv = [a.replace("{input}", "a.txt") for a in args] + ["--output", "out"]
    # another test may have imported them: this one asks whether the command does
    for name in ("ray", "docgraph.integrations.ray"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1]
    assert not (tmp_path / "out").exists()
    assert "ray" not in sys.modules and "docgraph.integrations.ray" not in sys.modules


def test_an_output_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("Berlin.\n")
    (tmp_path / "out").write_text("")
    with pytest.raises(SystemExit):
        main([str(tmp_path / "a.txt"), "--output", str(tmp_path / "out")])
    assert capsys.readouterr().err.strip().endswith("is a file; expected a directory")
