"""Packed model directories (docgraph/persistence/packing.py): pretrained rows left out,
16-bit tensors, SHA-256 of every file checked at load, the same bytes for the same model."""

from __future__ import annotations

import json

import pytest
import torch

from docgraph.persistence.checkpoint import CheckpointError, checkpoint_bytes, save_checkpoint
from docgraph.persistence.manifest import file_sha256, verify_manifest
from docgraph.persistence.packing import pack_model_dir, pretrained_rows
from docgraph.runtime.integrity import read_json_file, write_sealed_json


def _tags(tagger, documents):
    return [t for doc in tagger.evaluate(documents).predictions for s in doc for t in s]


def test_pretrained_rows_left_out_and_tags_unchanged(packed, sample_splits, tiny_vectors):
    from docgraph.data.embeddings import read_vectors_text
    from docgraph.data.vocab import lookup_keys
    from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
    from docgraph.tagging.tagger import Tagger

    run_dir, summary = packed
    _, vocabs, _ = load_model_dir(run_dir, overrides=ModelOverrides(open_vocabulary=False))
    words, _ = read_vectors_text(tiny_vectors)
    table = set(words)
    with_vector = [w for w in vocabs.words.tokens[2:]
                   if any(k in table for k in lookup_keys(w))]
    # frozen embeddings: every word with a vector still has it, and is left out
    assert summary.dropped_words == len(with_vector) > 0
    assert summary.words == len(vocabs.words) - len(with_vector)
    original = Tagger.load(run_dir, open_vocabulary=False)
    small = Tagger.load(summary.directory)
    assert len(small.vocabs.words) == summary.words
    test = sample_splits["test"]
    assert _tags(small, test) == _tags(original, test)


def test_trained_rows_are_kept(vectors_run):
    from docgraph.data.embeddings import read_vectors_text
    from docgraph.persistence.model_dir import ModelOverrides, load_model_dir

    model, vocabs, config = load_model_dir(vectors_run[0],
                                           overrides=ModelOverrides(open_vocabulary=False))
    words, matrix = read_vectors_text(config.embeddings)
    weight = model.word_embedding.weight.detach().clone()
    dropped = pretrained_rows(vocabs.words, weight, words, matrix)
    changed = dropped[0]
    weight[changed] += 1e-6  # trained: no longer its pretrained vector
    assert pretrained_rows(vocabs.words, weight, words, matrix) == dropped[1:]
    assert vocabs.words.unk_index not in dropped and vocabs.words.pad_index not in dropped


def test_sixteen_bit_storage(vectors_run, tmp_path, sample_splits):
    from docgraph.tagging.tagger import Tagger

    summary = pack_model_dir(vectors_run[0], tmp_path / "half")
    state = torch.load(summary.directory / "model.pt", weights_only=True)["model"]
    floats = {k: v.dtype for k, v in state.items() if v.is_floating_point()}
    assert floats and set(floats.values()) == {torch.float16}
    assert state["label_to_type"].dtype == torch.long
    kept = pack_model_dir(vectors_run[0], tmp_path / "crf32", keep_float32=["crf.*"])
    state = torch.load(kept.directory / "model.pt", weights_only=True)["model"]
    assert {v.dtype for k, v in state.items() if k.startswith("crf.") and v.is_floating_point()
            } == {torch.float32}
    assert kept.bytes > summary.bytes
    tagger = Tagger.load(summary.directory)
    assert next(tagger.model.parameters()).dtype == torch.float32  # loaded as float32
    assert len(_tags(tagger, sample_splits["dev"])) > 0


