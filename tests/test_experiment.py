"""Tests of :mod:`docgraph.training.experiment`: the run directory a training writes, several
seeds, the word vectors and threads a run chooses."""

import json
import math
import os
import statistics

import pytest
import torch
from conftest import tiny_config

from docgraph.model import GCDoc
from docgraph.persistence.model_dir import load_model_dir
from docgraph.training.experiment import run_experiment, run_seeds


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


def test_resume_without_checkpoint_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no checkpoint last.pt"):
        run_experiment(tiny_config(tmp_path / "empty"), resume=True)


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


def test_one_cpu_process_trains_on_one_thread_by_default(tmp_path):
    torch.set_num_threads(2)  # what torch would start with on two cores
    try:
        metrics = run_experiment(tiny_config(tmp_path / "run", epochs=1, threads=0))
        assert metrics["threads"] == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(1)


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


def test_overwrite_removes_the_previous_runs_files_only(tmp_path):
    from docgraph.training.experiment import remove_previous_run

    (tmp_path / "seed-1").mkdir()
    for name in ("model.pt", "last.pt", "metrics.json", "train.log", "summary.json",
                 "notes.txt", "seed-1/metrics.json", "seed-1/mine.csv"):
        (tmp_path / name).write_text("x")
    removed = remove_previous_run(tmp_path, seeds=[1])
    assert sorted(p.relative_to(tmp_path).as_posix() for p in removed) == [
        "last.pt", "metrics.json", "model.pt", "seed-1/metrics.json", "summary.json",
        "train.log"]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")
                  if p.is_file()) == ["notes.txt", "seed-1/mine.csv"]


def test_dev_fraction_holds_out_training_documents(tmp_path):
    # a column corpus without a dev file: dev is taken from the training documents
    import json
    import shutil
    from dataclasses import replace

    from docgraph.data.registry import load_dataset, sample_data_dir

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for split in ("train", "test"):
        shutil.copyfile(sample_data_dir() / f"{split}.txt", corpus / f"{split}.txt")
    config = replace(tiny_config(tmp_path / "run", epochs=1), dataset="column",
                     data_dir=str(corpus), dev_fraction=0.25)
    metrics = run_experiment(config)
    train = load_dataset("column", corpus, splits=("train",))["train"]
    log = (tmp_path / "run" / "train.log").read_text()
    held = round(0.25 * len(train))
    assert f"dev: {held} of the {len(train)} training documents, held out" in log
    assert metrics["dev"]["f1"] >= 0.0
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["dev_fraction"] == 0.25
