"""Fine-tuning that keeps the starting model's types (docgraph/config/init_from.py,
docgraph/training/init_from.py, docgraph/training/experiment.py): the fine-tuning settings in
place of the small-corpus ones, silver labels and the partial-annotation lattice, the minimum
of steps within the epoch cap, the line saying why a run stopped and a checkpoint that stores
only the rows a run changed."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from conftest import TINY_FLAGS, tiny_config

from docgraph.cli.arguments import check_arguments, train_parser
from docgraph.config import ConfigError, ExperimentConfig, TrainConfig, check_values
from docgraph.config.fine_tune import FineTuneConfig
from docgraph.config.init_from import FINE_TUNING, fine_tune_line, fine_tune_settings
from docgraph.config.train import SMALL_CORPUS
from docgraph.data.document import make_document
from docgraph.data.vocab import Vocab
from docgraph.persistence.checkpoint import changed_rows, full_rows, load_checkpoint
from docgraph.training.experiment import run_experiment
from docgraph.training.init_from import (
    annotated_types,
    label_lattice,
    with_silver,
    without_types,
)
from docgraph.training.loop import (
    TrainState,
    early_stopped,
    effective_min_steps,
    stop_line,
    stop_reason,
)

#: A document of 14 tokens (two entities).
DOCUMENT = ("-DOCSTART- O\n\nKestrel B-ORG\nbeat O\nCarrow B-ORG\nin O\nVeldania B-LOC\n. O\n\n"
            "Piet B-PER\nRauch I-PER\nscored O\ntwice O\nfor O\nKestrel B-ORG\ntoday O\n. O\n\n")


def _corpus(directory: Path, documents: int = 4) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "train.txt").write_text(DOCUMENT * documents)
    (directory / "dev.txt").write_text(DOCUMENT)
    (directory / "test.txt").write_text(DOCUMENT)
    return directory


def _dated_corpus_and_rehearsal(tmp_path: Path) -> tuple[Path, Path]:
    """A corpus of four training documents annotating a type the model lacks (``DATE``), and
    a rehearsal file of two documents that do not annotate it."""
    data = _corpus(tmp_path / "mine")
    dated = DOCUMENT.replace("today O", "today B-DATE")
    for split in ("train", "dev", "test"):
        (data / f"{split}.txt").write_text(dated * (4 if split == "train" else 1))
    rehearse = tmp_path / "rehearse.txt"
    rehearse.write_text(DOCUMENT * 2)
    return data, rehearse


def _config(*argv: str) -> ExperimentConfig:
    return check_arguments(train_parser().parse_args([*argv, "--quiet"]))


# -- the settings of a fine-tuning run


def test_the_fine_tuning_settings_are_valid_and_not_the_small_corpus_ones():
    check_values({"train": dict(FINE_TUNING)}, "FINE_TUNING")
    config = TrainConfig(**FINE_TUNING)
    assert {key: getattr(config, key) for key in FINE_TUNING} == dict(FINE_TUNING)
    assert FINE_TUNING["lr"] < SMALL_CORPUS["lr"] and FINE_TUNING["min_steps"] == 0
    assert FINE_TUNING["epochs"] < SMALL_CORPUS["epochs"]
    assert fine_tune_settings(TrainConfig(), {"lr"}) == {
        k: v for k, v in FINE_TUNING.items() if k != "lr"}
    with pytest.raises(ConfigError, match="keep_types"):
        FineTuneConfig(keep_types="all")


def test_a_fine_tuning_run_takes_the_fine_tuning_settings_not_the_small_corpus_ones(
        tmp_path, model_dir):
    data = _corpus(tmp_path / "mine")
    common = ["--dataset", "column", "--data-dir", str(data), *TINY_FLAGS]
    scratch = _config(*common, "--output-dir", str(tmp_path / "a"))
    assert scratch.train.lr == SMALL_CORPUS["lr"] and scratch.train.min_steps == 300
    tuned = _config(*common, "--output-dir", str(tmp_path / "b"), "--init-from", str(model_dir))
    assert {k: getattr(tuned.train, k) for k in FINE_TUNING if k != "processes"} == {
        k: v for k, v in FINE_TUNING.items() if k != "processes"}
    assert tuned.fine_tune.keep_types == "silver"
    # a flag still sets any of them, and --fully-annotated turns the keeping off
    own = _config(*common, "--output-dir", str(tmp_path / "c"), "--init-from", str(model_dir),
                  "--lr", "0.003", "--fully-annotated")
    assert own.train.lr == 0.003 and own.train.epochs == FINE_TUNING["epochs"]
    assert own.fine_tune.keep_types == "off"
    line = fine_tune_line("conll03", own.train)
    assert "--lr 0.003" in line and "would be --lr 0.002" in line
    assert "the fine-tuning settings:" in fine_tune_line("conll03", tuned.train)


def test_rehearse_needs_init_from_and_a_readable_file(tmp_path, model_dir):
    data = _corpus(tmp_path / "mine")
    common = ["--dataset", "column", "--data-dir", str(data), *TINY_FLAGS]
    with pytest.raises(ValueError, match="--rehearse.*--init-from"):
        _config(*common, "--output-dir", str(tmp_path / "a"), "--rehearse",
                str(data / "dev.txt"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "Kestrel won", "spans": [[0, 4, "ORG"]]}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        _config(*common, "--output-dir", str(tmp_path / "b"), "--init-from", str(model_dir),
                "--rehearse", str(bad))


# -- silver labels and the lattice of partial annotation


def test_silver_labels_fill_only_what_the_data_left_unannotated():
    document = make_document("d", [
        (["Kestrel", "sold", "Dutch", "tulips", "in", "Veldania", "."],
         ["B-PRODUCT", "O", "O", "O", "O", "B-LOC", "O"]),
        (["The", "Euro", "Cup", "began", "."], ["O", "O", "O", "O", "O"])])
    predicted = [["B-ORG", "O", "B-MISC", "O", "O", "B-MISC", "O"],  # ORG: annotated type
                 ["O", "B-MISC", "I-MISC", "O", "O"]]
    merged, added = with_silver(document, predicted, ["MISC"])
    assert added == 2
    assert merged.sentences[0].tags == ("B-PRODUCT", "O", "B-MISC", "O", "O", "B-LOC", "O")
    assert merged.sentences[1].tags == ("O", "B-MISC", "I-MISC", "O", "O")
    # a predicted span that overlaps a span of the data is not taken, even in part
    overlap, added = with_silver(document, [["B-MISC", "I-MISC", "O", "O", "O", "O", "O"],
                                            ["O"] * 5], ["MISC"])
    assert added == 0 and overlap == document
    assert annotated_types([document]) == {"PRODUCT", "LOC"}
    with pytest.raises(ValueError, match="sentences"):
        with_silver(document, predicted[:1], ["MISC"])


def test_without_types_takes_out_the_spans_of_those_types_only():
    document = make_document("d", [
        (["Kestrel", "sold", "Dutch", "tulips", "in", "Veldania", "."],
         ["B-PRODUCT", "O", "B-MISC", "O", "O", "B-LOC", "O"]),
        (["The", "Euro", "Cup", "began", "."], ["O", "B-MISC", "I-MISC", "O", "O"])])
    taken = without_types(document, ["MISC", "LOC"])
    assert taken.sentences[0].tags == ("B-PRODUCT", "O", "O", "O", "O", "O", "O")
    assert taken.sentences[1].tags == ("O",) * 5
    assert taken.sentences[0].tokens == document.sentences[0].tokens
    assert without_types(document, ["PER"]) == document
    # then the model's own entities go in where no span of another type is
    merged, added = with_silver(taken, [["B-ORG", "O", "B-MISC", "O", "O", "B-LOC", "O"],
                                        ["O", "B-MISC", "I-MISC", "O", "O"]],
                                ["MISC", "LOC", "ORG"])
    assert added == 3  # B-ORG overlaps the data's PRODUCT: not taken
    assert merged.sentences[0].tags == ("B-PRODUCT", "O", "B-MISC", "O", "O", "B-LOC", "O")


def test_the_lattice_frees_an_outside_token_for_the_unannotated_types_only():
    labels = Vocab(["O", "B-LOC", "B-MISC", "E-MISC", "I-MISC", "S-LOC", "S-MISC"])
    lattice = label_lattice(labels, ["MISC"])
    o = labels.index("O")
    assert lattice[o].nonzero().squeeze(1).tolist() == [
        o, *(labels.index(t) for t in ("B-MISC", "E-MISC", "I-MISC", "S-MISC"))]
    others = [i for i in range(len(labels)) if i != o]
    assert torch.equal(lattice[others], torch.eye(len(labels), dtype=torch.bool)[others])


def test_a_partial_run_trains_with_the_lattice_and_a_silver_dev(tmp_path, model_dir, caplog):
    # the tiny model knows LOC, MISC, ORG, PER; the data annotates ORG, LOC and PER only
    data = _corpus(tmp_path / "mine")
    config = _config("--dataset", "column", "--data-dir", str(data), *TINY_FLAGS,
                     "--output-dir", str(tmp_path / "run"), "--init-from", str(model_dir),
                     "--keep-types", "partial", "--epochs", "2", "--rehearse",
                     str(data / "dev.txt"))
    with caplog.at_level(logging.INFO, logger="docgraph"):
        metrics = run_experiment(config, progress=False)
    text = caplog.text
    assert "its types MISC are not annotated" in text and "partial annotation" in text
    assert "--rehearse" in text and "join the 4 training documents" in text
    assert "fine-tuning from" in text and "training stopped after epoch 2 by the epoch cap" in text
    assert metrics["config"]["fine_tune"]["keep_types"] == "partial"


def test_a_model_labelled_run_replaces_the_datas_spans_of_the_models_types(tmp_path, model_dir,
                                                                           caplog):
    # the tiny model knows LOC, MISC, ORG, PER: each is labelled by the model, whatever the data
    data = _corpus(tmp_path / "mine")
    config = _config("--dataset", "column", "--data-dir", str(data), *TINY_FLAGS,
                     "--output-dir", str(tmp_path / "run"), "--init-from", str(model_dir),
                     "--keep-types", "model", "--epochs", "1")
    with caplog.at_level(logging.INFO, logger="docgraph"):
        metrics = run_experiment(config, progress=False)
    assert ("its types LOC, MISC, ORG, PER are labelled by the model alone (the data's own "
            "spans of them taken out)") in caplog.text
    assert "in the 4 train documents" in caplog.text and "dev documents" in caplog.text
    assert "the starting model: dev" not in caplog.text  # it agrees with its own labels
    assert metrics["config"]["fine_tune"]["keep_types"] == "model"
    assert metrics["epochs"] == 1 and metrics["best_epoch"] == 1


# -- early stopping at any size


def test_min_steps_never_beyond_half_the_epoch_cap():
    config = TrainConfig(epochs=100, min_steps=300, patience=10)
    assert effective_min_steps(config, 2) == 100  # 2 steps an epoch: 50 epochs' worth
    assert effective_min_steps(config, 13) == 300  # within the cap: unchanged
    state = TrainState(epoch=60, bad_epochs=10,
                       history=[{"epoch": e, "steps": 2} for e in range(1, 61)])
    assert not early_stopped(state, config)  # 120 steps < 300: never before the cap
    assert early_stopped(state, config, effective_min_steps(config, 2))
    assert stop_reason(state, config, 100) == "early_stopping"


def test_the_stop_line_says_why_in_plain_words():
    config = TrainConfig(epochs=30, patience=5, max_minutes=3)
    history = [{"epoch": e, "steps": 2} for e in range(1, 12)]
    state = TrainState(epoch=11, best_f1=71.5, best_epoch=6, bad_epochs=5, history=history)
    assert stop_line(state, config) == (
        "training stopped after epoch 11 by early stopping: no better dev F1 in the last 5 "
        "epochs (--patience 5) after 22 optimiser steps; the best epoch is 6 (dev F1 71.50)")
    capped = replace(state, epoch=30, bad_epochs=2)
    assert "by the epoch cap (--epochs 30), 2 epochs after the best" in stop_line(capped, config)
    start = replace(state, epoch=4, best_epoch=0, bad_epochs=2, start_dev_f1=71.5)
    assert stop_line(start, config).endswith(
        "by the time budget (--max-minutes 3); the best is the starting model (dev F1 71.50)")


# -- a checkpoint that stores only what changed


def test_changed_rows_round_trip():
    reference = torch.randn(10, 4)
    tensor = reference.clone()
    tensor[[2, 7]] += 1
    stored = changed_rows(tensor, reference)
    assert isinstance(stored, dict) and stored["index"].tolist() == [2, 7]
    assert torch.equal(full_rows(stored, reference), tensor)
    state = torch.zeros(10, 4)
    state[3] = 0.5
    assert torch.equal(full_rows(changed_rows(state)), state)
    moved = reference + 1  # most rows changed: stored whole
    assert changed_rows(moved, reference) is moved
    assert full_rows(moved, reference) is moved


def test_a_fine_tuning_checkpoint_is_lean_and_resumes_exactly(tmp_path, model_dir):
    # the embedding rows a run never reads (and their optimiser state) are left out of last.pt
    data = _corpus(tmp_path / "mine", documents=2)

    def config(out: Path, epochs: int) -> ExperimentConfig:
        base = tiny_config(out, epochs=epochs)
        return replace(base, dataset="column", data_dir=str(data), init_from=str(model_dir),
                       train=replace(base.train, weight_decay=0.0, optimizer="adam", lr=0.001))

    straight, out = tmp_path / "straight", tmp_path / "resumed"
    whole = run_experiment(config(straight, 3), progress=False)
    run_experiment(config(out, 2), progress=False)
    resumed = run_experiment(config(out, 3), resume=True, progress=False)
    for split in ("dev", "test"):
        assert resumed[split] == whole[split]
    a, b = load_checkpoint(straight / "last.pt"), load_checkpoint(out / "last.pt")
    # the model's word rows that the corpus never reads are left out, and their Adam state
    rows = a["model"]["word_embedding.weight"]
    assert isinstance(rows, dict) and 0 < len(rows["index"]) < rows["changed_rows"][0] // 2
    assert any(isinstance(t, dict) for entry in a["optimizer"]["state"].values()
               for t in entry.values())
    assert json.dumps(a["state"]["history"][-1]["dev_f1"]) == json.dumps(
        b["state"]["history"][-1]["dev_f1"])
    assert a["model"].keys() == b["model"].keys()
    for key, value in a["model"].items():
        other = b["model"][key]
        if isinstance(value, dict):
            assert torch.equal(value["index"], other["index"]), key
            assert torch.equal(value["values"], other["values"]), key
        else:
            assert torch.equal(value, other), key


# -- rehearsal documents that do not annotate the added types


def _graphs(documents, model_dir):
    from docgraph.graph.build import documents_to_graphs
    from docgraph.persistence.model_dir import load_model_dir

    model, vocabs, config = load_model_dir(model_dir)
    return model, vocabs, documents_to_graphs(documents, vocabs, config.graph_config())


def _crf_loss(model, graphs, partial: bool | None = None) -> float:
    from torch_geometric.data import Batch

    graphs = [g.clone() for g in graphs]
    if partial is not None:
        for g in graphs:
            g.partial = torch.full((int(g.num_nodes),), partial, dtype=torch.bool)
    with torch.no_grad():
        return float(model(Batch.from_data_list(graphs), mc_seed=0).crf_loss)


def test_the_partial_lattice_holds_for_the_marked_graphs_alone(model_dir, sample_splits):
    from torch_geometric.data import Batch

    docs = sample_splits["train"][:4]
    model, vocabs, graphs = _graphs(docs, model_dir)
    own, rehearsed = graphs[:2], graphs[2:]
    plain = {"own": _crf_loss(model, own), "rehearsed": _crf_loss(model, rehearsed)}
    wider = label_lattice(vocabs.labels, ["MISC"])
    model.set_label_lattice(None, wider)
    # unmarked graphs (or no marks at all) keep their gold; marked ones follow the lattice
    assert _crf_loss(model, own, partial=False) == pytest.approx(plain["own"], rel=1e-6)
    assert _crf_loss(model, own) == pytest.approx(plain["own"], rel=1e-6)
    marked = _crf_loss(model, rehearsed, partial=True)
    assert marked < plain["rehearsed"]  # more paths allowed: a higher likelihood
    model.set_label_lattice(wider)  # the same lattice for every token
    assert _crf_loss(model, rehearsed) == pytest.approx(marked, rel=1e-6)
    model.set_label_lattice(None, wider)
    mixed = [g.clone() for g in graphs]
    for i, g in enumerate(mixed):
        g.partial = torch.full((int(g.num_nodes),), i >= 2, dtype=torch.bool)
    with torch.no_grad():
        both = float(model(Batch.from_data_list(mixed), mc_seed=0).crf_loss)
    assert both == pytest.approx(plain["own"] + marked, rel=1e-5)
    with pytest.raises(ValueError, match="diagonal is set"):
        model.set_label_lattice(None, torch.zeros_like(wider))
    model.set_label_lattice(None)


def test_own_repeats_shows_each_own_document_k_times_and_the_rehearsal_once(tmp_path, model_dir,
                                                                         caplog):
    data, rehearse = _dated_corpus_and_rehearsal(tmp_path)
    common = ("--dataset", "column", "--data-dir", str(data), *TINY_FLAGS, "--init-from",
              str(model_dir), "--epochs", "1", "--batch-tokens", "10")
    config = _config(*common, "--output-dir", str(tmp_path / "run"), "--rehearse",
                     str(rehearse), "--rehearse-partial", "--own-repeats", "3")
    with caplog.at_level(logging.INFO, logger="docgraph"):
        metrics = run_experiment(config, progress=False)
    assert "join the 4 training documents (each seen 3 times per epoch" in caplog.text
    # the rehearsal documents are still the ones marked: the repeats come before them
    assert "in the 2 graphs of the --rehearse documents" in caplog.text
    assert metrics["config"]["fine_tune"]["own_repeats"] == 3
    trained = json.loads((tmp_path / "run" / "train_log.jsonl").read_text().splitlines()[-1])
    assert trained["steps"] == 3 * 4 + 2  # batches of 10 tokens: one document each
    with pytest.raises(ValueError, match="^--own-repeats 3: weighs .*give --rehearse"):
        _config(*common, "--output-dir", str(tmp_path / "b"), "--own-repeats", "3")


def test_marking_finds_the_rehearsal_graphs_by_their_first_token(model_dir, sample_splits):
    from docgraph.graph.splits import PreparedSplit
    from docgraph.training.experiment import _mark_rehearsal

    docs = sample_splits["train"][:3]
    _, _, graphs = _graphs(docs, model_dir)
    _, _, variant = _graphs(docs, model_dir)
    train, lower = PreparedSplit(list(docs), graphs), PreparedSplit(list(docs), variant)
    first = int(graphs[0].num_nodes) + int(graphs[1].num_nodes)
    assert _mark_rehearsal(train, {"lower": lower}, first, "partial") == 1
    for split in (train, lower):
        assert [bool(g.partial.all()) for g in split.graphs] == [False, False, True]
        assert [bool(g.partial.any()) for g in split.graphs] == [False, False, True]
        assert all(g.partial.numel() == g.num_nodes for g in split.graphs)
    with pytest.raises(RuntimeError, match="inside a graph"):
        _mark_rehearsal(train, {}, first - 1, "partial")


def test_a_run_leaves_the_added_types_unknown_in_its_rehearsal_documents(tmp_path, model_dir,
                                                                       caplog):
    data, rehearse = _dated_corpus_and_rehearsal(tmp_path)
    common = ("--dataset", "column", "--data-dir", str(data), *TINY_FLAGS, "--init-from",
              str(model_dir), "--epochs", "1", "--rehearse", str(rehearse))
    config = _config(*common, "--output-dir", str(tmp_path / "run"), "--rehearse-partial")
    with caplog.at_level(logging.INFO, logger="docgraph"):
        metrics = run_experiment(config, progress=False)
    assert ("--rehearse-partial: in the 2 graphs of the --rehearse documents a token tagged O "
            "may carry any label of DATE in the loss") in caplog.text
    assert metrics["config"]["fine_tune"]["rehearse_partial"] is True
    with pytest.raises(ValueError, match="^--rehearse-partial says what.*give --rehearse"):
        _config("--dataset", "column", "--data-dir", str(data), *TINY_FLAGS, "--output-dir",
                str(tmp_path / "b"), "--init-from", str(model_dir), "--rehearse-partial")
