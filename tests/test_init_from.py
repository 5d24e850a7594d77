"""Starting a run from a trained model (docgraph/training/init_from.py, train.py --init-from):
grown vocabularies keep the model's rows, a new type keeps the model's scores, the first
forward pass is the model's, and a run from the command line records where it started."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch

from docgraph.data.conll import write_conll
from docgraph.data.document import make_document
from docgraph.data.embeddings import load_embeddings
from docgraph.data.vocab import Vocab
from docgraph.graph.build import documents_to_graphs
from docgraph.model import bioes_transition_masks
from docgraph.persistence.model_dir import load_model_dir
from docgraph.training.init_from import (
    LM_COLUMNS,
    InitFromError,
    grow_vocabularies,
    initial_model,
    label_map,
    load_init_model,
)
from tests.conftest import TINY_FLAGS, UNSEEN_VECTOR_WORDS, run_script, with_type


def _batch(documents, vocabs, config):
    return Batch.from_data_list(documents_to_graphs(documents, vocabs, config.graph_config()))


def test_vocabulary_growth_keeps_old_rows_bit_identical(vectors_run, sample_splits):
    run_dir, _ = vectors_run
    init = load_init_model(run_dir)
    new_doc = make_document("new", [(["The", "lighthouse", "zqxjv", "stood", "."],
                                     ["O", "O", "O", "O", "O"])])
    splits = {**sample_splits, "train": [*sample_splits["train"], new_doc]}
    vocabs, rows, growth = grow_vocabularies(init, splits, init.config.embeddings,
                                             eval_words=False)
    old = init.vocabs.words
    assert vocabs.words.tokens[:len(old)] == old.tokens
    added = {w for w in new_doc.tokens if w not in old}
    assert {"lighthouse", "zqxjv"} <= added and "The" not in added
    assert set(vocabs.words.tokens[len(old):]) == added
    assert growth.words == len(added) and rows.shape == (len(added), init.config.model.word_dim)
    model = initial_model(init, init.config.model, vocabs, rows)
    weight = model.word_embedding.weight.detach()
    assert torch.equal(weight[:len(old)], init.state["word_embedding.weight"])
    words, matrix = load_embeddings(init.config.embeddings)
    lighthouse = vocabs.words.index("lighthouse")
    assert torch.equal(weight[lighthouse], torch.from_numpy(
        np.asarray(matrix[words.index("lighthouse")], dtype=np.float32)))
    # "lighthouse" alone has a vector; the others start as the model's <unk>, as it read them
    assert growth.word_vectors["found_exact"] == 1
    assert growth.word_vectors["missing"] == len(added) - 1
    unk = init.state["word_embedding.weight"][old.unk_index]
    assert all(torch.equal(weight[vocabs.words.index(w)], unk) for w in added - {"lighthouse"})
    assert "0000" in UNSEEN_VECTOR_WORDS and "0000" not in vocabs.words  # eval words: off


def test_a_new_type_extends_the_output_layers_and_keeps_the_old_scores(model_dir,
                                                                       sample_splits):
    init = load_init_model(model_dir)
    assert "MISC" in init.types and "DATE" not in init.types
    splits = {**sample_splits, "train": [with_type(d) for d in sample_splits["train"]]}
    config = replace(init.config.model, constrained_decoding=True)
    vocabs, rows, growth = grow_vocabularies(init, splits, "none")
    assert growth.added_types == ["DATE"] and growth.types_not_in_data == ["MISC"]
    new, old = vocabs.labels, init.vocabs.labels
    assert {f"{p}-DATE" for p in "BIES"} <= set(new) and set(old) <= set(new)
    torch.manual_seed(0)
    model = initial_model(init, config, vocabs, rows)
    state = model.state_dict()
    for a in old:  # by label name against the model's own tensors
        i, k = new.index(a), old.index(a)
        for key in ("crf.crf.start_transitions", "crf.crf.end_transitions", "emission.bias",
                    "document_graph.uncertainty.lin.bias"):
            assert torch.equal(state[key][i], init.state[key][k]), (key, a)
        assert torch.equal(state["emission.weight"][i], init.state["emission.weight"][k])
        for b in old:
            assert torch.equal(state["crf.crf.transitions"][i, new.index(b)],
                               init.state["crf.crf.transitions"][k, old.index(b)]), (a, b)
    date = new.index("B-DATE")
    assert not torch.equal(state["emission.weight"][date], torch.zeros_like(
        state["emission.weight"][date]))  # freshly drawn, not left at zero
    trans, start, end = bioes_transition_masks(new.tokens)
    assert torch.equal(model.crf.allowed_transitions, trans)
    assert torch.equal(model.crf.allowed_start, start) and torch.equal(model.crf.allowed_end, end)
    assert not model.crf.allowed_transitions[new.index("B-DATE"), new.index("E-PER")]
    assert model.crf.allowed_transitions[new.index("B-DATE"), new.index("I-DATE")]
    types = ["O", *sorted({t[2:] for t in new if t != "O"})]
    assert model.label_to_type.tolist() == [types.index("O" if t == "O" else t[2:])
                                            for t in new]
    assert model.emission.out_features == len(new) == model.crf.num_labels
    assert model.document_graph.uncertainty.lin.out_features == len(new)


def test_the_first_forward_is_the_loaded_model_s_on_old_type_data(model_dir, sample_splits):
    old_model, old_vocabs, config = load_model_dir(model_dir, overrides=None)
    init = load_init_model(model_dir)
    dev = sample_splits["dev"][:3]
    words = sample_splits["train"][0].tokens
    new_words = [words[0] + words[1], words[2] + words[3]]  # new words of known characters
    assert not set(new_words) & set(old_vocabs.words)
    extra = make_document("x", [([new_words[0], "visited", new_words[1], "."],
                                 ["B-DATE", "O", "B-LOC", "O"])])
    for train, new_type in ((sample_splits["train"], False),
                            ([*sample_splits["train"], extra], True)):
        vocabs, rows, growth = grow_vocabularies(init, {**sample_splits, "train": train},
                                                 "none")
        assert growth.added_types == (["DATE"] if new_type else [])
        model = initial_model(init, init.config.model, vocabs, rows).eval()
        batch = _batch(dev, vocabs, config)
        old_batch = _batch(dev, old_vocabs, config)
        assert growth.characters == 0 and (growth.words > 0) == new_type
        assert torch.equal(batch.word, old_batch.word)  # old ids kept
        with torch.no_grad():
            if not new_type:  # the same model: every output, the loss and the tags
                ours = model(batch, mc_seed=0)
                theirs = old_model(batch, mc_seed=0)
                assert torch.equal(ours.emissions, theirs.emissions)
                assert torch.equal(ours.loss, theirs.loss)
                assert torch.equal(model.predict(batch), old_model.predict(batch))
            else:  # more labels: the old labels' scores, with the graph unpruned
                ours = model(batch, compute_loss=False, prune=False).emissions
                theirs = old_model(batch, compute_loss=False, prune=False).emissions
                columns = torch.tensor([vocabs.labels.index(t) for t in old_vocabs.labels])
                assert torch.equal(ours[:, columns], theirs)


def test_an_added_language_model_starts_unread_and_learns(model_dir, sample_splits):
    old_model, _, config = load_model_dir(model_dir, overrides=None)
    init = load_init_model(model_dir)
    assert init.config.model.lm_dim == 0
    vocabs, rows, _ = grow_vocabularies(init, sample_splits, "none")
    model = initial_model(init, replace(init.config.model, lm_dim=8), vocabs, rows).eval()
    for key in LM_COLUMNS:
        weight, old = model.state_dict()[key], init.state[key]
        assert weight.shape == (old.size(0), old.size(1) + 8)
        assert torch.equal(weight[:, :-8], old) and not weight[:, -8:].any()
    batch = _batch(sample_splits["dev"][:3], vocabs, config)
    batch.lm = torch.randn(batch.num_nodes, 8, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ours, theirs = model(batch, mc_seed=0), old_model(batch, mc_seed=0)
    assert torch.equal(ours.emissions, theirs.emissions) and torch.equal(ours.loss, theirs.loss)
    assert torch.equal(model.predict(batch), old_model.predict(batch))
    model.train()
    model(batch, mc_seed=0).loss.backward()
    assert model.context_encoder.lstm.weight_ih_l0.grad[:, -8:].abs().sum() > 0
    with pytest.raises(InitFromError, match="hidden"):  # any other change stays refused
        initial_model(init, replace(init.config.model, lm_dim=8, hidden=7), vocabs, rows)


def test_new_words_and_characters_start_as_the_model_read_them(model_dir, sample_splits):
    """Words without a vector and unseen characters: the run's first scores are the loaded
    model's on a document full of them."""
    from docgraph.tagging.inference import predict_graphs

    old_model, old_vocabs, config = load_model_dir(model_dir)
    init = load_init_model(model_dir)
    odd = make_document("odd", [(["Ωmega", "visited", "Žilina", "with", "Kestrelßon", "."],
                                 ["B-PER", "O", "B-LOC", "O", "B-ORG", "O"])])
    vocabs, rows, growth = grow_vocabularies(
        init, {**sample_splits, "train": [*sample_splits["train"], odd]}, "none")
    assert growth.characters >= 3 and growth.words >= 3
    model = initial_model(init, init.config.model, vocabs, rows).eval()
    # the ids differ (and so the document's Monte-Carlo masks): every score, unpruned
    with torch.no_grad():
        ours = model(_batch([odd], vocabs, config), compute_loss=False, prune=False)
        theirs = old_model(_batch([odd], old_vocabs, config), compute_loss=False, prune=False)
    assert torch.equal(ours.emissions, theirs.emissions)
    dev = sample_splits["dev"][:2]  # the same ids: the same tags
    ours_tags = predict_graphs(model, _batch_graphs(dev, vocabs, config), vocabs, 2000)
    assert ours_tags == predict_graphs(old_model, _batch_graphs(dev, old_vocabs, config),
                                       old_vocabs, 2000)


