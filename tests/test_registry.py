"""Tests of :mod:`docgraph.data.registry`: the named data sets, where their files are looked
for and the errors that say what was expected."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from docgraph.data import corpus_statistics
from docgraph.data.errors import DataNotFoundError
from docgraph.data.registry import (
    DATASETS,
    ENV_VAR,
    dataset_files,
    default_data_dir,
    get_spec,
    load_dataset,
    resolve_data_dir,
    sample_data_dir,
)

SPLITS = ("train", "dev", "test")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _column_corpus(root):
    folder = root / "column"
    folder.mkdir(parents=True)
    for split in SPLITS:
        shutil.copy(sample_data_dir() / f"{split}.txt", folder / f"{split}.txt")
    return folder


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)


def test_sample_corpus():
    data = load_dataset("sample")
    assert set(data) == {"train", "dev", "test"}
    assert default_data_dir("sample") == sample_data_dir()
    stats = {k: corpus_statistics(v) for k, v in data.items()}
    assert 30 <= stats["train"]["documents"] <= 60
    assert stats["train"]["tokens"] >= 6000
    assert set(stats["train"]["entities"]) == {"PER", "LOC", "ORG", "MISC"}
    for docs in data.values():
        assert all(d.source_scheme == "iob2" for d in docs)
        assert all(4 <= len(d) <= 12 for d in docs)
    header = (sample_data_dir() / "train.txt").read_text().splitlines()[0]
    assert header == "-DOCSTART- -X- -X- O"
    # Ambiguity resolved by the document: one word both ORG and LOC in one document.
    ambiguous = 0
    for doc in data["train"]:
        types: dict[str, set] = {}
        for tok, tag in zip(doc.tokens, doc.tags):
            if tag.startswith("B-"):
                types.setdefault(tok, set()).add(tag[2:])
        ambiguous += any(len(t) > 1 for t in types.values())
    assert ambiguous >= 10


def test_registry_errors(tmp_path, monkeypatch):
    monkeypatch.delenv("DOCGRAPH_DATA_DIR", raising=False)
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("nope")
    with pytest.raises(ValueError, match="DOCGRAPH_DATA_DIR"):
        load_dataset("conll03")
    with pytest.raises(ValueError, match=r"train\.txt"):
        load_dataset("conll03", tmp_path)
    with pytest.raises(ValueError, match="skeleton2conll"):
        load_dataset("ontonotes", tmp_path)
    with pytest.raises(ValueError, match="unknown split"):
        load_dataset("sample", splits=("training",))
    monkeypatch.setenv("DOCGRAPH_DATA_DIR", str(tmp_path))
    assert default_data_dir("conll03") == tmp_path / "conll2003"
    assert default_data_dir("ontonotes") == tmp_path / "ontonotes"


def test_column_dataset(tmp_path):
    for split in ("train", "dev", "test"):
        write(tmp_path, f"{split}.bio", "a B-X\nb I-X\n\nc O\n")
    data = load_dataset("column", tmp_path, splits=("train", "test"))
    assert set(data) == {"train", "test"}
    assert data["test"][0].doc_id == "test-0"


def test_data_dir_is_the_corpus_root_or_the_dataset_folder(tmp_path):
    folder = _column_corpus(tmp_path / "corpora")
    assert resolve_data_dir("column", folder) == folder
    assert resolve_data_dir("column", tmp_path / "corpora") == folder
    assert dataset_files("column", tmp_path / "corpora") == {
        s: folder / f"{s}.txt" for s in ("train", "dev", "test")}
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataNotFoundError) as info:
        dataset_files("conll03", empty)
    message = str(info.value)
    assert f"no train data in {empty}: expected one of train.txt" in message
    assert "the conll2003/ folder itself or the folder holding it" in message
    assert f"there is no {empty / 'conll2003'}" in message
    (empty / "conll2003").mkdir()  # a root whose dataset folder lacks the files: both named
    with pytest.raises(DataNotFoundError, match=f"no train data in {empty}: .*; no train data "
                                                f"in {empty / 'conll2003'}: "):
        dataset_files("conll03", empty)


def test_get_spec_names_every_dataset_of_the_registry():
    assert get_spec("conll03") is DATASETS["conll03"]
    assert {name: spec.name for name, spec in DATASETS.items()} == {
        "conll03": "conll03", "ontonotes": "ontonotes", "sample": "sample", "column": "column"}
    assert [name for name, spec in DATASETS.items() if spec.bundled] == ["sample"]
    with pytest.raises(ValueError) as info:
        get_spec("imdb")
    assert str(info.value) == ("unknown dataset 'imdb': expected one of column, conll03, "
                               "ontonotes, sample")


def test_default_data_dir_comes_from_the_environment(tmp_path, monkeypatch, no_env):
    assert default_data_dir("conll03") is None
    assert default_data_dir("column") is None
    assert default_data_dir("sample") == sample_data_dir()
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert default_data_dir("column") == tmp_path / "column"
    assert default_data_dir("sample") == sample_data_dir()  # bundled: never the environment
    assert sorted(p.name for p in sample_data_dir().iterdir()) == ["dev.txt", "test.txt",
                                                                   "train.txt"]


def test_without_a_directory_the_message_says_how_to_give_one(no_env):
    with pytest.raises(ValueError) as info:
        resolve_data_dir("ontonotes")
    assert str(info.value).startswith(
        f"no data directory for 'ontonotes': pass --data-dir DIR (data_dir= from Python) or set "
        f"{ENV_VAR} (expected {ENV_VAR}/ontonotes). OntoNotes 5.0 English")


def test_a_directory_that_does_not_exist(tmp_path):
    with pytest.raises(DataNotFoundError) as info:
        resolve_data_dir("conll03", tmp_path / "gone")
    assert str(info.value) == f"data directory {tmp_path / 'gone'} for 'conll03' does not exist"


def test_the_sample_ignores_a_data_dir(tmp_path):
    assert resolve_data_dir("sample", tmp_path) == sample_data_dir()
    assert dataset_files("sample", tmp_path, ("dev",)) == {"dev": sample_data_dir() / "dev.txt"}


def test_dataset_files_checks_the_files_without_reading_them(tmp_path):
    for split in SPLITS:
        write(tmp_path, f"{split}.txt", "\x00 not a corpus at all\n")
    assert dataset_files("conll03", tmp_path) == {s: tmp_path / f"{s}.txt" for s in SPLITS}
    assert dataset_files("conll03", tmp_path, ()) == {}
    with pytest.raises(ValueError) as info:
        dataset_files("conll03", tmp_path, ("train", "valid"))
    assert str(info.value) == "unknown split 'valid': expected train, dev or test"


def test_ontonotes_files_are_found_by_any_of_their_names(tmp_path):
    write(tmp_path, "train.gold_conll", "")
    write(tmp_path, "train.gold_conll.gz", "")  # the compressed file comes first
    (tmp_path / "development").mkdir()  # a folder of trees
    write(tmp_path, "conll-2012-test", "")
    assert dataset_files("ontonotes", tmp_path) == {
        "train": tmp_path / "train.gold_conll.gz", "dev": tmp_path / "development",
        "test": tmp_path / "conll-2012-test"}


def test_a_column_split_must_be_one_file(tmp_path):
    write(tmp_path, "train.bio", "a O\n")
    write(tmp_path, "train.iob", "a O\n")
    with pytest.raises(ValueError) as info:
        dataset_files("column", tmp_path, ("train",))
    assert str(info.value) == (f"several train files in {tmp_path} (train.bio, train.iob): "
                               "expected exactly one")
    with pytest.raises(DataNotFoundError) as info:
        dataset_files("column", tmp_path, ("dev",))
    assert str(info.value).startswith(f"no dev data in {tmp_path}: expected a CoNLL column "
                                      "file named dev{.bio,.bioes,.conll,")
    assert "(or span JSON lines, dev.jsonl, or a spaCy DocBin, dev.spacy)" in str(info.value)


def test_other_files_beside_a_column_split_are_left_alone(tmp_path):
    # a backup, an editor's copy, notes: not the corpus's files (they stopped a run before)
    write(tmp_path, "test.txt", "a O\n")
    for stray in ("test.txt.bak", "test.txt~", "test.md", "test.conll.orig"):
        write(tmp_path, stray, "b O\n")
    assert dataset_files("column", tmp_path, ("test",)) == {"test": tmp_path / "test.txt"}


def test_conll03_is_read_as_iob1_and_a_column_corpus_by_its_tags(tmp_path, caplog):
    conll = tmp_path / "conll2003"
    conll.mkdir()
    write(conll, "train.txt", "-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\n")
    with caplog.at_level(logging.INFO, logger="docgraph"):
        docs = load_dataset("conll03", tmp_path, splits=("train",))["train"]
    assert docs[0].tags == ["B-ORG", "O"] and docs[0].source_scheme == "iob1"
    assert f"read conll03 train from {conll / 'train.txt'}: 1 documents, 2 tokens" in caplog.text
    column = tmp_path / "column"
    column.mkdir()
    write(column, "train.bioes", "New B-LOC\nYork E-LOC\nis O\n")
    docs = load_dataset("column", column, splits=("train",))["train"]
    assert docs[0].tags == ["B-LOC", "I-LOC", "O"] and docs[0].source_scheme == "bioes"


def test_split_off_dev_is_seeded_and_keeps_the_order():
    from docgraph.data.document import make_document
    from docgraph.data.errors import DataDirError
    from docgraph.data.registry import split_off_dev

    docs = [make_document(f"d{i}", [(["w"], ["O"])]) for i in range(10)]
    train, dev = split_off_dev(docs, 0.3, seed=1)
    assert len(dev) == 3 and len(train) == 7
    assert sorted(d.doc_id for d in train + dev) == sorted(d.doc_id for d in docs)
    assert [d.doc_id for d in dev] == sorted((d.doc_id for d in dev), key=lambda x: int(x[1:]))
    again = split_off_dev(docs, 0.3, seed=1)
    assert [d.doc_id for d in again[1]] == [d.doc_id for d in dev]
    assert [d.doc_id for d in split_off_dev(docs, 0.3, seed=2)[1]] != [d.doc_id for d in dev]
    assert len(split_off_dev(docs[:2], 0.01, seed=0)[1]) == 1  # at least one held out
    assert len(split_off_dev(docs[:2], 0.9, seed=0)[0]) == 1   # at least one to train on
    with pytest.raises(DataDirError, match="at least two"):
        split_off_dev(docs[:1], 0.2, seed=0)


def test_dev_fraction_needs_no_dev_file(tmp_path):
    from docgraph.cli.arguments import check_arguments, train_parser
    from docgraph.config.fields import UsageError  # noqa: F401  (the checks' own error kinds)

    write(tmp_path, "train.txt", "a O\n\nb O\n")
    write(tmp_path, "test.txt", "c O\n")
    argv = ["--dataset", "column", "--data-dir", str(tmp_path), "--output-dir",
            str(tmp_path / "run")]
    with pytest.raises(DataNotFoundError, match="no dev data"):
        check_arguments(train_parser().parse_args(argv))
    config = check_arguments(train_parser().parse_args([*argv, "--dev-fraction", "0.2"]))
    assert config.dev_fraction == 0.2 and config.file_splits == ("train", "test")
