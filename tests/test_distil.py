"""Fine-tuning with the starting model's labels distilled (docgraph/training/distil.py): the
divergence against its definition computed term by term, the labels of an added type left free,
the frozen copy never trained, and ``--distil`` reaching the training loop (resumed exactly)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from docgraph.batching.loader import collate
from docgraph.cli.arguments import check_arguments, train_parser
from docgraph.config import ExperimentConfig
from docgraph.config.train import TrainConfig
from docgraph.graph.build import documents_to_graphs
from docgraph.persistence.model_dir import load_model_dir
from docgraph.training.distil import Distiller, label_distillation
from docgraph.training.experiment import run_experiment
from docgraph.training.init_from import (
    grow_vocabularies,
    initial_model,
    label_map,
    load_init_model,
)
from docgraph.training.loop import clip_groups, make_optimizer, training_step
from tests.conftest import TINY_FLAGS, resumed_like_whole, with_type


def test_the_divergence_is_the_sum_over_tokens_of_kl_over_the_chosen_labels():
    generator = torch.Generator().manual_seed(0)
    teacher = torch.randn(5, 7, generator=generator) * 3
    student = torch.randn(5, 7, generator=generator) * 3
    labels = torch.tensor([0, 2, 3, 6])
    expected = 0.0
    for t in range(5):
        p = [float(teacher[t, c].exp()) for c in labels]
        q = [float(student[t, c].exp()) for c in labels]
        p = [x / sum(p) for x in p]
        q = [x / sum(q) for x in q]
        expected += sum(a * (torch.tensor(a).log() - torch.tensor(b).log()).item()
                        for a, b in zip(p, q))
    assert float(label_distillation(teacher, student, labels)) == pytest.approx(expected,
                                                                                rel=1e-5)
    assert float(label_distillation(teacher, teacher, labels)) == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="differ in shape"):
        label_distillation(teacher, student[:4], labels)


def test_the_labels_outside_the_set_get_no_gradient():
    teacher = torch.randn(4, 6)
    student = torch.randn(4, 6, requires_grad=True)
    labels = torch.tensor([0, 1, 3])
    label_distillation(teacher, student, labels).backward()
    grad = student.grad
    assert grad is not None
    assert torch.all(grad[:, [2, 4, 5]] == 0) and grad[:, labels].abs().sum() > 0
    # the added labels' scores change nothing
    moved = student.detach().clone()
    moved[:, [2, 4, 5]] += 100.0
    assert float(label_distillation(teacher, moved, labels)) == pytest.approx(
        float(label_distillation(teacher, student.detach(), labels)), rel=1e-6)


def test_a_distilled_step_trains_the_model_and_never_its_frozen_copy(model_dir, sample_splits):
    init = load_init_model(model_dir)
    splits = {name: [with_type(d) for d in docs] for name, docs in sample_splits.items()}
    vocabs, rows, growth = grow_vocabularies(init, splits, "none")
    assert growth.added_types == ["DATE"]
    model = initial_model(init, init.config.model, vocabs, rows)
    distiller = Distiller(model, label_map(init.vocabs.labels, vocabs.labels)[0], 2.0)
    assert distiller.labels.numel() == len(init.vocabs.labels) < len(vocabs.labels)
    assert "weight=2.0" in repr(distiller)
    frozen = {k: v.clone() for k, v in distiller.teacher.state_dict().items()}
    graphs = documents_to_graphs(splits["train"][:4], vocabs, init.config.graph_config())
    batch = collate(graphs, [0, 1], torch.device("cpu"), model.plan_settings())
    model.eval()  # the same computation as the copy's: nothing to distil yet
    out = model(batch, compute_loss=False, mc_seed=0)
    assert float(distiller.loss(batch, out).detach()) == pytest.approx(0.0, abs=1e-3)
    model.train()
    optimizer = make_optimizer(model, TrainConfig(optimizer="adam", lr=0.05))
    start = {k: v.clone() for k, v in model.state_dict().items()}
    plain = model(batch).loss.detach()
    total, _ = training_step(model, optimizer, batch, clip_groups(model), 5.0,
                             distiller=distiller)
    assert float(total) != pytest.approx(float(plain))  # the term is in the step's loss
    assert any(not torch.equal(v, start[k]) for k, v in model.state_dict().items())
    assert all(torch.equal(v, frozen[k]) for k, v in distiller.teacher.state_dict().items())
    assert not any(p.requires_grad for p in distiller.teacher.parameters())
    model.eval()
    after = model(batch, compute_loss=False, mc_seed=0)
    assert float(distiller.loss(batch, after)) > 0


def test_a_distilled_mask_limits_the_term_to_its_tokens(model_dir, sample_splits):
    init = load_init_model(model_dir)
    splits = {name: [with_type(d) for d in docs] for name, docs in sample_splits.items()}
    vocabs, rows, _ = grow_vocabularies(init, splits, "none")
    model = initial_model(init, init.config.model, vocabs, rows)
    labels = label_map(init.vocabs.labels, vocabs.labels)[0]
    distiller = Distiller(model, labels, 3.0)
    graphs = documents_to_graphs(splits["train"][:2], vocabs, init.config.graph_config())
    for graph, flag in zip(graphs, (False, True)):
        graph.distilled = torch.full((int(graph.num_nodes),), flag, dtype=torch.bool)
    batch = collate(graphs, [0, 1], torch.device("cpu"), model.plan_settings())
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn_like(p))  # away from the frozen copy
    out = model(batch, compute_loss=False, mc_seed=0)
    teacher = distiller.teacher(batch, compute_loss=False, mc_seed=0).emissions
    covered = batch.distilled
    assert 0 < int(covered.sum()) < int(covered.numel())
    expected = 3.0 * label_distillation(teacher[covered], out.emissions[covered].detach(), labels)
    whole = 3.0 * label_distillation(teacher, out.emissions.detach(), labels)
    got = distiller.loss(batch, out).detach()
    assert float(got) == pytest.approx(float(expected), rel=1e-5)
    assert float(got) < float(whole)
    batch.distilled = torch.zeros_like(covered)  # nothing covered: no term, no frozen pass
    distiller.teacher = None
    assert float(distiller.loss(batch, out)) == 0.0


def test_a_distiller_refuses_a_weight_that_is_not_positive(model_dir):
    model, _, _ = load_model_dir(model_dir)
    with pytest.raises(ValueError, match="weight must be positive"):
        Distiller(model, torch.tensor([0]), 0.0)


def _corpus(directory: Path) -> Path:
    document = ("-DOCSTART- O\n\nKestrel B-ORG\nbeat O\nCarrow B-ORG\non O\nMonday B-DATE\n"
                ". O\n\nPiet B-PER\nRauch I-PER\nscored O\nin O\nMay B-DATE\n. O\n\n")
    directory.mkdir(parents=True, exist_ok=True)
    for split, copies in (("train", 3), ("dev", 1), ("test", 1)):
        (directory / f"{split}.txt").write_text(document * copies)
    return directory


def _config(data: Path, out: Path, model_dir: Path, epochs: int, *extra: str
            ) -> ExperimentConfig:
    return check_arguments(train_parser().parse_args(
        ["--dataset", "column", "--data-dir", str(data), *TINY_FLAGS, "--output-dir", str(out),
         "--init-from", str(model_dir), "--epochs", str(epochs), "--lr", "0.02", "--patience",
         "5", *extra]))


def test_distil_needs_a_model_to_start_from(tmp_path):
    data = _corpus(tmp_path / "mine")
    with pytest.raises(ValueError, match="--distil 1.0: distils.*--init-from"):
        check_arguments(train_parser().parse_args(
            ["--dataset", "column", "--data-dir", str(data), *TINY_FLAGS, "--output-dir",
             str(tmp_path / "a"), "--distil", "1"]))


def test_distil_on_rehearsal_needs_distil_and_rehearsal_documents(tmp_path, model_dir):
    data = _corpus(tmp_path / "mine")
    with pytest.raises(ValueError, match="--distil-on rehearsal: says which tokens"):
        _config(data, tmp_path / "a", model_dir, 1, "--distil", "1", "--distil-on",
                "rehearsal")
    with pytest.raises(ValueError, match="--distil-on rehearsal: says which tokens"):
        _config(data, tmp_path / "b", model_dir, 1, "--rehearse", str(data / "dev.txt"),
                "--distil-on", "rehearsal")


def test_distilled_on_rehearsal_the_users_documents_learn_from_their_labels_alone(
        tmp_path, model_dir):
    data = _corpus(tmp_path / "mine")
    rehearse = tmp_path / "rehearse.txt"
    rehearse.write_text((data / "train.txt").read_text().replace("B-DATE", "O"))
    flags = ("--rehearse", str(rehearse), "--distil", "20")
    run_experiment(_config(data, tmp_path / "all", model_dir, 3, *flags), progress=False)
    only = run_experiment(_config(data, tmp_path / "only", model_dir, 3, *flags, "--distil-on",
                                  "rehearsal"), progress=False)
    assert only["config"]["fine_tune"]["distil_on"] == "rehearsal"
    log = (tmp_path / "only" / "train.log").read_text()
    assert "--distil 20: each --rehearse token keeps" in log
    # the same tokens are distilled in the rehearsal documents; the user's are not: the run
    # moves further from its start on the user's documents than the one distilled everywhere
    assert _divergence_from_start(tmp_path / "only", model_dir, data) > \
        _divergence_from_start(tmp_path / "all", model_dir, data)


def _divergence_from_start(run: Path, model_dir: Path, data: Path) -> float:
    """The summed divergence of the run's best model from its starting model on the training
    documents (both read as the run's vocabularies do)."""
    from docgraph.data.conll import read_conll

    model, vocabs, config = load_model_dir(run)
    init = load_init_model(model_dir)
    splits = {"train": read_conll(data / "train.txt"), "dev": read_conll(data / "dev.txt")}
    start_vocabs, rows, _ = grow_vocabularies(init, splits, "none")
    assert start_vocabs.labels.tokens == vocabs.labels.tokens
    start = initial_model(init, init.config.model, start_vocabs, rows).eval()
    graphs = documents_to_graphs(splits["train"], vocabs, config.graph_config())
    batch = collate(graphs, list(range(len(graphs))), torch.device("cpu"),
                    model.plan_settings())
    labels = label_map(init.vocabs.labels, vocabs.labels)[0]
    with torch.no_grad():
        return float(label_distillation(start(batch, compute_loss=False, mc_seed=0).emissions,
                                        model(batch, compute_loss=False, mc_seed=0).emissions,
                                        labels))


def test_a_distilled_fine_tune_stays_nearer_its_starting_model(tmp_path, model_dir):
    data = _corpus(tmp_path / "mine")
    free = run_experiment(_config(data, tmp_path / "free", model_dir, 3), progress=False)
    kept = run_experiment(_config(data, tmp_path / "kept", model_dir, 3, "--distil", "20"),
                          progress=False)
    assert kept["config"]["fine_tune"]["distil"] == 20.0
    assert free["init_from"]["added_types"] == ["DATE"]
    log = (tmp_path / "kept" / "train.log").read_text()
    assert "--distil 20: each training token keeps" in log
    assert _divergence_from_start(tmp_path / "kept", model_dir, data) < \
        0.5 * _divergence_from_start(tmp_path / "free", model_dir, data)


def test_a_distilled_fine_tune_resumes_exactly(tmp_path, model_dir):
    # a resumed run distils from the starting model, not from its checkpoint
    data = _corpus(tmp_path / "mine")
    losses = resumed_like_whole(
        lambda out, epochs: _config(data, out, model_dir, epochs, "--distil", "5"), tmp_path,
        "loss")
    assert losses[0] == losses[1] and len(losses[0]) == 3
