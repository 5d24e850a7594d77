"""``python -m docgraph`` is the ``docgraph`` command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_python_m_docgraph_lists_the_commands_and_runs_one():
    listed = subprocess.run([sys.executable, "-m", "docgraph", "--help"], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert listed.returncode == 0
    assert "serve" in listed.stdout and "predict" in listed.stdout
    helped = subprocess.run([sys.executable, "-m", "docgraph", "serve", "--help"],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert helped.returncode == 0 and "--max-batch-tokens" in helped.stdout
    unknown = subprocess.run([sys.executable, "-m", "docgraph", "nonsense"],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert unknown.returncode == 2 and "unknown command 'nonsense'" in unknown.stderr
