"""``docgraph serve``'s settings and command line, and the library without the serve extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from docgraph.cli.serve import check_serve_arguments, serve_parser
from docgraph.config.fields import ConfigError
from docgraph.config.serve import ServeConfig

ROOT = Path(__file__).resolve().parents[1]
EXTRA = ("fastapi", "starlette", "uvicorn", "prometheus_client")


@pytest.mark.parametrize("field, value, message", [
    ("workers", 0, "workers = 0: expected an integer >= 1"),
    ("port", 70000, "port = 70000: expected an integer >= 0 and <= 65535"),
    ("timeout_s", 0.0, "timeout_s = 0.0: expected a number > 0"),
    ("precision", "fp8", "precision = 'fp8': expected one of"),
])
def test_a_bad_setting_names_its_field(field, value, message):
    with pytest.raises(ConfigError, match=message):
        ServeConfig(**{field: value})


def test_every_setting_is_a_flag_and_the_model_is_required():
    args = serve_parser().parse_args(["--model", "conll03", "--workers", "2", "--max-wait-ms",
                                      "0", "--api-key-file", "k", "--precision", "fp32"])
    assert (args.model, args.workers, args.max_wait_ms, args.api_key_file, args.precision) == (
        "conll03", 2, 0.0, "k", "fp32")
    assert args.host == "127.0.0.1"  # loopback unless told otherwise
    assert args.consistency is None  # the model's own default
    assert serve_parser().parse_args(["--model", "m", "--consistency"]).consistency is True
    assert serve_parser().parse_args(["--model", "m", "--no-consistency"]).consistency is False
    with pytest.raises(SystemExit):
        serve_parser().parse_args([])
    with pytest.raises(SystemExit):
        serve_parser().parse_args(["--model", "conll03", "--max-queue", "0"])


def test_the_model_and_the_key_file_are_checked_before_anything_loads(tmp_path):
    pytest.importorskip("fastapi", reason="the serve extra is not installed")
    with pytest.raises(ValueError, match="^--model nowhere: neither a model directory"):
        check_serve_arguments(serve_parser().parse_args(["--model", "nowhere"]))
    with pytest.raises(ValueError, match="--api-key-file .*: cannot be read"):
        check_serve_arguments(serve_parser().parse_args(
            ["--model", "conll03", "--api-key-file", str(tmp_path / "missing")]))
    config = check_serve_arguments(serve_parser().parse_args(["--model", "conll03"]))
    assert config == ServeConfig(model="conll03")


def test_a_bad_argument_is_one_line_and_exit_2():
    done = subprocess.run([sys.executable, "-m", "docgraph", "serve", "--model", "nowhere"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --model nowhere: neither a model directory")
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_library_without_the_serve_extra():
    """With the extra's packages missing, every module of the library but the service's app
    imports (none loads FastAPI), and ``docgraph serve`` says which extra to install."""
    code = (
        "import importlib, pkgutil, sys\n"
        f"for name in {EXTRA!r}:\n"
        "    sys.modules[name] = None  # import fails: not installed\n"
        "import docgraph\n"
        "app = ('docgraph.serve.app', 'docgraph.serve.server', 'docgraph.serve.metrics',"
        " 'docgraph.__main__')\n"
        "for m in pkgutil.walk_packages(docgraph.__path__, 'docgraph.'):\n"
        "    if m.name in app:\n"
        "        continue\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except ImportError as error:\n"
        f"        if (error.name or '').split('.')[0] in {EXTRA!r}:\n"
        "            raise SystemExit(f'{m.name} imports {error.name}')\n"
        "from docgraph.cli.console import main\n"
        "sys.exit(main(['serve', '--model', 'conll03']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=540)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "error: docgraph serve needs the serve extra (fastapi, uvicorn, prometheus_client not "
        'installed): pip install "docgraph[serve]"')
