"""Tests of ``predict.py``'s inputs and its outputs in the annotation formats: standard input
(``-``), a folder of files, spaCy DocBin input, and ``--format spans`` / ``--format spacy``,
whose files read back (span JSON lines, DocBin readers) to the entities that ``--format
jsonl`` writes, for raw text and for labelled input, whole or in chunks and pieces."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from docgraph.cli import predict_main
from docgraph.cli.arguments import input_names
from docgraph.config.fields import UsageError
from docgraph.data.registry import load_dataset, sample_data_dir
from docgraph.data.span_jsonl import read_span_jsonl, write_span_jsonl
from docgraph.data.tags import spans as tag_spans
from docgraph.tagging.prediction_io import (
    STDIN,
    OutputWriter,
    ReadOptions,
    read_chunks,
    write_predictions,
)
from docgraph.tagging.result import Tagging

TEXT = ("Acme hired Ana Ruiz in Lyon. Ana Ruiz left Acme Corp for Berlin.\r\n\r\n"
        "  Yahoo paid Ruiz.  Lyon won.\n")

#: What the word tagger below tags each word: entities that a small ``max_tokens`` cuts, and
#: the tag of every word of an entity of the sample corpus's dev split (an ``I-`` tag after
#: ``O`` among them).
WORD_TAGS = {**{token: tag for document in load_dataset("sample", splits=("dev",))["dev"]
                for token, tag in zip(document.tokens, document.tags) if tag != "O"},
             "Acme": "B-ORG", "Corp": "I-ORG", "Ana": "B-PER", "Ruiz": "I-PER",
             "Lyon": "B-LOC", "Berlin": "B-LOC", "Yahoo": "B-ORG"}


class WordTagger:
    """A tagger that tags each word by :data:`WORD_TAGS` (what :func:`write_predictions`
    needs of a model)."""

    def tag_chunks(self, chunks, document, processes=0, mc_seed=0, scores=False):
        for chunk in chunks:
            yield chunk, Tagging([[WORD_TAGS.get(t, "O") for t in p.tokens]
                                  for p in chunk.pieces])


def _output(paths, output_format: str, options: ReadOptions) -> str | bytes:
    """What ``predict.py --format output_format`` writes for ``paths``, by the word tagger."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    write_predictions(WordTagger(), [Path(p) for p in paths], options, output_format, out)
    out.flush()
    data = out.buffer.getvalue()
    return data if output_format == "spacy" else data.decode("utf-8")


def _jsonl_entities(paths, options: ReadOptions) -> list[tuple[str, int, str, int, int]]:
    """``(doc, sentence, type, start, end)`` of every entity of ``--format jsonl``."""
    records = [json.loads(line) for line in _output(paths, "jsonl", options).splitlines()]
    return [(r["doc"], r["sentence"], r["type"], r["start"], r["end"]) for r in records]


def _entities(documents) -> list[tuple[str, int, str, int, int]]:
    return [(d.doc_id, k, label, a, b) for d in documents for k, s in enumerate(d.sentences)
            for label, a, b in tag_spans(s.tags)]


def _read_back(tmp_path: Path, output_format: str, data: str | bytes):
    if output_format == "spans":
        (tmp_path / "back.jsonl").write_text(data, encoding="utf-8")
        return read_span_jsonl(tmp_path / "back.jsonl")
    from docgraph.data.docbin import read_docbin

    (tmp_path / "back.spacy").write_bytes(data)
    return read_docbin(tmp_path / "back.spacy")


def _inputs(tmp_path: Path) -> dict[str, Path]:
    """The same text as raw text, as span JSON lines (with gold spans) and as CoNLL."""
    (tmp_path / "raw.txt").write_text(TEXT, encoding="utf-8", newline="")
    (tmp_path / "gold.jsonl").write_text(json.dumps(
        {"id": "g1", "text": TEXT, "label": [[0, 4, "ORG"], [11, 19, "PER"]]}) + "\n")
    conll = tmp_path / "dev.txt"
    conll.write_text((sample_data_dir() / "dev.txt").read_text())
    return {"raw": tmp_path / "raw.txt", "jsonl": tmp_path / "gold.jsonl", "conll": conll}


@pytest.mark.parametrize("output_format", ["spans", "spacy"])
@pytest.mark.parametrize("source", ["raw", "paragraphs", "jsonl", "conll"])
@pytest.mark.parametrize("max_tokens", [2000, 4])
def test_predictions_read_back_to_the_same_entities(tmp_path, output_format, source,
                                                    max_tokens):
    if output_format == "spacy":
        pytest.importorskip("spacy", reason="spaCy is not installed")
    paths = _inputs(tmp_path)
    path = paths["raw" if source == "paragraphs" else source]
    options = ReadOptions(documents="paragraphs" if source == "paragraphs" else "file",
                          max_tokens=max_tokens)
    expected = _jsonl_entities([path], options)
    assert len(expected) >= (6 if source != "conll" else 20)
    back = _read_back(tmp_path, output_format, _output([path], output_format, options))
    assert _entities(back) == expected


