"""OntoNotes CoNLL-2012 reader."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from docgraph.data import CorpusFormatError, corpus_statistics, read_ontonotes


def tok(doc: str, i: int, word: str, ner: str, part: int = 0) -> str:
    return f"{doc} {part} {i} {word} NNP * - - - Speaker#1 {ner} * -"


def block(doc: str, part: int, sentences: list[list[tuple[str, str]]]) -> str:
    lines = [f"#begin document ({doc}); part {part:03d}"]
    for sent in sentences:
        lines += [tok(doc, i, w, n, part) for i, (w, n) in enumerate(sent)]
        lines.append("")
    lines.append("#end document")
    return "\n".join(lines) + "\n"


DOC = "bc/cctv/00/cctv_0001"
GOOD = block(DOC, 0, [
    [("Hong", "(GPE*"), ("Kong", "*)"), ("media", "*"), ("/.", "*")],
    [("Obama", "(PERSON)"), ("spoke", "*"), ("in", "*"), ("New", "(GPE*"), ("York", "*"),
     ("City", "*)"), ("/?", "*")],
]) + block(DOC, 1, [[("Yes", "*"), ("/-", "*"), ("2005", "(DATE)")]]) + block(
    "pt/nt/40/nt_4001", 0, [[("Jesus", "(PERSON)"), ("wept", "*")]]
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_read_file(tmp_path):
    docs = read_ontonotes(write(tmp_path, "x.gold_conll", GOOD))
    assert [d.doc_id for d in docs] == [f"{DOC}/part-000", f"{DOC}/part-001"]
    first = docs[0]
    assert first.sentences[0].tokens == ("Hong", "Kong", "media", ".")
    assert first.sentences[0].tags == ("B-GPE", "I-GPE", "O", "O")
    assert first.sentences[1].tags == ("B-PERSON", "O", "O", "B-GPE", "I-GPE", "I-GPE", "O")
    assert first.sentences[1].tokens[-1] == "?"
    assert docs[1].tokens == ["Yes", "-", "2005"]
    assert docs[1].tags == ["O", "O", "B-DATE"]
    stats = corpus_statistics(docs)
    assert stats["parts"] == 2 and stats["source_documents"] == 1
    assert stats["entities"] == {"DATE": 1, "GPE": 2, "PERSON": 1}


def test_include_pt(tmp_path):
    docs = read_ontonotes(write(tmp_path, "x.gold_conll", GOOD), include_pt=True)
    assert docs[-1].doc_id == "pt/nt/40/nt_4001/part-000"
    assert docs[-1].tags == ["B-PERSON", "O"]


def test_gz_and_directory_tree(tmp_path):
    gz = tmp_path / "train.gold_conll.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write(GOOD)
    assert [d.doc_id for d in read_ontonotes(gz)][:1] == [f"{DOC}/part-000"]
    root = tmp_path / "conll-2012" / "train"
    base = root / "data" / "english" / "annotations"
    write(base, "nw/wsj/00/wsj_0002.gold_conll", block("nw/wsj/00/wsj_0002", 0, [[("b", "*")]]))
    write(base, "bc/cctv/00/cctv_0001.gold_conll", GOOD)
    write(base, "bc/cctv/00/cctv_0001.gold_skel", "ignored")
    docs = read_ontonotes(root)
    assert [d.doc_id for d in docs] == [
        f"{DOC}/part-000", f"{DOC}/part-001", "nw/wsj/00/wsj_0002/part-000"
    ]
    with pytest.raises(FileNotFoundError):
        read_ontonotes(tmp_path / "missing")
    with pytest.raises(ValueError, match="skeleton2conll"):
        read_ontonotes(write(tmp_path, "empty/readme.txt", "x").parent)


B = f"#begin document ({DOC}); part 000"
E = "#end document"


@pytest.mark.parametrize(
    ("lines", "line", "needle"),
    [
        ([B, tok(DOC, 0, "a", "(ORG*"), tok(DOC, 1, "b", "*"), "", E], 2, "never closed"),
        ([B, tok(DOC, 0, "a", "(ORG*"), E], 2, "never closed"),
        ([B, tok(DOC, 0, "a", "*"), tok(DOC, 1, "b", "*)"), "", E], 3, "never opened"),
        ([B, tok(DOC, 0, "a", "(ORG*"), tok(DOC, 1, "b", "(GPE)"), "", E], 3, "still open"),
        ([B, tok(DOC, 0, "a", "ORG"), "", E], 2, "expected '\\(TYPE\\)'"),
        ([B, tok(DOC, 0, "a", "*"), "", E, E], 5, "without a"),
        ([B, tok(DOC, 0, "a", "*"), "", B, E], 4, "before a new"),
        ([tok(DOC, 0, "a", "*")], 1, "outside a document"),
        ([B, tok(DOC, 0, "a", "*"), "", E, tok(DOC, 0, "b", "*")], 5, "outside a document"),
        ([B, "bc 0 0 a NNP * - - - Speaker", "", E], 2, "at least 11 columns"),
        ([B, tok(DOC, 0, "a", "*"), ""], 3, "before the end of the file"),
        (["#begin document cctv; part 0"], 1, "begin document"),
        ([""], 1, "at least one"),
    ],
)
def test_malformed(tmp_path, lines, line, needle):
    path = write(tmp_path, "bad.gold_conll", "\n".join(lines) + "\n")
    with pytest.raises(CorpusFormatError, match=needle) as info:
        read_ontonotes(path)
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_empty_file(tmp_path):
    path = write(tmp_path, "empty.gold_conll", "")
    with pytest.raises(CorpusFormatError, match="at least one") as info:
        read_ontonotes(path)
    assert str(path) in str(info.value)


def test_slim_bundle_reads_the_same_documents(tmp_path):
    """The GPU bundle's --slim OntoNotes keeps what the reader reads: the same documents."""
    import importlib.util

    script = Path(__file__).parents[1] / "benchmarks" / "gpu" / "prepare_offline_bundle.py"
    spec = importlib.util.spec_from_file_location("prepare_offline_bundle", script)
    bundle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bundle)
    full = write(tmp_path / "full", "train.gold_conll", GOOD)
    slim_text = "".join(bundle.slim_lines(GOOD.splitlines(keepends=True)))
    slim = write(tmp_path / "slim", "train.gold_conll", slim_text)
    assert "Speaker#1" not in slim_text and "NNP" not in slim_text
    assert len(slim_text) < len(GOOD)
    assert read_ontonotes(slim, include_pt=True) == read_ontonotes(full, include_pt=True)
