"""Tests of :mod:`docgraph.persistence.model_dir`: a model directory that is missing, corrupt or
does not fit its configuration, and a model built for vectors of another size."""

import json

import pytest
import torch

from docgraph.persistence.checkpoint import CheckpointError
from docgraph.persistence.model_dir import load_model_dir


def test_corrupt_model_directory(model_dir, tmp_path):
    import shutil

    with pytest.raises(CheckpointError, match="neither a model directory nor a shipped model"):
        load_model_dir(tmp_path / "nowhere")
    copy = tmp_path / "copy"
    shutil.copytree(model_dir, copy)
    (copy / "model.pt").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="model.pt"):
        load_model_dir(copy)
    shutil.copy(model_dir / "model.pt", copy / "model.pt")
    config = json.loads((copy / "config.json").read_text())
    config["model"]["hidden"] = 32
    (copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="weights do not fit"):
        load_model_dir(copy)
    (copy / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="unreadable model directory"):
        load_model_dir(copy)


def test_model_rejects_vectors_of_another_size(sample_vocabs):
    from docgraph.model import GCDocConfig
    from docgraph.persistence.model_dir import build_model

    with pytest.raises(ValueError, match="3 dimensions but config.word_dim is 50"):
        build_model(GCDocConfig(), sample_vocabs, torch.zeros(len(sample_vocabs.words), 3))
