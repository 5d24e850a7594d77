"""Tests of :mod:`docgraph.data.docbin`: spaCy DocBin files read into IOB2 documents (spaCy's
tokens and sentences as they are, ``doc.ents`` as the gold spans, ids from ``user_data``),
the errors naming the file and the document, the writer's round trip, and the readers that
take DocBin files (the ``column`` data set, ``read_labelled``, ``predict.py`` input)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

spacy = pytest.importorskip("spacy", reason="spaCy is not installed: pip install 'docgraph[spacy]'")

from spacy.tokens import Doc, DocBin, Span  # noqa: E402

from docgraph.data import docbin  # noqa: E402
from docgraph.data.docbin import (  # noqa: E402
    SpacyMissingError,
    docbin_bytes,
    docbin_layouts,
    read_docbin,
    write_docbin,
)
from docgraph.data.errors import CorpusFormatError  # noqa: E402
from docgraph.data.registry import (  # noqa: E402
    check_labelled_file,
    labelled_format,
    load_dataset,
    read_labelled,
    sample_data_dir,
)
from docgraph.data.tags import spans as tag_spans  # noqa: E402
from docgraph.tagging.prediction_io import ReadOptions, read_chunks, read_documents  # noqa: E402


def _save(path: Path, *docs: Doc, user_data: bool = False) -> Path:
    out = DocBin(store_user_data=user_data)
    for doc in docs:
        out.add(doc)
    out.to_disk(path)
    return path


def _doc(text: str, ents: list[tuple[int, int, str]] = (), sentences: bool = True) -> Doc:
    """``text`` tokenised by spaCy's English rules (sentencized when ``sentences``), with
    entities given as token spans."""
    nlp = spacy.blank("en")
    if sentences:
        nlp.add_pipe("sentencizer")
    doc = nlp(text)
    doc.ents = [Span(doc, a, b, label) for a, b, label in ents]
    return doc


def _tagged(document) -> list[list[tuple[str, str]]]:
    return [list(zip(s.tokens, s.tags)) for s in document.sentences]


def _entities(documents) -> list[tuple[str, int, str, int, int]]:
    """``(doc_id, sentence, type, start, end)`` of every entity."""
    return [(d.doc_id, k, label, a, b) for d in documents for k, s in enumerate(d.sentences)
            for label, a, b in tag_spans(s.tags)]


# ------------------------------------------------------------------------------- reading
def test_tokens_sentences_and_entities_as_spacy_has_them(tmp_path):
    doc = _doc("Acme hired Ana Ruiz.  She left for New York.", [(0, 1, "ORG"), (2, 4, "PER"),
                                                               (9, 11, "GPE")])
    assert [t.text for t in doc][5] == " "  # spaCy's whitespace token
    (document,) = read_docbin(_save(tmp_path / "a.spacy", doc))
    assert document.doc_id == "a-0"
    assert _tagged(document) == [
        [("Acme", "B-ORG"), ("hired", "O"), ("Ana", "B-PER"), ("Ruiz", "I-PER"), (".", "O")],
        [("She", "O"), ("left", "O"), ("for", "O"), ("New", "B-GPE"), ("York", "I-GPE"),
         (".", "O")]]


def test_a_doc_without_sentence_boundaries_is_split_by_docgraphs_rules(tmp_path):
    doc = _doc("Acme hired Ana Ruiz. She left.\n\nIt rained", [(2, 4, "PER")], sentences=False)
    assert not doc.has_annotation("SENT_START")
    (document,) = read_docbin(_save(tmp_path / "plain.spacy", doc))
    assert [s.tokens for s in document.sentences] == [
        ("Acme", "hired", "Ana", "Ruiz", "."), ("She", "left", "."), ("It", "rained")]
    # one sentence as spaCy has it (a sentencizer) stays one
    (one,) = read_docbin(_save(tmp_path / "one.spacy", _doc("Acme hired Ana Ruiz")))
    assert len(one.sentences) == 1


def test_an_entity_across_a_sentence_boundary_joins_the_sentences(tmp_path):
    words = ["He", "met", "Mr.", "Smith", ".", "Jones", "came", "."]
    doc = Doc(spacy.blank("en").vocab, words=words,
              sent_starts=[True, False, False, True, False, True, False, False])
    doc.ents = [Span(doc, 2, 4, "PER")]  # Mr. | Smith: across the Doc's first boundary
    (document,) = read_docbin(_save(tmp_path / "x.spacy", doc))
    assert [s.tokens for s in document.sentences] == [tuple(words[:5]), tuple(words[5:])]
    assert _entities([document]) == [("x-0", 0, "PER", 2, 4)]


def test_ids_come_from_user_data(tmp_path):
    if not Doc.has_extension("doc_id"):
        Doc.set_extension("doc_id", default=None)
    first, second, third = _doc("Acme won."), _doc("Ana won."), _doc("Ruiz won.")
    first.user_data["id"] = 17
    second._.doc_id = "story-b"
    path = _save(tmp_path / "ids.spacy", first, second, third, user_data=True)
    assert [d.doc_id for d in read_docbin(path)] == ["17", "story-b", "ids-2"]
    # without user_data stored the ids are the file's
    path = _save(tmp_path / "bare.spacy", first, second)
    assert [d.doc_id for d in read_docbin(path)] == ["bare-0", "bare-1"]


@pytest.mark.parametrize(("make", "message"), [
    (lambda: _doc("   "), "document 1: 'bad-1' has no tokens"),
    (lambda: Doc(spacy.blank("en").vocab, words=["New York", "won"]),
     "document 1: token 0 'New York' has whitespace inside it"),
    (lambda: _doc("Acme  won", [(1, 2, "ORG")]),
     "document 1: entity 5-6 'ORG' (' ') covers only whitespace"),
])
def test_errors_name_the_file_and_the_document(tmp_path, make, message):
    path = _save(tmp_path / "bad.spacy", _doc("Fine ."), make())
    with pytest.raises(CorpusFormatError) as info:
        read_docbin(path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_a_file_that_is_not_a_docbin(tmp_path):
    path = tmp_path / "text.spacy"
    path.write_text("Acme B-ORG\n")
    with pytest.raises(CorpusFormatError, match=rf"^{path}: expected a spaCy DocBin \(\.spacy\) "
                                                "file, got data it cannot read"):
        read_docbin(path)
    with pytest.raises(CorpusFormatError, match="has none"):
        read_docbin(_save(tmp_path / "empty.spacy"))


def test_without_spacy_the_error_names_the_file_and_the_extra(tmp_path, monkeypatch,
                                                                 capsys):
    path = _save(tmp_path / "a.spacy", _doc("Acme won."))
    monkeypatch.setattr(docbin, "_spacy", lambda: None)
    with pytest.raises(SpacyMissingError) as info:
        read_docbin(path)
    assert str(info.value) == (f"{path}: reading a spaCy DocBin (.spacy) needs spaCy, which is "
                               "not installed: pip install 'docgraph[spacy]'")
    with pytest.raises(SpacyMissingError, match="out.spacy: writing"):
        write_docbin(tmp_path / "out.spacy", read_labelled(sample_data_dir() / "dev.txt"))
    # the check before slow work (train.py --train, the tagging tools' inputs) asks the same
    monkeypatch.setattr(docbin, "find_spec", lambda name: None)
    with pytest.raises(SpacyMissingError, match=f"^{path}: reading a spaCy DocBin"):
        check_labelled_file(path, "--train")
    from docgraph.cli import predict_main
    with pytest.raises(SystemExit):
        predict_main(["--model", "conll03", str(path)])
    assert capsys.readouterr().err == (
        f"error: {path}: reading a spaCy DocBin (.spacy) needs spaCy, which is not installed: "
        "pip install 'docgraph[spacy]'\n")


# ------------------------------------------------------------------------------- writing
def test_round_trip_of_a_corpus_keeps_tokens_sentences_entities_and_ids(tmp_path):
    documents = load_dataset("sample", splits=("dev",))["dev"]
    write_docbin(tmp_path / "dev.spacy", documents)
    back = read_docbin(tmp_path / "dev.spacy")
    assert [(d.doc_id, [s.tokens for s in d.sentences]) for d in back] == [
        (d.doc_id, [s.tokens for s in d.sentences]) for d in documents]
    assert _entities(back) == _entities(documents) and _entities(documents)


def test_written_docs_keep_the_text_and_its_whitespace(tmp_path):
    (document,) = read_labelled(_save(tmp_path / "in.spacy", _doc(
        "Acme hired\tAna Ruiz.\r\n\r\n  Yahoo Inc. paid.", [(0, 1, "ORG"), (3, 5, "PER")])))
    text = "  Acme hired\tAna Ruiz.\r\n\r\n  Yahoo Inc. paid. \n"
    predicted = [["O"] * len(s) for s in document.sentences]
    predicted[1][0:2] = ["B-ORG", "I-ORG"]
    data = docbin_bytes([document], predictions=[predicted], texts=[text])
    (doc,) = DocBin().from_bytes(data).get_docs(spacy.blank("en").vocab)
    assert doc.text == text
    assert [(e.text, e.label_) for e in doc.ents] == [("Yahoo Inc.", "ORG")]
    assert doc.user_data["id"] == "in-0"
    path = tmp_path / "out.spacy"
    path.write_bytes(data)
    (layout,) = docbin_layouts(path)
    assert layout.entities == (("ORG", 28, 38),) and layout.text == text
    (back,) = read_docbin(path)
    assert back.tokens == document.tokens
    assert _entities([back]) == [("in-0", 1, "ORG", 0, 2)]
    with pytest.raises(ValueError, match="more than whitespace"):
        docbin_bytes([document], texts=["Acme x " + text])


# ------------------------------------------------------------------------------- readers
def test_the_readers_of_labelled_files_take_docbin(tmp_path):
    data = load_dataset("sample")
    for split, documents in data.items():
        write_docbin(tmp_path / f"{split}.spacy", documents)
    read = load_dataset("column", tmp_path)
    assert {s: _entities(d) for s, d in read.items()} == {s: _entities(d) for s, d in data.items()}
    assert labelled_format(tmp_path / "dev.spacy") == "spacy"
    jsonl_in_txt = tmp_path / "spans.txt"
    jsonl_in_txt.write_text('{"text": "Acme won.", "label": [[0, 4, "ORG"]]}\n')
    assert labelled_format(jsonl_in_txt) == "jsonl"
    assert read_labelled(jsonl_in_txt)[0].tags == ["B-ORG", "O", "O"]


def test_predict_reads_the_tokens_and_text_of_each_doc(tmp_path):
    path = _save(tmp_path / "raw.spacy", _doc("Acme hired Ana.  She left.", [(0, 1, "ORG")]),
                 _doc("Ruiz won"))
    chunks = list(read_chunks(path, ReadOptions()))
    assert [(c.doc, c.text, c.done) for c in chunks] == [
        ("raw-0", "Acme hired Ana.  She left.", 0.5), ("raw-1", "Ruiz won", 1.0)]
    assert chunks[0].pieces[1].tokens == ("She", "left", ".")
    assert chunks[0].pieces[1].spans == ((17, 20), (21, 25), (25, 26))
    documents = read_documents(path, ReadOptions(input_format="spacy"))
    assert [(d.doc_id, [s.tokens for s in d.sentences], set(d.tags)) for d in documents] == [
        ("raw-0", [("Acme", "hired", "Ana", "."), ("She", "left", ".")], {"O"}),
        ("raw-1", [("Ruiz", "won")], {"O"})]
    # a DocBin under another name, named by --input-format
    other = tmp_path / "raw.bin"
    other.write_bytes(path.read_bytes())
    assert [c.doc for c in read_chunks(other, ReadOptions(input_format="spacy"))] == [
        "raw-0", "raw-1"]


@pytest.mark.slow
def test_evaluate_and_visualize_take_a_docbin(tmp_path, capsys):
    from docgraph.cli import evaluate_main, visualize_main

    doc = _doc("Angela Merkel met Emmanuel Macron in Berlin. Siemens paid.",
               [(0, 2, "PER"), (3, 5, "PER"), (6, 7, "LOC"), (8, 9, "ORG")])
    path = _save(tmp_path / "gold.spacy", doc, _doc("Paris won.", [(0, 1, "LOC")]))
    common = ["--model", "conll03", "--data", str(path), "--device", "cpu"]
    assert evaluate_main([*common, "--output-dir", str(tmp_path), "--quiet",
                          "--processes", "1"]) == 0
    assert "gold (2 documents)" in capsys.readouterr().out
    scores = json.loads((tmp_path / "gold_metrics.json").read_text())["gold"]
    assert scores["support"] == 5  # the gold entities of both Docs
    page = tmp_path / "gold.html"
    assert visualize_main([*common, "--html", str(page)]) == 0
    assert f"wrote {page} (2 documents)" in capsys.readouterr().out
    assert "Macron" in page.read_text()
