"""Tests of :mod:`docgraph.training.loop` and :mod:`docgraph.persistence.checkpoint`: run
directories, resume,
atomic checkpoints, clear errors."""

import dataclasses
import json
import math
import os
import statistics

import pytest
import torch
from conftest import TINY_MODEL, tiny_config

import docgraph.persistence.atomic as atomic
import docgraph.persistence.checkpoint as checkpoint
from docgraph.model import GCDoc, GCDocConfig
from docgraph.persistence.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from docgraph.persistence.model_dir import load_model_dir
from docgraph.training.experiment import run_experiment, run_seeds
from docgraph.training.loop import Trainer, TrainingError


def _state(path):
    return load_checkpoint(path)["model"]


def _assert_same_weights(a, b):
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_run_experiment_writes_run_directory(trained_run):
    run_dir, metrics = trained_run
    for name in ("model.pt", "config.json", "vocab.json", "metrics.json", "train_log.jsonl",
                 "learning_curve.png", "last.pt"):
        assert (run_dir / name).is_file(), name
    assert not list(run_dir.glob(".*.tmp"))
    saved = json.loads((run_dir / "metrics.json").read_text())
    assert saved == json.loads(json.dumps(metrics))
    for split in ("dev", "test"):
        for key in ("precision", "recall", "f1", "per_type"):
            assert key in saved[split], (split, key)
        assert 0 < saved[split]["f1"] <= 100
    assert saved["epochs"] == 3 and 1 <= saved["best_epoch"] <= 3
    assert saved["train_seconds"] > 0 and saved["seed"] == 1
    assert saved["config"]["model"]["hidden"] == 16 and saved["config"]["embeddings"] == "none"
    assert isinstance(saved["command"], str) and saved["command"]
    log = [json.loads(line) for line in (run_dir / "train_log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == [1, 2, 3]
    assert sum(r["best"] for r in log) >= 1
    assert max(r["dev_f1"] for r in log) == pytest.approx(saved["dev"]["f1"])
    assert (run_dir / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    model, vocabs, config = load_model_dir(run_dir)
    assert isinstance(model, GCDoc) and not model.training
    assert config.model.hidden == 16 and len(vocabs.labels) == model.num_labels


def test_resume_equals_uninterrupted(trained_run, tmp_path):
    straight_dir, straight = trained_run  # 3 epochs in one go, patience 10
    out = tmp_path / "resumed"
    first = run_experiment(tiny_config(out, epochs=2))
    assert first["epochs"] == 2
    resumed = run_experiment(tiny_config(out, epochs=3), resume=True)
    assert resumed["epochs"] == 3 and resumed["best_epoch"] == straight["best_epoch"]
    for split in ("dev", "test"):
        assert resumed[split] == straight[split]
    _assert_same_weights(_state(out / "last.pt"), _state(straight_dir / "last.pt"))
    _assert_same_weights(_state(out / "model.pt"), _state(straight_dir / "model.pt"))
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == [1, 2, 3]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="resuming on the GPU needs CUDA")
def test_resume_on_cuda(tmp_path):
    # The RNG states in last.pt must be restored as CPU byte tensors even when the run is on
    # the GPU (a CUDA map_location used to break every resume there).
    out = tmp_path / "cuda"
    config = tiny_config(out, epochs=1)
    run_experiment(dataclasses.replace(config, device="cuda"))
    resumed = run_experiment(dataclasses.replace(tiny_config(out, epochs=2), device="cuda"),
                             resume=True)
    assert resumed["epochs"] == 2


def test_resume_reads_a_checkpoint_with_state_of_an_earlier_version(trained_run, tmp_path):
    out = tmp_path / "old"
    run_experiment(tiny_config(out, epochs=2))
    ckpt = load_checkpoint(out / "last.pt")
    ckpt["state"]["wall_seconds"] = 12.5  # kept by versions before 2026-11-26
    save_checkpoint(out / "last.pt", {k: v for k, v in ckpt.items() if k != "format_version"})
    resumed = run_experiment(tiny_config(out, epochs=3), resume=True)
    assert resumed["epochs"] == 3 and resumed["dev"] == trained_run[1]["dev"]


def test_resume_without_checkpoint_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no checkpoint last.pt"):
        run_experiment(tiny_config(tmp_path / "empty"), resume=True)


@pytest.mark.parametrize("where", ["torch.save", "os.replace"])
def test_interrupted_checkpoint_write_keeps_previous(tmp_path, monkeypatch, where):
    path = tmp_path / "last.pt"
    save_checkpoint(path, {"model": {"w": torch.ones(3)}, "step": 1})

    def broken_save(obj, f, *args, **kwargs):
        with open(f, "wb") as handle:
            handle.write(b"PK\x03\x04 half a checkpoint")
        raise KeyboardInterrupt  # killed mid-write

    def broken_replace(src, dst):
        raise OSError("disk full")

    if where == "torch.save":
        monkeypatch.setattr(checkpoint.torch, "save", broken_save)
        expected = KeyboardInterrupt
    else:
        monkeypatch.setattr(atomic.os, "replace", broken_replace)
        expected = OSError
    with pytest.raises(expected):
        save_checkpoint(path, {"model": {"w": torch.zeros(3)}, "step": 2})
    monkeypatch.undo()
    state = load_checkpoint(path)
    assert state["step"] == 1 and torch.equal(state["model"]["w"], torch.ones(3))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.pt"]


def test_trainer_checkpoint_survives_failed_write(tmp_path, monkeypatch, sample_splits):
    from docgraph.graph.splits import build_vocabularies, prepare_split
    from docgraph.persistence.model_dir import build_model

    config = tiny_config(tmp_path)
    vocabs, _, _ = build_vocabularies(sample_splits, "none")
    train = prepare_split(sample_splits["train"][:2], vocabs, config)
    trainer = Trainer(build_model(config.model, vocabs), vocabs, config, train, train, tmp_path)
    trainer.save_checkpoint()
    before = _state(trainer.checkpoint_path)
    with torch.no_grad():
        trainer.model.emission.weight.add_(1.0)
    monkeypatch.setattr(atomic.os, "replace", lambda *a: (_ for _ in ()).throw(OSError("x")))
    with pytest.raises(OSError):
        trainer.save_checkpoint()
    monkeypatch.undo()
    _assert_same_weights(_state(trainer.checkpoint_path), before)
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]
    trainer.load_checkpoint()
    assert torch.equal(trainer.model.emission.weight, before["emission.weight"])


def test_corrupt_and_incompatible_checkpoints(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"this is not a checkpoint")
    with pytest.raises(CheckpointError, match="bad.pt: not a readable docgraph checkpoint"):
        load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="missing.pt: checkpoint not found"):
        load_checkpoint(tmp_path / "missing.pt")
    old = tmp_path / "old.pt"
    torch.save({"format_version": 99, "model": {}}, old)
    with pytest.raises(CheckpointError, match="format 99 is not supported"):
        load_checkpoint(old)
    foreign = tmp_path / "foreign.pt"
    torch.save({"model": {}}, foreign)
    with pytest.raises(CheckpointError, match="no format_version"):
        load_checkpoint(foreign)
    truncated = tmp_path / "truncated.pt"
    save_checkpoint(truncated, {"model": {"w": torch.ones(100)}})
    truncated.write_bytes(truncated.read_bytes()[:50])
    with pytest.raises(CheckpointError, match="not a readable"):
        load_checkpoint(truncated)