def test_a_spans_record_is_the_documents_text_and_its_entities(tmp_path):
    paths = _inputs(tmp_path)
    lines = _output([paths["raw"]], "spans", ReadOptions(documents="paragraphs")).splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == ["raw-0", "raw-1"]
    assert records[1] == {"id": "raw-1", "text": "Yahoo paid Ruiz.  Lyon won.",
                          "spans": [[0, 5, "ORG"], [11, 15, "PER"], [18, 22, "LOC"]]}
    (whole,) = [json.loads(line)
                for line in _output([paths["raw"]], "spans", ReadOptions()).splitlines()]
    assert whole["text"] == TEXT  # the file's text: its offsets are those of --format jsonl
    starts = [json.loads(line)["start_char"]
              for line in _output([paths["raw"]], "jsonl", ReadOptions()).splitlines()]
    assert [s for s, _, _ in whole["spans"]] == starts


def test_docbin_input_keeps_spacys_tokens_through_a_docbin(tmp_path):
    spacy = pytest.importorskip("spacy", reason="spaCy is not installed")
    from spacy.tokens import DocBin

    from docgraph.data.docbin import read_docbin

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    out = DocBin()
    out.add(nlp("Acme's chief Ana Ruiz (Lyon) left; Yahoo-Acme won."))
    out.to_disk(tmp_path / "in.spacy")
    options = ReadOptions(max_tokens=3)
    expected = _jsonl_entities([tmp_path / "in.spacy"], options)
    assert ("in-0", 0, "PER", 3, 5) in expected
    back = _read_back(tmp_path, "spacy", _output([tmp_path / "in.spacy"], "spacy", options))
    assert _entities(back) == expected
    assert back[0].tokens == read_docbin(tmp_path / "in.spacy")[0].tokens


def test_the_writer_refuses_html():
    with pytest.raises(ValueError, match="output_format must be one of"):
        OutputWriter("html")


# ------------------------------------------------------------------- folders and stdin
def test_a_folder_stands_for_its_text_jsonl_and_docbin_files_sorted(tmp_path):
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    for name in ("b.txt", "a.jsonl", "c.spacy", "notes.md", "d.TXT", "sub/e.txt"):
        (folder / name).write_text("x")
    assert input_names([str(folder), "-", "z.txt"]) == [
        str(folder / "a.jsonl"), str(folder / "b.txt"), str(folder / "c.spacy"),
        str(folder / "d.TXT"), "-", "z.txt"]
    with pytest.raises(UsageError, match="standard input given twice"):
        input_names(["-", "-"])
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.md").write_text("x")
    with pytest.raises(UsageError) as info:
        input_names([str(folder), str(tmp_path / "empty")])
    assert str(info.value) == (f"{tmp_path / 'empty'}: a folder without .txt, .jsonl or .spacy "
                               "files to tag")


def test_stdin_is_read_once_as_text_or_as_the_input_format_says(tmp_path, monkeypatch):
    def stdin(data: bytes) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))

    stdin(TEXT.encode())
    chunks = list(read_chunks(STDIN, ReadOptions()))
    assert [c.doc for c in chunks] == ["<stdin>"] and chunks[0].text == TEXT
    assert [c.num_tokens for c in read_chunks(STDIN, ReadOptions())] == [0]  # read already
    stdin(b'{"id": "r", "text": "Acme won."}\n')
    assert [c.doc for c in read_chunks(STDIN, ReadOptions(input_format="jsonl"))] == ["r"]


@pytest.mark.slow
def test_predict_tags_stdin_and_a_folder_and_writes_the_annotation_formats(
        tmp_path, monkeypatch, capsys):
    pytest.importorskip("spacy", reason="spaCy is not installed")
    from docgraph.data.docbin import read_docbin

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "b.txt").write_text(TEXT, newline="")
    documents = load_dataset("sample", splits=("dev",))["dev"][:2]
    write_span_jsonl(folder / "a.jsonl", documents)
    (folder / "skip.md").write_text("Acme won.")
    common = ["--model", "conll03", "--device", "cpu", "--processes", "1", "--quiet"]

    def run(*argv: str, data: bytes = b"") -> str:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        assert predict_main([*common, *argv]) == 0
        return capsys.readouterr().out

    stdin_text = b"Ana Ruiz of Acme Corp arrived in Berlin on Monday."
    records = [json.loads(line) for line in run(str(folder), "-", data=stdin_text).splitlines()]
    order = [d.doc_id for d in documents] + ["b", "<stdin>"]  # a.jsonl, b.txt, then stdin
    docs = [r["doc"] for r in records]
    assert docs == sorted(docs, key=order.index) and {"b", "<stdin>"} <= set(docs)
    expected = [(r["doc"], r["sentence"], r["type"], r["start"], r["end"]) for r in records]
    spans = run(str(folder), "-", "--format", "spans", data=stdin_text)
    (tmp_path / "out.jsonl").write_text(spans)
    assert _entities(read_span_jsonl(tmp_path / "out.jsonl")) == expected
    run(str(folder), "-", "--format", "spacy", "--output", str(tmp_path / "out.spacy"),
        data=stdin_text)
    assert _entities(read_docbin(tmp_path / "out.spacy")) == expected
    # stdin read as span JSON lines, and a DocBin as input
    jsonl = (folder / "a.jsonl").read_bytes()
    records = [json.loads(line) for line in run("--input-format", "jsonl", "-",
                                                data=jsonl).splitlines()]
    assert {r["doc"] for r in records} == {d.doc_id for d in documents}
    again = [json.loads(line) for line in run(str(tmp_path / "out.spacy")).splitlines()]
    assert [(r["doc"], r["type"], r["text"]) for r in again] == [
        (r["doc"], r["type"], r["text"]) for r in
        (json.loads(line) for line in run(str(folder), "-", data=stdin_text).splitlines())]
