"""Tests of :mod:`docgraph.data.span_jsonl`: the JSON lines with character spans of
annotation tools (doccano, Prodigy, Label Studio) read into IOB2 documents, the alignment
errors naming file, line and span, the writer's round trip, and the readers that take them
(the ``column`` data set, ``evaluate.py --data``, ``predict.py`` input)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from docgraph.data.errors import CorpusFormatError
from docgraph.data.registry import load_dataset, read_labelled
from docgraph.data.span_jsonl import (
    looks_like_span_jsonl,
    read_span_jsonl,
    span_record,
    span_texts,
    write_span_jsonl,
)
from docgraph.data.tags import spans as tag_spans
from docgraph.tagging.prediction_io import ReadOptions, read_chunks, read_documents


def _write(tmp_path: Path, name: str, *lines: object) -> Path:
    """A file of ``lines``, each a JSON value or a raw string."""
    path = tmp_path / name
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n"
                            for line in lines), encoding="utf-8")
    return path


def _tagged(document) -> list[list[tuple[str, str]]]:
    return [list(zip(s.tokens, s.tags)) for s in document.sentences]


def _entities(documents) -> list[tuple[str, str, str]]:
    """``(doc_id, type, covered tokens)`` of every entity."""
    return [(d.doc_id, label, " ".join(s.tokens[a:b]))
            for d in documents for s in d.sentences for label, a, b in tag_spans(s.tags)]


# ------------------------------------------------------------------------------- shapes
def test_doccano_label_lists(tmp_path):
    path = _write(tmp_path, "doccano.jsonl",
                  {"id": 7, "text": "Acme hired Ana Ruiz in Lyon.",
                   "label": [[0, 4, "ORG"], [11, 19, "PER"], [23, 27, "LOC"]]},
                  "",
                  {"text": "Ruiz left.", "label": []})
    first, second = read_span_jsonl(path)
    assert first.doc_id == "7" and first.source_scheme == "iob2"
    assert _tagged(first) == [[("Acme", "B-ORG"), ("hired", "O"), ("Ana", "B-PER"),
                               ("Ruiz", "I-PER"), ("in", "O"), ("Lyon", "B-LOC"), (".", "O")]]
    assert second.doc_id == "doccano-3"  # the line number, blank lines counted
    assert _tagged(second) == [[("Ruiz", "O"), ("left", "O"), (".", "O")]]


def test_doccano_entities_with_offsets(tmp_path):
    path = _write(tmp_path, "entities.jsonl",
                  {"id": "d1", "text": "Kestrel signed Piet Rauch. Rauch scored twice.",
                   "entities": [{"id": 1, "start_offset": 0, "end_offset": 7, "label": "ORG"},
                                {"id": 2, "start_offset": 15, "end_offset": 25,
                                 "label": "PER"},
                                {"id": 3, "start_offset": 27, "end_offset": 32,
                                 "label": "PER"}]})
    (doc,) = read_span_jsonl(path, scheme="BIOES")
    assert doc.doc_id == "d1" and doc.source_scheme == "bioes"
    assert _tagged(doc) == [
        [("Kestrel", "B-ORG"), ("signed", "O"), ("Piet", "B-PER"), ("Rauch", "I-PER"),
         (".", "O")],
        [("Rauch", "B-PER"), ("scored", "O"), ("twice", "O"), (".", "O")]]


def test_prodigy_spans_and_label_studio_labels(tmp_path):
    # " New York " (5..15): the spaces at either end are trimmed
    path = _write(tmp_path, "prodigy.jsonl",
                  {"text": "Visit New York now", "meta": {"id": "p9"},
                   "spans": [{"start": 5, "end": 15, "label": "GPE", "token_start": 1,
                              "token_end": 2}]},
                  {"text": "Visit New York now", "doc_id": "ls-1",
                   "spans": [{"start": 6, "end": 14, "text": "New York", "labels": ["GPE"]}]})
    prodigy, studio = read_span_jsonl(path)
    expected = [[("Visit", "O"), ("New", "B-GPE"), ("York", "I-GPE"), ("now", "O")]]
    assert (prodigy.doc_id, _tagged(prodigy)) == ("p9", expected)
    assert (studio.doc_id, _tagged(studio)) == ("ls-1", expected)


def test_a_span_across_a_sentence_boundary_joins_the_sentences(tmp_path):
    text = "She met Yahoo! Inc. staff."  # the splitter ends a sentence after "Yahoo!"
    path = _write(tmp_path, "join.jsonl", {"text": text, "label": []},
                  {"text": text, "label": [[8, 19, "ORG"]]})
    plain, joined = read_span_jsonl(path)
    assert [s.tokens for s in plain.sentences] == [("She", "met", "Yahoo", "!"),
                                                   ("Inc.", "staff", ".")]
    assert _tagged(joined) == [[("She", "O"), ("met", "O"), ("Yahoo", "B-ORG"), ("!", "I-ORG"),
                                ("Inc.", "I-ORG"), ("staff", "O"), (".", "O")]]


def test_records_without_tokens_give_no_document(tmp_path):
    path = _write(tmp_path, "gaps.jsonl", {"text": "  ", "label": []}, {"text": "Ruiz won."})
    assert [d.doc_id for d in read_span_jsonl(path)] == ["gaps-2"]
    empty = _write(tmp_path, "empty.jsonl", "", {"text": ""})
    with pytest.raises(CorpusFormatError, match=r"empty\.jsonl:1: .*the file has no tokens"):
        read_span_jsonl(empty)


# ------------------------------------------------------------------------------- errors
TEXT = "Big Canadian firms"  # Big 0-3, Canadian 4-12, firms 13-18


@pytest.mark.parametrize(("line", "message"), [
    ({"text": TEXT, "label": [[4, 9, "MISC"]]},
     "span [4, 9, 'MISC'] ('Canad') does not end on a token boundary (token 'Canadian' ends "
     "at 12)"),
    ({"text": TEXT, "label": [[5, 12, "MISC"]]},
     "span [5, 12, 'MISC'] ('anadian') does not start on a token boundary (token 'Canadian' "
     "starts at 4)"),
    ({"text": TEXT, "spans": [{"start": 0, "end": 12, "label": "ORG"},
                              {"start": 4, "end": 12, "label": "MISC"}]},
     "span [4, 12, 'MISC'] ('Canadian') overlaps span [0, 12, 'ORG'] ('Big Canadian')"),
    ({"text": TEXT, "label": [[4, 4, "MISC"]]}, "span [4, 4, 'MISC'] ('') is empty"),
    ({"text": TEXT, "label": [[3, 4, "MISC"]]},
     "span [3, 4, 'MISC'] (' ') covers only whitespace"),
    ({"text": TEXT, "label": [[13, 30, "MISC"]]},
     "span [13, 30, 'MISC'] ('firms') is outside the text (offsets 0 to 18)"),
    ({"text": TEXT, "label": [[4, 12]]},
     "span [4, 12]: expected [start, end, type] or an object with start, end (or "
     "start_offset, end_offset) and label"),
    ({"text": TEXT, "spans": [{"begin": 4, "end": 12, "label": "MISC"}]},
     'span {"begin": 4, "end": 12, "label": "MISC"}: expected [start, end, type]'),
    ({"text": TEXT, "label": [[4.0, 12, "MISC"]]},
     "span [4.0, 12, \"MISC\"]: expected integer offsets"),
    ({"text": TEXT, "label": [[4, 12, "NORP GROUP"]]},
     'span [4, 12, "NORP GROUP"]: expected a type without whitespace'),
    ({"text": TEXT, "label": "MISC"}, "expected 'label' to be a list of spans, got a JSON string"),
    ('{"text": "Big Canadian firms", "label": [', "got invalid JSON"),
    ({"label": [[0, 3, "ORG"]]}, 'expected a JSON object with a string "text" field, got no '
                                 '"text" field'),
    ([{"text": TEXT}], 'expected a JSON object with a "text" field on every line, got a JSON '
                       "array"),
    ({"text": TEXT, "id": [1]}, "expected 'id' to be a non-empty string or an integer"),
])
def test_errors_name_the_file_the_line_and_the_span(tmp_path, line, message):
    path = _write(tmp_path, "bad.jsonl", {"text": "Fine ."}, line)
    with pytest.raises(CorpusFormatError) as info:
        read_span_jsonl(path)
    assert str(info.value).startswith(f"{path}:2: ")
    assert message in str(info.value)


# ------------------------------------------------------------------------------- writing
def test_round_trip_keeps_documents_and_entities(tmp_path):
    path = _write(tmp_path, "in.jsonl",
                  {"id": 7, "text": "Acme hired Ana Ruiz in Lyon.\r\nShe met Yahoo! Inc. staff.",
                   "label": [[0, 4, "ORG"], [11, 19, "PER"], [23, 27, "LOC"], [38, 49, "ORG"]]},
                  {"text": "Smith's café won.", "label": [[0, 5, "PER"]]})
    documents = read_span_jsonl(path)
    texts = [text for _, text in span_texts(path)]
    write_span_jsonl(tmp_path / "out.jsonl", documents, texts=texts)
    assert read_span_jsonl(tmp_path / "out.jsonl") == documents  # ids written, "in-2" too
    first = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert first == {"id": "7", "text": texts[0], "spans": [
        {"start": 0, "end": 4, "label": "ORG"}, {"start": 11, "end": 19, "label": "PER"},
        {"start": 23, "end": 27, "label": "LOC"}, {"start": 38, "end": 49, "label": "ORG"}]}
    # without the texts: the tokens joined by spaces, clitics glued back to their word
    handle = io.StringIO()
    write_span_jsonl(handle, documents)
    assert json.loads(handle.getvalue().splitlines()[1])["text"] == "Smith's café won ."
    (tmp_path / "joined.jsonl").write_text(handle.getvalue())
    assert read_span_jsonl(tmp_path / "joined.jsonl") == documents
    assert _entities(documents) == [
        ("7", "ORG", "Acme"), ("7", "PER", "Ana Ruiz"), ("7", "LOC", "Lyon"),
        ("7", "ORG", "Yahoo ! Inc."), ("in-2", "PER", "Smith")]


def test_predictions_are_written_instead_of_the_gold_tags(tmp_path):
    (doc,) = read_span_jsonl(_write(tmp_path, "g.jsonl",
                                    {"text": "Acme hired Ana.", "label": [[0, 4, "ORG"]]}))
    record = span_record(doc, "Acme hired Ana.", [["O", "O", "B-PER", "O"]])
    assert record["spans"] == [{"start": 11, "end": 14, "label": "PER"}]
    with pytest.raises(ValueError, match="do not match"):
        span_record(doc, tags=[["O"]])
    with pytest.raises(ValueError, match="1 predictions for 2 documents"):
        write_span_jsonl(tmp_path / "x.jsonl", [doc, doc], predictions=[[["O"] * 4]])
    assert not (tmp_path / "x.jsonl").exists()


def test_looks_like_span_jsonl():
    assert looks_like_span_jsonl('\n{"text": "a", "label": []}\n{"tex')
    assert not looks_like_span_jsonl('{"text": "a"')  # a first line cut short
    assert not looks_like_span_jsonl('["text"]\n')
    assert not looks_like_span_jsonl("{\n  \"text\": \"a\"\n}\n")  # JSON, not JSON lines
    assert not looks_like_span_jsonl("Acme B-ORG\nhired O\n")
    assert not looks_like_span_jsonl("")


# ------------------------------------------------------------------------------- readers
def test_the_column_dataset_reads_jsonl_splits(tmp_path):
    for split in ("train", "dev", "test"):
        _write(tmp_path, f"{split}.jsonl",
               {"id": f"{split}-a", "text": "Acme hired Ana.", "label": [[0, 4, "ORG"]]})
    data = load_dataset("column", tmp_path)
    assert {split: [d.doc_id for d in docs] for split, docs in data.items()} == {
        "train": ["train-a"], "dev": ["dev-a"], "test": ["test-a"]}
    assert data["test"][0].tags == ["B-ORG", "O", "O", "O"]
    conll = tmp_path / "mine.conll"
    conll.write_text("Acme B-ORG\nhired O\n")
    assert read_labelled(conll)[0].tags == ["B-ORG", "O"]


def test_predict_reads_the_text_of_each_record(tmp_path):
    path = _write(tmp_path, "raw.jsonl", {"id": 7, "text": "Acme hired Ana. She left."},
                  {"text": "Ruiz won.", "label": [[0, 2, "PER"]]})  # spans are not read
    chunks = list(read_chunks(path, ReadOptions()))
    assert [(c.doc, c.text, c.done) for c in chunks] == [
        ("7", "Acme hired Ana. She left.", 0.5), ("raw-2", "Ruiz won.", 1.0)]
    assert chunks[0].pieces[1].tokens == ("She", "left", ".")
    assert chunks[0].pieces[1].spans == ((16, 19), (20, 24), (24, 25))
    documents = read_documents(path, ReadOptions(input_format="jsonl"))
    assert [(d.doc_id, [s.tokens for s in d.sentences]) for d in documents] == [
        ("7", [("Acme", "hired", "Ana", "."), ("She", "left", ".")]),
        ("raw-2", [("Ruiz", "won", ".")])]


def test_evaluate_on_a_jsonl_file(model_dir, tmp_path, capsys):
    from docgraph.cli import evaluate_main

    documents = load_dataset("sample", splits=("dev",))["dev"][:2]
    write_span_jsonl(tmp_path / "mine.jsonl", documents)
    assert evaluate_main(["--model", str(model_dir), "--data", str(tmp_path / "mine.jsonl"),
                          "--output-dir", str(tmp_path), "--device", "cpu", "--quiet"]) == 0
    assert "mine (2 documents)" in capsys.readouterr().out
    assert "mine" in json.loads((tmp_path / "mine_metrics.json").read_text())
    assert (tmp_path / "mine_predictions.conll").is_file()


def test_predicts_entity_lines_are_not_taken_for_documents(tmp_path):
    line = {"doc": "story", "sentence": 0, "start": 0, "end": 1, "type": "ORG", "text": "Acme",
            "start_char": 0, "end_char": 4}
    path = _write(tmp_path, "entities.jsonl", {"text": "Acme won."}, line)
    with pytest.raises(CorpusFormatError) as info:
        read_span_jsonl(path)
    assert str(info.value).startswith(f"{path}:2: expected a document with its spans, got an "
                                      "entity record of predict.py --format jsonl")
    # as predict.py input each line is still a text to tag
    assert [c.doc for c in read_chunks(path, ReadOptions())] == ["entities-1", "entities-2"]
