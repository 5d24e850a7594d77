"""Tests of the throughput per core setting (docgraph_dev/core_scaling.py): the speed-ups
over one thread, their table, the loss-scaled network of a DDP process without a share, and
the measurement itself in fresh processes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from conftest import HAND_COUNT_MODEL, three_sentence_batch

from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.training.loop import training_step
from docgraph_dev.core_scaling import (
    SETTINGS,
    SPEEDUP_TARGET,
    LossScaled,
    ScalingOptions,
    format_scaling,
    run_scaling,
    speedups,
)


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


def test_speedups_of_every_setting_and_model_separately() -> None:
    results = {
        "1 thread": {"tokens_per_pass": 50,
                     "baseline": {"train_tokens_per_s": 100.0, "infer_tokens_per_s": 400.0},
                     "gcdoc": {"train_tokens_per_s": 10.0, "infer_tokens_per_s": 40.0}},
        "2 threads": {"tokens_per_pass": 50,
                      "baseline": {"train_tokens_per_s": 150.0, "infer_tokens_per_s": 400.0},
                      "gcdoc": {"train_tokens_per_s": 12.0, "infer_tokens_per_s": 80.0}},
        "DDP x2": _fake(50, 20.0, 60.0),
    }
    ups = speedups(results)
    assert set(ups) == {"2 threads", "DDP x2"}  # not the reference itself
    assert ups["2 threads"] == pytest.approx({"baseline_train": 1.5, "baseline_infer": 1.0,
                                              "gcdoc_train": 1.2, "gcdoc_infer": 2.0})
    assert ups["DDP x2"] == pytest.approx({"baseline_train": 0.2, "baseline_infer": 0.15,
                                           "gcdoc_train": 2.0, "gcdoc_infer": 1.5})
    with pytest.raises(KeyError):
        speedups({"DDP x2": _fake(50, 1.0, 1.0)})  # no one-thread reference


def test_the_settings_and_the_default_options():
    assert SETTINGS == {"1 thread": (1, 1), "2 threads": (1, 2), "DDP x2": (2, 1)}
    options = ScalingOptions()
    assert options.settings == tuple(SETTINGS) and options.model_overrides == {}
    assert ScalingOptions().model_overrides is not options.model_overrides
    assert SPEEDUP_TARGET == 1.8


def test_format_scaling_one_row_per_setting_and_model():
    results = {"1 thread": _fake(100, 10.0, 20.0), "DDP x2": _fake(100, 19.0, 30.0)}
    result = {"settings": results, "speedup_over_1_thread": speedups(results),
              "speedup_target": SPEEDUP_TARGET}
    lines = format_scaling(result).splitlines()
    assert [line.split() for line in lines] == [
        ["setting", "model", "train", "tok/s", "speed-up", "infer", "tok/s", "speed-up"],
        ["1", "thread", "baseline", "10", "1.00", "20", "1.00"],
        ["1", "thread", "gcdoc", "10", "1.00", "20", "1.00"],
        ["DDP", "x2", "baseline", "19", "1.90", "30", "1.50"],
        ["DDP", "x2", "gcdoc", "19", "1.90", "30", "1.50"],
        ["target:", "speed-up", ">=", "1.8", "with", "two", "cores"],
    ]
    assert len({len(line) for line in lines[:-1]}) == 1  # the columns line up


def test_format_scaling_of_one_setting_has_no_target_line():
    text = format_scaling({"settings": {"2 threads": _fake(5, 3.0, 4.0)}})
    assert len(text.splitlines()) == 3 and "target" not in text


@dataclass
class _Output:
    loss: torch.Tensor
    emissions: torch.Tensor


class _Network(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.tensor(2.0))
        self.seen: list = []

    def forward(self, batch):
        self.seen.append(batch)
        return _Output(loss=self.weight * 3.0, emissions=torch.ones(2))


def test_loss_scaled_scales_the_loss_only():
    network = _Network()
    out = LossScaled(network, 0.5)("batch")
    assert network.seen == ["batch"]
    assert out.loss.item() == pytest.approx(3.0) and torch.equal(out.emissions, torch.ones(2))
    zero = LossScaled(network, 0.0)("other")
    zero.loss.backward()
    assert network.weight.grad.item() == 0.0  # joins the all-reduce with zero gradients
    assert list(LossScaled(network, 0.0).parameters()) == [network.weight]
