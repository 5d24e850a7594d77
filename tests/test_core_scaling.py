"""Tests of the throughput per core setting (docgraph/tools/core_scaling.py)."""

from __future__ import annotations

import pytest
import torch
from conftest import HAND_COUNT_MODEL, three_sentence_batch

from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.tools.core_scaling import LossScaled, ScalingOptions, run_scaling, speedups
from docgraph.training.loop import training_step


def _fake(tokens: int, train: float, infer: float) -> dict:
    model = {"train_tokens_per_s": train, "infer_tokens_per_s": infer}
    return {"tokens_per_pass": tokens, "baseline": model, "gcdoc": model}


def test_speedups_are_over_one_thread_and_refuse_different_batches() -> None:
    results = {"1 thread": _fake(100, 10.0, 20.0), "DDP x2": _fake(100, 19.0, 30.0)}
    ups = speedups(results)
    assert ups["DDP x2"]["gcdoc_train"] == pytest.approx(1.9)
    assert ups["DDP x2"]["baseline_infer"] == pytest.approx(1.5)
    with pytest.raises(ValueError, match="different batches"):
        speedups({"1 thread": _fake(100, 10.0, 20.0), "DDP x2": _fake(90, 19.0, 30.0)})


def test_loss_scaled_step_of_a_process_without_a_share_changes_nothing() -> None:
    # A DDP process without graphs in a batch steps with LossScaled(network, 0.0) on a real
    # batch: the library's training step, its loss scaled, so its gradients are zero.
    vocabs, batch = three_sentence_batch()
    model = build_model(GCDocConfig.baseline(**HAND_COUNT_MODEL), vocabs)
    model.train()
    torch.manual_seed(1)
    loss = model(batch).loss
    torch.manual_seed(1)
    assert LossScaled(model, 0.5)(batch).loss.item() == pytest.approx(0.5 * loss.item())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    training_step(LossScaled(model, 0.0), optimizer, batch)
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
    training_step(model, optimizer, batch)
    assert not all(torch.equal(a, p) for a, p in zip(before, model.parameters()))


@pytest.mark.slow
def test_core_scaling_runs_ddp_on_the_same_tokens() -> None:
    options = ScalingOptions(dataset="sample", batch_tokens=600, num_batches=2, repeats=1,
                             warmup=1, model_overrides=HAND_COUNT_MODEL,
                             settings=("1 thread", "DDP x2"))
    result = run_scaling(options)
    one, ddp = result["settings"]["1 thread"], result["settings"]["DDP x2"]
    assert one["processes"] == 1 and ddp["processes"] == 2 and ddp["threads"] == 1
    assert one["tokens_per_pass"] == ddp["tokens_per_pass"] > 0
    up = result["speedup_over_1_thread"]["DDP x2"]
    assert up["gcdoc_train"] == pytest.approx(
        ddp["gcdoc"]["train_tokens_per_s"] / one["gcdoc"]["train_tokens_per_s"])
