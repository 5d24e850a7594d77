"""--deterministic: the switch's settings, two identical runs giving equal weights, and the
switch reaching the training steps of a run through every door (flag, preset, API, resume)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
from conftest import TINY_FLAGS, TINY_MODEL, run_script, tiny_config

from docgraph.batching.loader import collate
from docgraph.config import TrainConfig
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.runtime.determinism import (
    CUBLAS_WORKSPACE,
    deterministic_kernels,
    kernel_settings,
    set_deterministic,
)
from docgraph.training.experiment import run_experiment
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
                        torch.device("cpu"), model.plan_settings())
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


# ------------------------------------------------------------------ the switch reaching a run
#: What every epoch record of a run says its training steps ran with (kernel_settings).
KERNELS = ("deterministic_algorithms", "cudnn_deterministic")


def _run_kernels(run_dir: Path) -> tuple[list[tuple[bool, bool]], bool]:
    """Per epoch, the kernel settings the run's training steps ran with (``train_log.jsonl``,
    written from inside the training loop), and the switch in the run's ``config.json``."""
    records = [json.loads(line) for line in
               (run_dir / "train_log.jsonl").read_text().splitlines()]
    saved = json.loads((run_dir / "config.json").read_text())
    return [tuple(r[key] for key in KERNELS) for r in records], saved["train"]["deterministic"]


def test_kernel_settings_and_the_block_that_holds_them():
    assert kernel_settings() == {"deterministic_algorithms": False, "cudnn_deterministic": False}
    with deterministic_kernels(False):
        assert not any(kernel_settings().values())
    with deterministic_kernels(True):
        assert all(kernel_settings().values()) and not torch.backends.cudnn.benchmark
    assert not any(kernel_settings().values())  # given back


def test_run_experiment_runs_its_steps_with_the_switch_and_records_it(tmp_path):
    """The Python API: ``train.deterministic`` reaches the training steps and the run's
    config; off (the default) leaves the kernels as they are; the run gives them back."""
    off = tmp_path / "off"
    run_experiment(tiny_config(off, epochs=1), progress=False)
    assert _run_kernels(off) == ([(False, False)], False)
    on = tmp_path / "on"
    run_experiment(tiny_config(on, epochs=1, deterministic=True), progress=False)
    assert _run_kernels(on) == ([(True, True)], True)
    assert not any(kernel_settings().values())


@pytest.mark.timeout(2400)  # its commands may each take minutes on a loaded machine
@pytest.mark.slow
def test_the_flag_a_preset_and_a_resumed_run_reach_the_training_steps(tmp_path):
    """train.py's doors: ``--deterministic``, ``deterministic = true`` in a TOML preset, and a
    resumed run, which keeps its saved switch without the flag (the BiLSTM-CRF: the switch
    does not depend on the model)."""
    flags = ["--dataset", "sample", *TINY_FLAGS, "--baseline", "--processes", "1", "--seed", "1"]
    flagged = tmp_path / "flag"
    res = run_script("train", *flags, "--epochs", "1", "--deterministic",
                     "--output-dir", flagged, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert _run_kernels(flagged) == ([(True, True)], True)
    res = run_script("train", "--resume", flagged, "--epochs", "2", "--quiet", timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert _run_kernels(flagged) == ([(True, True), (True, True)], True)

    preset = tmp_path / "preset.toml"
    preset.write_text('[train]\ndeterministic = true\nepochs = 1\n')
    from_preset = tmp_path / "preset"
    res = run_script("train", "--config", preset, *flags, "--output-dir", from_preset,
                     timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert _run_kernels(from_preset) == ([(True, True)], True)

    plain = tmp_path / "plain"
    res = run_script("train", *flags, "--epochs", "1", "--output-dir", plain, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert _run_kernels(plain) == ([(False, False)], False)
