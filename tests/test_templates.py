"""PyG's generated propagate modules in memory (docgraph/nn/templates.py): no file in
$TMPDIR, the same compiled propagate, source that TorchScript can read."""

from __future__ import annotations

import getpass
import inspect
import subprocess
import sys
from pathlib import Path

import torch

from docgraph.nn.conv import DocGraphConv


def test_building_a_layer_writes_nothing_to_tmpdir(tmp_path):
    code = ("from docgraph.nn.conv import DocGraphConv; import torch; "
            "layer = DocGraphConv(4); "
            "print(type(layer).propagate.__module__)")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1",
           "DOCGRAPH_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, timeout=120)
    assert out.stdout.strip() == "docgraph.nn.conv_DocGraphConv_propagate"
    assert list(tmp.iterdir()) == []


def test_torch_s_compile_cache_is_kept_out_of_tmpdir(tmp_path):
    """``import torch._dynamo`` (DDP, PyG) makes torch's compile cache; a process that imported
    docgraph makes it in docgraph's cache directory, not in ``$TMPDIR``, unless the user chose
    one with ``TORCHINDUCTOR_CACHE_DIR``."""
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    code = "import docgraph, torch._dynamo, os; print(os.environ['TORCHINDUCTOR_CACHE_DIR'])"
    env = {"TMPDIR": str(tmp), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1",
           "DOCGRAPH_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, timeout=120)
    assert out.stdout.strip() == str(cache / "torchinductor")
    assert list(tmp.iterdir()) == [] and (cache / "torchinductor").is_dir()
    chosen = tmp_path / "mine"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**env, "TORCHINDUCTOR_CACHE_DIR": str(chosen)}, check=True,
                         timeout=120)
    assert out.stdout.strip() == str(chosen) and list(tmp.iterdir()) == []
    # without the import of docgraph: torch's default, in $TMPDIR
    subprocess.run([sys.executable, "-c", "import torch._dynamo"], env=env, check=True,
                   timeout=120)
    assert [p.name for p in tmp.iterdir()] == [f"torchinductor_{getpass.getuser()}"]


def test_the_generated_propagate_has_readable_source():
    DocGraphConv(4)
    propagate = DocGraphConv.propagate
    assert propagate.__module__ == "docgraph.nn.conv_DocGraphConv_propagate"
    assert "def propagate" in inspect.getsource(propagate)


def test_the_layer_still_scripts_and_runs_with_its_generated_propagate():
    layer = DocGraphConv(4)
    x = torch.randn(3, 4)
    edge_index = torch.tensor([[0, 1], [1, 2]])
    scripted = torch.jit.script(layer)
    torch.testing.assert_close(scripted(x, edge_index), layer(x, edge_index))


def test_the_tests_and_the_measurements_keep_torch_s_compile_cache_out_of_tmpdir(tmp_path):
    """Test modules and measurement modules import torch_geometric (and with it
    ``torch._dynamo``) before docgraph; the suite's conftest and ``docgraph_dev`` import
    docgraph first, so a test or a measurement run alone leaves nothing in ``$TMPDIR``."""
    root = Path(__file__).resolve().parents[1]
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1",
           "DOCGRAPH_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": f"{root}:{root / 'tests'}"}
    for first in ("conftest", "docgraph_dev"):
        subprocess.run([sys.executable, "-c", f"import {first}, torch_geometric"], env=env,
                       cwd=tmp_path, check=True, timeout=120)
        assert list(tmp.iterdir()) == [], first
