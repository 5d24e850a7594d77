"""Tests of :mod:`docgraph.data.lm_fingerprints`: the hashes of a language model's files and
of a corpus's words and boundaries."""

from __future__ import annotations

import hashlib

import pytest
from conftest import plain_document

from docgraph.data.document import make_document
from docgraph.data.lm_fingerprints import LanguageModelError, corpus_hash, model_dir_hash


def test_corpus_hash_sees_words_and_boundaries_not_tags():
    a = plain_document("a", "the cat sat", "on the mat")
    relabelled = make_document("b", [(s.tokens, ["B-X"] * len(s)) for s in a.sentences])
    assert corpus_hash([a]) == corpus_hash([relabelled])
    assert corpus_hash([a]) != corpus_hash([plain_document("a", "the cat sat on the mat")])
    assert corpus_hash([a]) != corpus_hash([plain_document("a", "the cat sat"),
                                            plain_document("b", "on the mat")])
    assert corpus_hash([a]) != corpus_hash([plain_document("a", "the dog sat", "on the mat")])


def test_corpus_hash_sees_the_word_boundaries_and_the_order():
    joined = plain_document("a", "the catsat")
    assert corpus_hash([plain_document("a", "the cat sat")]) != corpus_hash([joined])
    one, two = plain_document("a", "x"), plain_document("b", "y")
    assert corpus_hash([one, two]) != corpus_hash([two, one])
    assert corpus_hash([]) == hashlib.sha256().hexdigest()


def test_corpus_hash_by_hand():
    doc = plain_document("a", "the cat", "sat")
    expected = hashlib.sha256(b"the\x1fcat\x1e" + b"sat\x1e" + b"\x1d")
    assert corpus_hash([doc]) == expected.hexdigest()


def test_model_dir_hash_sees_names_and_contents_of_every_file(tmp_path):
    lm = tmp_path / "lm"
    (lm / "sub").mkdir(parents=True)
    (lm / "config.json").write_text("{}")
    (lm / "sub" / "vocab.txt").write_text("a\nb\n")
    first = model_dir_hash(lm)
    assert first == model_dir_hash(str(lm)) and len(first) == 64
    expected = hashlib.sha256(b"config.json\0{}\0sub/vocab.txt\0a\nb\n\0").hexdigest()
    assert first == expected
    (lm / "sub" / "vocab.txt").write_text("a\nc\n")
    changed = model_dir_hash(lm)
    assert changed != first
    (lm / "sub" / "vocab.txt").rename(lm / "vocab.txt")  # same bytes, another name
    assert model_dir_hash(lm) != changed


def test_model_dir_hash_of_a_copy_elsewhere_is_the_same(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "weights.bin").write_bytes(bytes(range(256)) * 5000)
    assert model_dir_hash(tmp_path / "a") == model_dir_hash(tmp_path / "b")


def test_model_dir_hash_of_a_missing_directory(tmp_path):
    with pytest.raises(LanguageModelError) as info:
        model_dir_hash(tmp_path / "nope")
    assert str(info.value) == f"{tmp_path / 'nope'}: language-model directory not found"
    (tmp_path / "file").write_text("")
    with pytest.raises(LanguageModelError, match="language-model directory not found"):
        model_dir_hash(tmp_path / "file")
    assert issubclass(LanguageModelError, ValueError)
