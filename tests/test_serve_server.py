"""The server's exit status when the model cannot be loaded (the graceful stops are tested
with a real server in test_serve_app.py and test_serve_pool.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed "
                                      "(pip install 'docgraph[serve]')")

from serving import free_port

from docgraph.persistence.shipped import shipped_model_dir

ROOT = Path(__file__).resolve().parents[1]


def test_a_model_that_cannot_be_loaded_stops_the_server_with_status_1(tmp_path):
    model = tmp_path / "damaged"
    shutil.copytree(shipped_model_dir("conll03"), model)
    (model / "model.pt").write_bytes(b"not a checkpoint")
    done = subprocess.run([sys.executable, "-m", "docgraph", "serve", "--model", str(model),
                           "--port", str(free_port())],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 1
    assert "could not load the model" in done.stderr
    assert "model.pt" in done.stderr
    assert "Traceback" not in done.stderr
