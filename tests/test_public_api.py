"""The top-level API: every public name resolves, and ``import docgraph`` loads no torch."""

import subprocess
import sys

import docgraph


def test_every_public_name_is_lazy_and_resolves():
    assert set(docgraph.__all__) == set(docgraph._LAZY)
    for name in docgraph.__all__:
        obj = getattr(docgraph, name)
        assert obj.__name__ == name


def test_importing_the_package_loads_no_torch():
    code = "import sys, docgraph; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