def _batch_graphs(documents, vocabs, config):
    return documents_to_graphs(documents, vocabs, config.graph_config())


def test_label_map_and_architecture_checks(model_dir, sample_vocabs):
    old = Vocab(["O", "B-PER", "I-PER", "E-PER", "S-PER"])
    new = Vocab(["O", "B-DATE", "I-DATE", "E-DATE", "S-DATE", "B-PER", "I-PER", "E-PER",
                 "S-PER"])
    new_ids, old_ids = label_map(old, new)
    assert new_ids.tolist() == [0, 5, 6, 7, 8] and old_ids.tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(InitFromError, match="lacks the model's labels"):
        label_map(new, old)
    init = load_init_model(model_dir)
    with pytest.raises(InitFromError, match=r"\[model\] hidden = 32 \(the model's: 16\)"):
        initial_model(init, replace(init.config.model, hidden=32), init.vocabs,
                      torch.zeros(0, init.config.model.word_dim))


def _column_corpus(root, splits, kind="DATE"):
    root.mkdir()
    for name, docs in splits.items():
        write_conll(root / f"{name}.txt", [with_type(d, kind) for d in docs])
    return root


@pytest.mark.slow
def test_train_init_from_adds_a_type_records_it_and_resumes(model_dir, trained_run,
                                                            sample_splits, tmp_path):
    corpus = _column_corpus(tmp_path / "corpus", sample_splits)
    out = tmp_path / "run"
    common = ["--dataset", "column", "--data-dir", corpus, *TINY_FLAGS]
    done = run_script("train", *common, "--init-from", model_dir, "--output-dir", out,
                      "--epochs", "1", "--processes", "1")
    assert done.returncode == 0, done.stderr
    log = (out / "train.log").read_text()
    assert "entity type DATE of the data is not among the model's" in log
    assert "its types MISC are not annotated in the training documents: kept as silver " \
        "labels" in log
    metrics = json.loads((out / "metrics.json").read_text())
    record = metrics["init_from"]
    assert record["added_types"] == ["DATE"] and record["directory"] == str(model_dir)
    assert metrics["config"]["init_from"] == str(model_dir)
    config = json.loads((out / "config.json").read_text())
    assert config["init_from"] == str(model_dir)
    assert "S-DATE" in json.loads((out / "vocab.json").read_text())["labels"]["tokens"]
    kept = run_script("train", *common, "--init-from", model_dir, "--output-dir",
                      tmp_path / "kept", "--no-new-types")
    assert kept.returncode == 2 and len(kept.stderr.strip().splitlines()) == 1
    assert kept.stderr.startswith(f"error: {corpus / 'train.txt'}:")
    assert "of type DATE" in kept.stderr and not (tmp_path / "kept").exists()
    resumed = run_script("train", "--resume", out, "--epochs", "2", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["epochs"] == 2 and metrics["init_from"]["start_dev_f1"] == \
        record["start_dev_f1"]


@pytest.mark.slow
def test_the_starting_model_s_dev_f1_is_the_model_s_own(model_dir, trained_run, tmp_path):
    from docgraph.training.experiment import run_experiment
    from tests.conftest import tiny_config

    _, trained = trained_run
    config = replace(tiny_config(tmp_path / "run", epochs=1), init_from=str(model_dir))
    metrics = run_experiment(config)
    assert metrics["init_from"]["start_dev_f1"] == trained["dev"]["f1"]
    assert metrics["init_from"]["added_words"] == 0 and metrics["init_from"]["added_types"] == []


@pytest.mark.slow
def test_a_run_adds_a_language_model_and_starts_from_the_model_s_dev_f1(model_dir, trained_run,
                                                                        tiny_lm, tmp_path):
    import shutil

    from docgraph.cli.arguments import check_arguments, given_settings, train_parser
    from docgraph.training.experiment import run_experiment

    lm = tmp_path / "lm"
    shutil.copytree(tiny_lm, lm)
    args = train_parser().parse_args([
        "--init-from", str(model_dir), "--lm", str(lm), "--lm-pack", "--embeddings", "none",
        "--epochs", "1", "--processes", "1", "--threads", "1", "--device", "cpu", "--quiet",
        "--output-dir", str(tmp_path / "run")])
    config = check_arguments(args)
    assert "lm" in given_settings(args) and config.lm == str(lm) and config.lm_pack
    config = replace(config, lm_cache_dir=str(tmp_path / "cache"))
    metrics = run_experiment(config)
    _, trained = trained_run
    assert metrics["init_from"]["start_dev_f1"] == trained["dev"]["f1"]  # unread at first
    assert metrics["config"]["model"]["lm_dim"] == 16
    assert (tmp_path / "run" / "lm.json").is_file()
    model, _, saved = load_model_dir(tmp_path / "run", overrides=None)
    old_width = load_init_model(model_dir).state[LM_COLUMNS[0]].size(1)
    assert saved.model.lm_dim == 16
    assert model.context_encoder.lstm.weight_ih_l0.size(1) == old_width + 16


def test_a_missing_model_is_one_line_naming_the_argument(tmp_path):
    done = run_script("train", "--init-from", tmp_path / "nowhere", "--output-dir",
                      tmp_path / "run", "--quiet")
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: --init-from {tmp_path / 'nowhere'}: neither a "
                                  "model directory nor a shipped model")
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


