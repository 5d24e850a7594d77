"""--deterministic: the switch's settings, and two identical runs giving equal weights."""

from __future__ import annotations

import os

import torch
from conftest import TINY_MODEL

from docgraph.batching.loader import collate
from docgraph.config import TrainConfig
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.runtime.determinism import CUBLAS_WORKSPACE, set_deterministic
from docgraph.training.loop import clip_groups, make_optimizer, training_step


def test_set_deterministic_pins_pytorch_cublas_and_cudnn(monkeypatch):
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    try:
        set_deterministic()
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == CUBLAS_WORKSPACE
    finally:
        set_deterministic(False)
    assert not torch.are_deterministic_algorithms_enabled()


def _train_steps(graphs, vocabs, steps=3):
    torch.manual_seed(7)
    model = build_model(GCDocConfig(**TINY_MODEL), vocabs)
    optimizer = make_optimizer(model, TrainConfig(optimizer="adam", lr=0.01))
    groups = clip_groups(model)
    for step in range(steps):
        batch = collate(graphs, [step % len(graphs), (step + 1) % len(graphs)],
                        torch.device("cpu"), model)
        training_step(model, optimizer, batch, groups, 5.0)
    return model.state_dict()


def test_two_runs_with_one_seed_give_bitwise_equal_weights_in_deterministic_mode(
        sample_splits, sample_vocabs):
    graphs = documents_to_graphs(sample_splits["train"], sample_vocabs, GraphConfig())
    try:
        set_deterministic()  # would raise on an operator without a deterministic kernel
        first = _train_steps(graphs, sample_vocabs)
        second = _train_steps(graphs, sample_vocabs)
    finally:
        set_deterministic(False)
    assert first.keys() == second.keys()
    for name in first:
        assert torch.equal(first[name], second[name]), name
