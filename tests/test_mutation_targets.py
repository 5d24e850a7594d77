"""The planted bugs of ``scripts/mutation_check.py`` keep applying to the code they target
(a module that moves or a line that changes would silently turn a mutant into a no-op)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT, script_env


def test_every_mutant_applies_to_the_checkout():
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "mutation_check.py"),
                          "--check-targets"], capture_output=True, text=True, cwd=ROOT,
                         env=script_env(), timeout=60)
    assert res.returncode == 0, res.stderr
    assert "mutants apply" in res.stdout
