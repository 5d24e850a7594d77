"""The 4-type corpus of CoNLL-2003 and OntoNotes mapped (docgraph_dev/mixed_corpus.py)."""

from __future__ import annotations

from docgraph.data.conll import read_conll
from docgraph.data.document import make_document
from docgraph_dev.mixed_corpus import main, mixed_splits


def conll_doc(doc_id: str, words: list[str], tags: list[str]):
    return make_document(doc_id, [(words, tags)], source_scheme="iob1")


CONLL = {
    "train": [conll_doc("train-0", ["EU", "rejects", "German", "call"],
                        ["B-ORG", "O", "B-MISC", "O"])],
    "dev": [conll_doc("dev-0", ["Peter", "Blackburn"], ["B-PER", "I-PER"])],
    "test": [conll_doc("test-0", ["Japan", "won"], ["B-LOC", "O"])],
}
ONTONOTES = {
    "train": [make_document("nw/wsj/00/wsj_0001/part-000",
                            [(["Pierre", "Vinken", ",", "61"],
                              ["B-PERSON", "I-PERSON", "O", "B-CARDINAL"])])],
    "dev": [make_document("bc/cnn/00/cnn_0001/part-000",
                          [(["The", "French", "in", "Paris"],
                            ["O", "B-NORP", "O", "B-GPE"])])],
    "test": [make_document("wb/a2e/00/a2e_0001/part-000", [(["Hi"], ["O"])])],
}


def test_splits_by_hand():
    splits = mixed_splits(CONLL, ONTONOTES)
    assert [d.doc_id for d in splits["train"]] == ["train-0", "nw/wsj/00/wsj_0001/part-000"]
    assert splits["train"][1].tags == ["B-PER", "I-PER", "O", "O"]
    dev = splits["dev"]
    assert [d.tokens for d in dev] == [["Peter", "Blackburn"], ["peter", "blackburn"],
                                       ["The", "French", "in", "Paris"]]
    assert dev[1].tags == ["B-PER", "I-PER"]
    assert dev[2].tags == ["O", "B-MISC", "O", "B-LOC"]
    assert splits["test"] == CONLL["test"]


def test_written_corpus_reads_back(tmp_path, monkeypatch):
    import docgraph.data.registry as registry

    corpora = {"conll03": CONLL, "ontonotes": ONTONOTES}
    monkeypatch.setattr(registry, "load_dataset", lambda name, path: corpora[name])
    assert main(["--data-dir", str(tmp_path), "--out", str(tmp_path / "mixed")]) == 0
    train = read_conll(tmp_path / "mixed" / "train.txt")
    assert [d.tags for d in train] == [["B-ORG", "O", "B-MISC", "O"], ["B-PER", "I-PER", "O", "O"]]
    assert len(read_conll(tmp_path / "mixed" / "dev.txt")) == 3
