"""Tests of docgraph.data.vocab."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from docgraph.data.document import make_document
from docgraph.data.vocab import (
    PAD,
    UNK,
    Vocab,
    VocabFileError,
    Vocabularies,
    label_types,
    lookup_keys,
    normalise_digits,
)


def docs():
    return [
        make_document(
            "d0",
            [(["EU", "rejects", "German", "call"], ["B-ORG", "O", "B-MISC", "O"])],
        ),
        make_document("d1", [(["Peter", "Blackburn", "the"], ["B-PER", "I-PER", "O"])]),
    ]


def test_build_order_specials_and_min_freq():
    v = Vocab.build(Counter({"b": 2, "a": 2, "c": 5, "rare": 1}), min_freq=2)
    assert v.tokens == [PAD, UNK, "c", "a", "b"]
    assert v.pad_index == 0 and v.unk_index == 1
    assert len(v) == 5
    assert Vocab.build(["x", "y", "x"]).tokens == [PAD, UNK, "x", "y"]


def test_index_lookup_unk_and_keyerror():
    v = Vocab.build(["a", "b"])
    assert v.index("a") == 2
    assert v.index("zzz") == v.unk_index
    assert v.indices(["b", "q"]) == [3, 1]
    assert v.lookup([2, 3]) == ["a", "b"]
    with pytest.raises(IndexError):
        v.lookup([10])
    plain = Vocab.build(["a"], specials=())
    assert plain.pad_index is None and plain.unk_index is None
    with pytest.raises(KeyError):
        plain.index("b")
    with pytest.raises(KeyError):
        plain.indices(["a", "b"])
    with pytest.raises(ValueError, match="duplicate"):
        Vocab(["a", "a"])


def test_save_load_round_trip(tmp_path):
    v = Vocab.build(["é", "a b", "x"])
    path = tmp_path / "sub" / "v.json"
    v.save(path)
    assert Vocab.load(path) == v
    assert Vocab.from_dict(v.to_dict()) == v
    assert not [p for p in path.parent.iterdir() if p.name != "v.json"]  # no temp files left


@pytest.mark.parametrize(
    "content",
    ["{not json", "[1, 2]", json.dumps({"format": "docgraph-vocab", "tokens": [1]}), "\xff"],
)
def test_corrupt_file(tmp_path, content):
    path = tmp_path / "v.json"
    path.write_bytes(content.encode("latin-1") if content == "\xff" else content.encode())
    with pytest.raises(VocabFileError, match=r"v\.json.*corrupt"):
        Vocab.load(path)


def test_vocabularies_build_and_io(tmp_path):
    v = Vocabularies.build(docs(), extra_words=["Berlin", "EU"])
    assert v.labels.tokens == ["O", "S-MISC", "S-ORG", "B-PER", "E-PER"]
    assert v.labels.pad_index is None and v.labels.unk_index is None
    assert "Berlin" in v.words and v.words.tokens[-1] == "Berlin"
    assert "B" in v.chars and "é" not in v.chars
    assert v.chars.pad_index == 0 and v.words.pad_index == 0
    v.save(tmp_path)
    assert (tmp_path / "vocab.json").is_file()
    assert Vocabularies.load(tmp_path) == v
    (tmp_path / "vocab.json").write_text('{"format": "docgraph-vocabularies", "words": {}}')
    with pytest.raises(VocabFileError, match="corrupt"):
        Vocabularies.load(tmp_path)


def test_label_types():
    labels = Vocab(["O", "B-LOC", "S-LOC", "B-PER", "E-PER"])
    names, to_type = label_types(labels)
    assert names == ["O", "LOC", "PER"]
    assert to_type == [0, 1, 1, 2, 2]


def test_lookup_keys():
    assert normalise_digits("1996-08-22") == "0000-00-00"
    assert lookup_keys("Year1996") == ("Year1996", "year1996", "year0000")
