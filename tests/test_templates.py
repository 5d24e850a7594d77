"""PyG's generated propagate modules in memory (docgraph/nn/templates.py): no file in
$TMPDIR, the same compiled propagate, source that TorchScript can read."""

from __future__ import annotations

import inspect
import subprocess
import sys

import torch

from docgraph.nn.conv import DocGraphConv


def test_building_a_layer_writes_nothing_to_tmpdir(tmp_path):
    code = ("from docgraph.nn.conv import DocGraphConv; import torch; "
            "layer = DocGraphConv(4); "
            "print(type(layer).propagate.__module__)")
    env = {"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, timeout=120)
    assert out.stdout.strip() == "docgraph.nn.conv_DocGraphConv_propagate"
    # torch's own (empty) compile-cache directory is all that may appear there
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("torchinductor_")] == []


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