def test_corrupt_model_directory(model_dir, tmp_path):
    import shutil

    with pytest.raises(CheckpointError, match="model directory not found"):
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


def test_resume_with_other_architecture_is_a_checkpoint_error(model_dir, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(model_dir, run)
    with pytest.raises(CheckpointError, match="last.pt: does not fit"):
        run_experiment(tiny_config(run, model={"hidden": 8}), resume=True)


def test_non_finite_loss_stops_with_checkpoint_hint(tmp_path, monkeypatch):
    original_forward = GCDoc.forward
    original_log = Trainer._log
    poisoned = {"on": False}

    def forward(self, batch, compute_loss=True, **kwargs):
        out = original_forward(self, batch, compute_loss, **kwargs)
        if poisoned["on"]:
            out.loss = out.loss * float("nan")
        return out

    def log_then_poison(self, record):
        original_log(self, record)
        poisoned["on"] = True  # epoch 1 completes and is checkpointed; epoch 2 diverges

    monkeypatch.setattr(GCDoc, "forward", forward)
    monkeypatch.setattr(Trainer, "_log", log_then_poison)
    out = tmp_path / "nan"
    with pytest.raises(TrainingError, match=r"non-finite loss .* epoch 2.*last\.pt"):
        run_experiment(tiny_config(out, epochs=3))
    state = load_checkpoint(out / "last.pt")
    assert state["state"]["epoch"] == 1
    assert all(torch.isfinite(v).all() for v in state["model"].values() if v.is_floating_point())


def test_run_seeds_writes_summary(tmp_path):
    summary = run_seeds(tiny_config(tmp_path / "seeds", epochs=1), [1, 2])
    saved = json.loads((tmp_path / "seeds" / "summary.json").read_text())
    assert saved == summary and saved["seeds"] == [1, 2]
    runs = [json.loads((tmp_path / "seeds" / f"seed-{s}" / "metrics.json").read_text())
            for s in (1, 2)]
    assert [r["seed"] for r in runs] == [1, 2]
    for split in ("dev", "test"):
        for key in ("precision", "recall", "f1"):
            values = [r[split][key] for r in runs]
            assert saved[f"{split}_{key}_mean"] == pytest.approx(statistics.fmean(values))
            assert saved[f"{split}_{key}_std"] == pytest.approx(statistics.stdev(values))
            assert math.isfinite(saved[f"{split}_{key}_std"])
    assert os.path.isdir(tmp_path / "seeds" / "seed-2")


def test_evaluation_is_reproducible_and_leaves_the_rng_alone(model_dir, sample_splits):
    from docgraph.graph.splits import prepare_split
    from docgraph.tagging.inference import evaluate

    model, vocabs, config = load_model_dir(model_dir)
    dev = prepare_split(sample_splits["dev"], vocabs, config)
    torch.manual_seed(0)
    state = torch.get_rng_state()
    scores, pred = evaluate(model, dev, vocabs)
    assert torch.equal(torch.get_rng_state(), state)  # MC dropout draws from its own stream
    torch.manual_seed(123)
    again, pred_again = evaluate(model, dev, vocabs)
    assert pred_again == pred and again == scores


def test_time_budget_starts_no_epoch_that_would_overrun(tmp_path):
    # A budget far shorter than one epoch: the first epoch runs, no second one starts.
    metrics = run_experiment(tiny_config(tmp_path / "run", epochs=3, max_minutes=1e-6))
    assert metrics["epochs"] == 1
    log = [json.loads(line) for line in (tmp_path / "run" / "train_log.jsonl").open()]
    assert len(log) == 1 and log[0]["wall_seconds"] >= log[0]["epoch_seconds"] > 0


def test_one_cpu_process_trains_on_one_thread_by_default(tmp_path):
    torch.set_num_threads(2)  # what torch would start with on two cores
    try:
        metrics = run_experiment(tiny_config(tmp_path / "run", epochs=1, threads=0))
        assert metrics["threads"] == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(1)


def test_training_threads_rule():
    from docgraph.training.loop import training_threads

    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert training_threads(0, cpu) == 1
    assert training_threads(-1, cpu) == 1
    assert training_threads(2, cpu) == 2  # an explicit count wins
    assert training_threads(3, cpu, distributed=True) == 3
    assert training_threads(0, cpu, distributed=True) == 0  # set when the workers are spawned
    assert training_threads(0, cuda) == 0


def test_time_budget_lets_epochs_run_that_fit(tmp_path):
    metrics = run_experiment(tiny_config(tmp_path / "run", epochs=2, max_minutes=60))
    assert metrics["epochs"] == 2


def test_word_dim_follows_the_pretrained_vectors(tmp_path, sample_splits):
    words = sorted({w.lower() for d in sample_splits["train"] for w in d.tokens})[:40]
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("".join(f"{w} 0.1 -0.2 0.3\n" for w in words))
    config = tiny_config(tmp_path / "run", epochs=1)
    config.embeddings = str(vectors)
    metrics = run_experiment(config)
    assert config.model.word_dim == 50  # the caller's configuration is left alone
    assert metrics["config"]["model"]["word_dim"] == 3
    model, _, saved = load_model_dir(tmp_path / "run")
    assert saved.model.word_dim == 3 and model.word_embedding.embedding_dim == 3


def test_model_rejects_vectors_of_another_size(sample_vocabs):
    from docgraph.model import GCDocConfig
    from docgraph.persistence.model_dir import build_model

    with pytest.raises(ValueError, match="3 dimensions but config.word_dim is 50"):
        build_model(GCDocConfig(), sample_vocabs, torch.zeros(len(sample_vocabs.words), 3))


def test_prefetched_batches_equal_the_plain_ones_and_errors_reach_the_loop(sample_splits,
                                                                          sample_vocabs):
    from docgraph.batching.loader import iterate_batches
    from docgraph.graph import GraphConfig, TokenBudgetBatchSampler, documents_to_graphs
    from docgraph.persistence.model_dir import build_model

    graphs = documents_to_graphs(sample_splits["train"], sample_vocabs, GraphConfig())
    model = build_model(GCDocConfig(**TINY_MODEL), sample_vocabs)
    sampler = TokenBudgetBatchSampler([int(g.num_nodes) for g in graphs], 800, seed=3)
    plain = list(iterate_batches(graphs, sampler, torch.device("cpu"), model))
    ahead = list(iterate_batches(graphs, sampler, torch.device("cpu"), model, prefetch=2))
    assert [i for i, _ in plain] == [i for i, _ in ahead] and len(plain) > 2
    for (_, a), (_, b) in zip(plain, ahead):
        assert torch.equal(a.word, b.word) and b.plan.fits(model.config)
        assert b.plan.sentences.buckets[0].forward_index.equal(
            a.plan.sentences.buckets[0].forward_index)
    broken = [[0], [10**6]]  # the second batch names a graph that does not exist
    with pytest.raises(IndexError):
        list(iterate_batches(graphs, broken, torch.device("cpu"), model, prefetch=1))


def test_clip_groups_clip_the_uncertainty_tagger_apart(sample_vocabs):
    from docgraph.persistence.model_dir import build_model
    from docgraph.training.loop import clip_groups

    model = build_model(GCDocConfig(**TINY_MODEL), sample_vocabs)
    groups = clip_groups(model)
    tagger = {id(p) for p in model.document_graph.uncertainty.parameters()}
    trainable = {id(p) for p in model.parameters() if p.requires_grad}
    assert len(groups) == 2
    assert {id(p) for p in groups[1]} == tagger
    assert {id(p) for p in groups[0]} == trainable - tagger
    baseline = build_model(GCDocConfig.baseline(**TINY_MODEL), sample_vocabs)
    assert [len(g) for g in clip_groups(baseline)] == [len(list(baseline.parameters()))]