def test_keeping_the_model_s_types_names_the_file_line_and_span(model_dir, sample_splits,
                                                                tmp_path):
    from docgraph.training.init_from import check_types

    init = load_init_model(model_dir)
    corpus = _column_corpus(tmp_path / "corpus", sample_splits)
    splits = {name: [with_type(d) for d in docs] for name, docs in sample_splits.items()}
    check_types(init, sample_splits, {})  # the model's own types: nothing to say
    with pytest.raises(InitFromError) as err:
        check_types(init, splits, {name: corpus / f"{name}.txt" for name in splits})
    message = str(err.value)
    line = int(message.split(":")[1])
    fields = (corpus / "train.txt").read_text().split("\n")[line - 1].split()
    assert fields[-1] == "B-DATE"
    assert message.startswith(f"{corpus / 'train.txt'}:{line}: entity '{fields[0]}")
    assert "of type DATE (document 'train-" in message and "--no-new-types" in message
    spans = tmp_path / "train.jsonl"
    spans.write_text('{"text": "x", "spans": []}\n{"text": "May", "spans": [[0, 3, "DATE"]]}\n')
    with pytest.raises(InitFromError, match=rf"^{spans}:2: entity"):
        check_types(init, splits, {"train": spans})


def test_tuning_the_output_trains_the_emission_layer_and_the_crf_only(model_dir, sample_splits):
    from docgraph.batching.loader import collate
    from docgraph.config.train import TrainConfig
    from docgraph.training.init_from import OUTPUT_PARTS, train_only_output
    from docgraph.training.loop import clip_groups, make_optimizer, training_step

    init = load_init_model(model_dir)
    vocabs, rows, _ = grow_vocabularies(init, sample_splits, "none")
    model = initial_model(init, init.config.model, vocabs, rows)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    trained = train_only_output(model)
    assert trained == sum(p.numel() for n, p in model.named_parameters()
                          if n.split(".")[0] in OUTPUT_PARTS) > 0
    optimizer = make_optimizer(model, TrainConfig(optimizer="adam", lr=0.01))
    graphs = documents_to_graphs(sample_splits["train"][:4], vocabs, init.config.graph_config())
    for step in range(2):
        batch = collate(graphs, [2 * step, 2 * step + 1], torch.device("cpu"),
                        model.plan_settings())
        training_step(model, optimizer, batch, clip_groups(model), 5.0)
    moved = {k for k, v in model.state_dict().items() if not torch.equal(v, start[k])}
    assert moved and {k.split(".")[0] for k in moved} <= set(OUTPUT_PARTS)
    assert "emission.weight" in moved


def test_tune_output_needs_a_model_to_start_from(tmp_path):
    done = run_script("train", "--dataset", "sample", "--tune", "output", "--output-dir",
                      tmp_path / "run", timeout=120)
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    assert done.stderr.strip().splitlines() == [
        "error: --tune output: tunes part of the model a run starts from: give --init-from MODEL"]
