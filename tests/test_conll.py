"""CoNLL column reader/writer and the corpus statistics script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from docgraph.data import (
    CorpusFormatError,
    corpus_statistics,
    load_dataset,
    read_conll,
    write_conll,
)
from docgraph.data.conll import read_text

ROOT = Path(__file__).resolve().parents[1]

IOB1_FILE = """-DOCSTART- -X- O O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O
. . O O

the DT I-NP O
Atlanta NNP I-NP B-MISC
Games NNPS I-NP O


-DOCSTART- -X- O O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER
Anna NNP I-NP B-PER
"""

TEST_FORM = """-DOCSTART- -X- -X- O

SOCCER NN I-NP O
- : O O
JAPAN NNP I-NP I-LOC
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_iob1_file_with_quirks(tmp_path):
    docs = read_conll(write(tmp_path, "train.txt", IOB1_FILE))
    assert [d.doc_id for d in docs] == ["train-0", "train-1"]
    assert all(d.source_scheme == "iob1" for d in docs)
    assert [len(d) for d in docs] == [2, 1]
    assert docs[0].sentences[0].tags == ("B-ORG", "O", "B-MISC", "O", "O")
    assert docs[0].sentences[1].tags == ("O", "B-MISC", "O")
    assert docs[1].sentences[0].tokens == ("Peter", "Blackburn", "Anna")
    assert docs[1].sentences[0].tags == ("B-PER", "I-PER", "B-PER")
    assert docs[1].sentences[0].doc_id == "train-1"


def test_second_docstart_form(tmp_path):
    docs = read_conll(write(tmp_path, "test.txt", TEST_FORM))
    assert len(docs) == 1
    assert docs[0].tags == ["O", "O", "B-LOC"]


def test_bioes_and_explicit_scheme(tmp_path):
    text = "A B-X\nb I-X\nc E-X\nd S-Y\n\ne O\n"
    docs = read_conll(write(tmp_path, "f.txt", text))
    assert docs[0].source_scheme == "bioes"
    assert docs[0].tags == ["B-X", "I-X", "I-X", "B-Y", "O"]
    iob2 = read_conll(write(tmp_path, "g.txt", "a I-X\nb B-X\n"), scheme="iob2")
    assert iob2[0].source_scheme == "iob2" and iob2[0].tags == ["B-X", "B-X"]
    with pytest.raises(ValueError, match="scheme"):
        read_conll(tmp_path / "g.txt", scheme="bilou")


def test_no_docstart_and_doc_per_sentence(tmp_path):
    path = write(tmp_path, "plain.conll", "\n\nx B-A\ny O\n\n\n\nz B-B\n\nw O\n\n\n")
    docs = read_conll(path)
    assert len(docs) == 1 and len(docs[0]) == 3 and docs[0].doc_id == "plain-0"
    per_sentence = read_conll(path, doc_per_sentence=True)
    assert [d.doc_id for d in per_sentence] == ["plain-0", "plain-1", "plain-2"]
    assert [d.tokens for d in per_sentence] == [["x", "y"], ["z"], ["w"]]
    assert per_sentence[1].sentences[0].index == 0


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("a X B-A\nb X O\nc O\n", 3, "expected 3 columns"),
        ("-DOCSTART- -X- O O\n\na X Y O\nb X O\n", 4, "expected 4 columns"),
        ("a O\nb\n", 2, "one column"),
        ("a O\nb B-\n", 2, "invalid tag"),
        ("a O\n\nb X-PER\n", 3, "invalid tag"),
        ("", 1, "no tokens"),
        ("\n\n-DOCSTART- -X- O O\n\n", 1, "no tokens"),
    ],
)
def test_malformed(tmp_path, text, line, needle):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(CorpusFormatError, match=needle) as info:
        read_conll(path)
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert isinstance(info.value, ValueError)


def test_write_conll_round_trip(tmp_path):
    docs = read_conll(write(tmp_path, "train.txt", IOB1_FILE))
    pred = [[list(s.tags) for s in d.sentences] for d in docs]
    pred[0][0][0] = "O"
    out = tmp_path / "out" / "pred.txt"
    write_conll(out, docs, pred, scheme="iob1")
    lines = out.read_text().splitlines()
    assert lines[0] == "-DOCSTART- O O"
    assert lines[2] == "EU I-ORG O"
    assert "Anna B-PER B-PER" in lines
    assert not list(out.parent.glob("*.tmp"))
    back = read_conll(out, scheme="iob1")
    assert back[0].tags[:3] == ["O", "O", "B-MISC"]
    gold_only = tmp_path / "gold.txt"
    write_conll(gold_only, docs, None)
    again = read_conll(gold_only)
    assert [d.tags for d in again] == [d.tags for d in docs]
    assert [[s.tokens for s in d.sentences] for d in again] == [
        [s.tokens for s in d.sentences] for d in docs
    ]
    with pytest.raises(ValueError):
        write_conll(tmp_path / "x.txt", docs, pred[:1])