def test_eight_bit_word_rows(vectors_run, tmp_path, sample_splits):
    from docgraph.persistence.quantize import SCALE_SUFFIX
    from docgraph.tagging.tagger import Tagger

    half = pack_model_dir(vectors_run[0], tmp_path / "half")
    small = pack_model_dir(vectors_run[0], tmp_path / "int8", int8_embeddings=True)
    state = torch.load(small.directory / "model.pt", weights_only=True)["model"]
    assert state["word_embedding.weight"].dtype == torch.int8
    assert state["word_embedding.weight" + SCALE_SUFFIX].shape == (small.words, 1)
    assert small.bytes < half.bytes
    assert verify_manifest(small.directory)["int8_rows"] == ["word_embedding.weight"]
    tagger, reference = Tagger.load(small.directory), Tagger.load(half.directory)
    rows = tagger.model.word_embedding.weight[:small.words]
    expected = reference.model.word_embedding.weight[:small.words]
    assert rows.dtype == torch.float32
    step = expected.abs().amax(dim=1, keepdim=True) / 127
    assert bool(((rows - expected).abs() <= step / 2 + 1e-3).all())
    assert len(_tags(tagger, sample_splits["dev"])) > 0


def test_packing_twice_gives_the_same_bytes(vectors_run, tmp_path):
    first = pack_model_dir(vectors_run[0], tmp_path / "a", dtype="float16")
    second = pack_model_dir(vectors_run[0], tmp_path / "b", dtype="float16")
    for name in ("model.pt", "vocab.json", "config.json", "manifest.json"):
        assert file_sha256(first.directory / name) == file_sha256(second.directory / name)


def test_checkpoint_bytes_do_not_depend_on_the_file_name(tmp_path):
    state = {"model": {"w": torch.arange(6.0).reshape(2, 3)}, "epoch": 3}
    save_checkpoint(tmp_path / "one.pt", state)
    save_checkpoint(tmp_path / "two.pt", state)
    assert (tmp_path / "one.pt").read_bytes() == (tmp_path / "two.pt").read_bytes()
    assert (tmp_path / "one.pt").read_bytes() == checkpoint_bytes(state)


def test_packed_config_forgets_the_corpus_directory(packed):
    _, summary = packed
    assert json.loads((summary.directory / "config.json").read_text())["data_dir"] is None


def test_packed_model_needs_its_vectors_and_open_vocabulary(packed, tmp_path):
    import shutil

    from docgraph.tagging.tagger import Tagger

    with pytest.raises(ValueError, match="needs its open vocabulary"):
        Tagger.load(packed[1].directory, open_vocabulary=False)
    copy = tmp_path / "copy"
    shutil.copytree(packed[1].directory, copy)
    config = read_json_file(copy / "config.json")
    config["embeddings"] = str(tmp_path / "gone.txt")
    write_sealed_json(copy / "config.json", config)
    manifest = read_json_file(copy / "manifest.json")
    manifest["files"]["config.json"] = file_sha256(copy / "config.json")
    write_sealed_json(copy / "manifest.json", manifest)
    with pytest.raises(CheckpointError, match="gone.txt"):
        Tagger.load(copy)


def test_packing_refuses_a_packed_model_and_a_bad_dtype(packed, tmp_path):
    with pytest.raises(CheckpointError, match="already packed"):
        pack_model_dir(packed[1].directory, tmp_path / "again")
    with pytest.raises(ValueError, match="dtype"):
        pack_model_dir(packed[0], tmp_path / "x", dtype="int8")
    assert not (tmp_path / "x").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no staging directory left


def test_a_saved_packed_model_stays_packed_and_checked(packed, tmp_path, sample_splits):
    from docgraph.tagging.tagger import Tagger

    directory = packed[1].directory
    tagger = Tagger.load(directory, threshold=0.5)
    saved = tagger.save(tmp_path / "saved")
    assert verify_manifest(saved) is not None  # the new config.json's SHA-256 listed
    assert json.loads((saved / "config.json").read_text())["model"]["threshold"] == 0.5
    assert (saved / "model.pt").read_bytes() == (directory / "model.pt").read_bytes()
    assert _tags(Tagger.load(saved), sample_splits["test"]) == \
        _tags(tagger, sample_splits["test"])


def test_the_packed_directory_is_readable_by_other_users(packed):
    """Class: the packed directory's permissions (as a plain mkdir would make it, not
    mkdtemp's 0700)."""
    import os

    umask = os.umask(0)
    os.umask(umask)
    mode = packed[1].directory.stat().st_mode & 0o777
    assert mode == 0o777 & ~umask
    assert mode & 0o055  # others and the group may read and enter it under a usual umask