def run_stats(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "stats.py"), *args],
        capture_output=True, text=True, timeout=120,
        env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )


def test_stats_script_errors(tmp_path):
    for args in (["--dataset", "nope"], ["--dataset", "conll03", "--data-dir", str(tmp_path)],
                 ["--dataset", "sample", "--neighbours", "0"]):
        proc = run_stats(*args)
        assert proc.returncode == 2
        assert proc.stderr.strip().count("\n") == 0, proc.stderr
        assert "Traceback" not in proc.stderr


def test_stats_script_json():
    pytest.importorskip("docgraph.graph")
    proc = run_stats("--dataset", "sample", "--json", "--neighbours", "3")
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    assert set(stats) == {"train", "dev", "test"}
    train = stats["train"]
    assert train["documents"] == corpus_statistics(load_dataset("sample")["train"])["documents"]
    assert train["edges_sampled"] <= train["edges_all"]
    assert 0 < train["recurrent_tokens"] <= train["tokens"]


# ---------------------------------------------------------------- inputs that must not trip it
def test_non_utf8_file_names_file_line_and_column(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("-DOCSTART- O\n\nBerlin B-LOC\ncaf\u00e9 O\n".encode("latin-1"))
    with pytest.raises(CorpusFormatError,
                       match=rf"^{path}:4: expected UTF-8 text, got byte 0xe9 at column 4"):
        read_conll(path)
    assert read_conll(path, encoding="latin-1")[0].tokens == ["Berlin", "caf\u00e9"]
    first = _bytes(tmp_path / "b.txt", b"\xff\xfeB O\n")
    with pytest.raises(CorpusFormatError,
                       match=rf"^{first}:1: expected UTF-8 text, got byte 0xff at column 1"):
        read_text(first)


def _bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_read_text_errors_and_bom(tmp_path):
    assert read_text(_bytes(tmp_path / "bom.txt", "\ufeffa\r\nb\n".encode())) == "a\r\nb\n"
    with pytest.raises(CorpusFormatError, match="expected a text file, got a directory"):
        read_text(tmp_path)
    with pytest.raises(CorpusFormatError, match="expected a text file, got a directory"):
        read_conll(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_text(tmp_path / "missing.txt")


def test_bom_crlf_tabs_and_long_tokens(tmp_path):
    long_token = "x" * 1500
    path = _bytes(tmp_path / "odd.conll", (
        f"\ufeff-DOCSTART- O\r\n\r\nKalvenia\tB-LOC\r\n{long_token}\tO\r\n\r\n").encode())
    [doc] = read_conll(path)
    assert list(doc.tokens) == ["Kalvenia", long_token] and list(doc.tags) == ["B-LOC", "O"]


def test_long_bad_values_are_cut_in_messages(tmp_path):
    path = write(tmp_path, "long.conll", "a " + "B" * 5000 + "\n")
    with pytest.raises(CorpusFormatError) as info:
        read_conll(path)
    message = str(info.value)
    assert message.startswith(f"{path}:1: invalid tag 'BBBB") and len(message) < 300
    assert "last column" in message


def test_stats_script_names_a_non_utf8_file(tmp_path):
    for split in ("train", "dev"):
        write(tmp_path, f"{split}.txt", "a B-X\nb O\n")
    bad = _bytes(tmp_path / "test.txt", "a B-X\n\ncaf\u00e9 O\n".encode("latin-1"))
    proc = run_stats("--dataset", "column", "--data-dir", str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (f"error: {bad}:3: expected UTF-8 text, got byte 0xe9 at "
                                   "column 4 (byte offset 10); convert the file to UTF-8")


def test_stats_script_on_edge_case_documents(tmp_path):
    long_token = "y" * 1200
    lines = ["-DOCSTART- O", "", ". O", "! O", ""]
    lines += ["-DOCSTART- O", "", f"{long_token} B-X", "b O", ""]
    lines += ["-DOCSTART- O", ""] + ["a\tB-X", "b\tO", ""] * 10_000
    for split in ("train", "dev", "test"):
        write(tmp_path, f"{split}.txt", "\n".join(lines) + "\n")
    proc = run_stats("--dataset", "column", "--data-dir", str(tmp_path), "--json",
                     "--neighbours", "2")
    assert proc.returncode == 0, proc.stderr
    test = json.loads(proc.stdout)["test"]
    assert test["documents"] == 3 and test["tokens"] == 2 + 2 + 20_000
    assert test["entities"] == {"X": 10_001}


def test_first_line_of_an_entity_type(tmp_path):
    from docgraph.data.conll import first_line_of_type

    path = tmp_path / "x.conll"
    path.write_text("-DOCSTART- O\n\nAcme I-ORG\nX-Men B-MISC\n\nBerlin B-LOC\n")
    assert first_line_of_type(path, "LOC") == 6
    assert first_line_of_type(path, "ORG") == 3
    assert first_line_of_type(path, "Men") is None  # a word, not a tag
    assert first_line_of_type(path, "PER") is None
