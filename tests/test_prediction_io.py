"""``predict.py`` as a program reads it: character offsets into the original text, documents,
chunks and pieces of long input, streaming, and outputs checked before any work."""

from __future__ import annotations

import io
import json
from itertools import pairwise
from pathlib import Path

import pytest
from conftest import run_script

from docgraph.cli import predict_main
from docgraph.cli.arguments import UsageError
from docgraph.data.chunking import pack_greedy
from docgraph.data.document import make_document
from docgraph.data.tokenize import text_to_sentences
from docgraph.graph import split_long_documents
from docgraph.runtime.atomic import check_output
from docgraph.tagging.pipeline import stream_tags
from docgraph.tagging.prediction_io import (
    Chunk,
    ProgressReport,
    ReadOptions,
    chunk_document,
    format_chunk,
    read_chunks,
    read_documents,
)
from docgraph.tagging.tagger import Tagger

# CRLF and lone LF line breaks, tabs, a no-break space, a BOM-free UTF-8 mix of scripts:
# flags, an emoji ZWJ sequence, a skin tone, a keycap, a combining accent, Japanese, Chinese.
MIXED = ("Kalvenia beat\tOstavia 2-1 in Veldania.\r\nFans waved 🇩🇪 and 🇫🇷 flags "
         "\U0001f468\u200d\U0001f469\u200d\U0001f467 👍🏽 1️⃣!\r\n\r\n"
         "Kestrel\u00a0signed Piet Rauch , cafe\u0301 owner.\n\n"
         "東京は日本の首都です。北京很大！Kalvenia won again .\r\n")


def _records(capsys) -> list[dict]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _chunks(text: str, tmp_path: Path, name: str = "doc.txt", **options) -> list[Chunk]:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return list(read_chunks(path, ReadOptions(**options)))


# ------------------------------------------------------------------------ reading, no model
def test_every_token_is_its_span_of_the_original_text(tmp_path):
    [chunk] = _chunks(MIXED, tmp_path)
    spans = [span for piece in chunk.pieces for span in piece.spans]
    tokens = [token for piece in chunk.pieces for token in piece.tokens]
    assert [MIXED[s:e] for s, e in spans] == tokens
    assert all(e <= s for (_, e), (s, _) in pairwise(spans))
    assert "🇩🇪" in tokens and "\U0001f468\u200d\U0001f469\u200d\U0001f467" in tokens
    assert "👍🏽" in tokens and "1️⃣" in tokens and "cafe\u0301" in tokens
    japanese = tokens[tokens.index("東"):tokens.index("。") + 1]
    assert japanese == ["東", "京", "は", "日", "本", "の", "首", "都", "です", "。"]
    # everything between two tokens is whitespace: the text is covered
    assert not "".join(MIXED[e:s] for (_, e), (s, _) in pairwise(spans)).strip()


def test_a_bom_is_not_counted_and_crlf_is_two_characters(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffKalvenia won .\r\nOstavia lost .".encode())
    [chunk] = read_chunks(path, ReadOptions())
    with path.open(encoding="utf-8-sig", newline="") as f:  # how the docs say to read it
        assert f.read() == chunk.text
    # universal newlines ("\r\n" read as "\n") would shift every offset after a line break
    assert path.read_text(encoding="utf-8-sig") != chunk.text
    assert [p.spans for p in chunk.pieces] == [((0, 8), (9, 12), (13, 14)),
                                               ((16, 23), (24, 28), (29, 30))]


def test_tokenized_input_keeps_offsets(tmp_path):
    text = "Kalvenia  beat Ostavia .\r\n\r\n\tVeldania won .\n"
    [chunk] = _chunks(text, tmp_path, tokenized=True)
    assert [p.tokens for p in chunk.pieces] == [("Kalvenia", "beat", "Ostavia", "."),
                                                ("Veldania", "won", ".")]
    assert all(text[s:e] == t for p in chunk.pieces for t, (s, e) in zip(p.tokens, p.spans))


def test_conll_input_has_no_offsets(tmp_path):
    chunks = _chunks("-DOCSTART- O\n\nKalvenia B-LOC\nwon O\n\n-DOCSTART- O\n\nx O\n\n",
                     tmp_path, name="in.conll")
    assert [c.doc for c in chunks] == ["in-0", "in-1"]
    assert all(c.text is None and p.spans is None for c in chunks for p in c.pieces)


@pytest.mark.parametrize(("documents", "expected"), [
    ("file", {"doc": 7}),
    ("paragraphs", {"doc-0": 2, "doc-1": 1, "doc-2": 4}),
    ("lines", {"doc-0": 2, "doc-1": 1, "doc-2": 3, "doc-3": 1}),
])
def test_raw_text_is_split_into_documents(tmp_path, documents, expected):
    text = "One here. Two here.\r\n\r\nThree here.\n \n\nFour. Five. Six.\nSeven."
    chunks = _chunks(text, tmp_path, documents=documents)
    assert {c.doc: len(c.pieces) for c in chunks} == expected
    assert all(c.first for c in chunks)  # one chunk per document
    assert all(text[s:e] == t for c in chunks for p in c.pieces
               for t, (s, e) in zip(p.tokens, p.spans))


def test_long_documents_are_chunked_as_training_chunks_them(sample_splits, tmp_path):
    doc = sample_splits["test"][0]
    text = "\n\n".join(" ".join(s.tokens) for s in doc.sentences)  # a sentence per paragraph
    chunks = _chunks(text, tmp_path, max_tokens=60)
    assert all(0 < c.num_tokens <= 60 for c in chunks) and len(chunks) > 2
    assert [c.first for c in chunks] == [True] + [False] * (len(chunks) - 1)
    training = split_long_documents([doc], 60)
    assert [[p.tokens for p in c.pieces] for c in chunks] == \
        [[s.tokens for s in d.sentences] for d in training]
    # sentence numbers run on over the chunks
    assert [p.sentence for c in chunks for p in c.pieces] == list(range(len(doc.sentences)))


def test_an_over_long_sentence_is_tagged_in_pieces(tmp_path):
    words = [f"w{i}" for i in range(25)]
    chunks = _chunks(" ".join(words) + "\n\nShort one .", tmp_path, max_tokens=10)
    pieces = [p for c in chunks for p in c.pieces]
    assert [(p.sentence, p.first, len(p), p.last) for p in pieces] == [
        (0, 0, 10, False), (0, 10, 10, False), (0, 20, 5, True), (1, 0, 3, True)]
    assert [t for p in pieces[:3] for t in p.tokens] == words
    assert [c.num_tokens for c in chunks] == [10, 10, 8]


def test_packed_pieces_never_pass_the_limit(tmp_path):
    chunks = _chunks("A b c. D e. F g h i. J.", tmp_path, max_tokens=4)
    assert [[p.tokens for p in c.pieces] for c in chunks] == [
        [("A", "b", "c", ".")], [("D", "e", ".")], [("F", "g", "h", "i")], [(".",), ("J", ".")]]
    assert list(pack_greedy([], 4)) == []


def test_output_joins_pieces_back_into_sentences(tmp_path):
    chunks = _chunks("a b c d e f\n\ng h .", tmp_path, max_tokens=4)
    tags = [[["O"] * len(p) for p in c.pieces] for c in chunks]
    tags[0][0][1:3] = ["B-LOC", "I-LOC"]
    conll = "".join(format_chunk("conll", c, t) for c, t in zip(chunks, tags))
    assert conll == ("-DOCSTART- O\n\na O\nb B-LOC\nc I-LOC\nd O\ne O\nf O\n\n"
                     "g O\nh O\n. O\n\n")
    tokens = [json.loads(line) for c, t in zip(chunks, tags)
              for line in format_chunk("jsonl-tokens", c, t).splitlines()]
    assert [(r["sentence"], r["token"], r["text"], r["start_char"]) for r in tokens][3:7] == [
        (0, 3, "d", 6), (0, 4, "e", 8), (0, 5, "f", 10), (1, 0, "g", 13)]
    [entity] = [json.loads(line) for c, t in zip(chunks, tags)
                for line in format_chunk("jsonl", c, t).splitlines()]
    assert entity == {"doc": "doc", "sentence": 0, "start": 1, "end": 3, "type": "LOC",
                      "text": "b c", "start_char": 2, "end_char": 5}


def test_an_empty_file_is_one_empty_document(tmp_path, caplog):
    [chunk] = _chunks(" \r\n\r\n\t", tmp_path)
    assert chunk.pieces == () and chunk.first
    assert caplog.messages == [f"{tmp_path / 'doc.txt'}: no tokens, nothing to tag"]
    assert _chunks("", tmp_path, documents="paragraphs") == []
    assert format_chunk("conll", chunk, []) == "-DOCSTART- O\n\n"
    assert format_chunk("jsonl", chunk, []) == ""


def test_check_output(tmp_path):
    with pytest.raises(UsageError, match=r"is a directory; expected a file to write, e\.g\. "):
        check_output(str(tmp_path))
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="is not a directory"):
        check_output(str(tmp_path / "file" / "out.jsonl"))
    check_output(str(tmp_path / "new" / "dirs" / "out.jsonl"))  # created when written
    check_output(str(tmp_path / "file"))  # an existing file is replaced
    check_output(None)


def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path):
    text = "Kestrel won. " * 300
    chunks = _chunks(text, tmp_path, max_tokens=300)
    lines, silent = io.StringIO(), io.StringIO()
    report = ProgressReport([tmp_path / "doc.txt"], tty=False, interval=0, stream=lines)
    quiet = ProgressReport([tmp_path / "doc.txt"], enabled=False, tty=False, interval=0,
                           stream=silent)
    for chunk in chunks:
        report.update(chunk)
        quiet.update(chunk)
    printed = lines.getvalue().splitlines()
    assert len(printed) == len(chunks) == 3 and silent.getvalue() == ""
    assert printed[0].startswith("predict: 0.0 of 0.0 MB (33%), 300 tokens, ")
    assert printed[-1].startswith("predict: 0.0 of 0.0 MB (100%), 900 tokens, ")
    assert report.tokens == 900 and report.total == len(text)
    assert report.done == len(text) - 1  # up to the last token: the final space is left


# ---------------------------------------------------------------------------- with a model
def test_predict_offsets_of_entities_and_tokens(model_dir, tmp_path, capsys):
    path = tmp_path / "mixed.txt"
    path.write_bytes(MIXED.encode())
    argv = ["--model", str(model_dir), str(path), "--device", "cpu"]
    assert predict_main(argv) == 0
    entities = _records(capsys)
    assert predict_main([*argv, "--format", "jsonl-tokens"]) == 0
    tokens = _records(capsys)
    assert entities, "the sample model finds the sample corpus' names"
    assert len(tokens) == sum(c.num_tokens for c in _chunks(MIXED, tmp_path))
    for record in [*entities, *tokens]:
        assert MIXED[record["start_char"]:record["end_char"]] == record["text"]
    by_position = {(t["sentence"], t["token"]): t for t in tokens}
    for e in entities:
        first, last = by_position[e["sentence"], e["start"]], by_position[e["sentence"],
                                                                             e["end"] - 1]
        assert (first["start_char"], last["end_char"]) == (e["start_char"], e["end_char"])
        assert first["tag"][2:] == e["type"]
    assert {t["text"] for t in tokens} >= {"🇩🇪", "🇫🇷", "東", "です", "cafe\u0301"}


def test_chunked_predictions_are_the_tags_of_the_chunks(model_dir, sample_splits, tmp_path,
                                                         capsys):
    docs = sample_splits["test"][:2]
    text = "\r\n\r\n".join(" ".join(s.tokens) for d in docs for s in d.sentences)
    (tmp_path / "two.txt").write_text(text, encoding="utf-8")
    assert predict_main(["--model", str(model_dir), str(tmp_path / "two.txt"), "--format",
                         "jsonl-tokens", "--max-doc-tokens", "50", "--device", "cpu"]) == 0
    tokens = _records(capsys)
    joined = make_document("two", [(s, ["O"] * len(s)) for s in text_to_sentences(text)])
    expected = Tagger.load(model_dir).tag(split_long_documents([joined], 50))[1]
    assert [t["tag"] for t in tokens] == [t for d in expected for s in d for t in s]
    assert [t["text"] for t in tokens] == joined.tokens


def test_streaming_holds_one_group_at_a_time(model_dir, sample_splits, tmp_path):
    text = "\n\n".join(" ".join(s.tokens) for d in sample_splits["test"] for s in d.sentences)
    (tmp_path / "all.txt").write_text(text, encoding="utf-8")
    pulled = []

    def chunks():
        for chunk in read_chunks(tmp_path / "all.txt", ReadOptions(max_tokens=100)):
            pulled.append(chunk)
            yield chunk

    stream = stream_tags(chunks(), chunk_document, Tagger.load(model_dir), processes=1,
                         group_tokens=300)
    first, _ = next(stream)
    assert first is pulled[0] and sum(c.num_tokens for c in pulled) < 300 + 100
    assert len(pulled) < 10 and len(list(stream)) + 1 == len(list(
        read_chunks(tmp_path / "all.txt", ReadOptions(max_tokens=100))))


def test_a_pool_of_processes_tags_as_one_process(model_dir, sample_splits, tmp_path):
    text = "\n\n".join(" ".join(s.tokens) for d in sample_splits["test"] for s in d.sentences)
    (tmp_path / "all.txt").write_text(text, encoding="utf-8")
    tagger = Tagger.load(model_dir)

    def tags(processes):
        chunks = read_chunks(tmp_path / "all.txt", ReadOptions(max_tokens=150))
        return [(c.doc, c.pieces, t) for c, t in stream_tags(chunks, chunk_document, tagger,
                                                              processes, group_tokens=400)]

    one = tags(1)
    assert len(one) > 8  # several groups in flight per process
    assert tags(2) == one


def test_output_that_is_a_directory_fails_before_the_model_loads(model_dir, tmp_path, capsys,
                                                                 monkeypatch):
    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded before the output was checked")

    monkeypatch.setattr(Tagger, "load", no_load)
    (tmp_path / "in.txt").write_text("Kalvenia won .")
    with pytest.raises(SystemExit) as info:
        predict_main(["--model", str(model_dir), str(tmp_path / "in.txt"), "--output",
                      str(tmp_path)])
    assert info.value.code == 2
    assert capsys.readouterr().err.strip() == (
        f"error: --output {tmp_path}: is a directory; expected a file to write, e.g. "
        f"{tmp_path / 'predictions.jsonl'}")


def test_output_that_is_a_directory_through_the_script(model_dir, tmp_path):
    (tmp_path / "in.txt").write_text("Kalvenia won .")
    res = run_script("predict", "--model", model_dir, tmp_path / "in.txt", "--output", tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines() == [
        f"error: --output {tmp_path}: is a directory; expected a file to write, e.g. "
        f"{tmp_path / 'predictions.jsonl'}"]


def test_bad_max_doc_tokens_names_the_flag(model_dir, tmp_path, capsys):
    with pytest.raises(SystemExit):
        predict_main(["--model", str(model_dir), "x.txt", "--max-doc-tokens", "0"])
    assert "--max-doc-tokens: expected an integer >= 1, got '0'" in capsys.readouterr().err


@pytest.mark.parametrize("documents", ["file", "paragraphs", "lines"])
@pytest.mark.parametrize("tokenized", [False, True])
def test_read_documents_are_the_chunks_before_they_are_cut(tmp_path, documents, tokenized):
    """``predict.py --format html`` reads the documents the streamed formats tag: the same
    ids, sentences and tokens, only not cut to size."""
    path = tmp_path / "news.txt"
    path.write_text("Kalvenia won . Its coach Ashdown smiled .\nAshdown left .\n\n"
                    "  \nFenwick met Ashdown in Kalvenia .\n", encoding="utf-8")
    options = ReadOptions(documents=documents, tokenized=tokenized, max_tokens=3)
    whole = read_documents(path, options)
    chunks = list(read_chunks(path, options))
    assert [d.doc_id for d in whole] == list(dict.fromkeys(c.doc for c in chunks))
    for document in whole:
        pieces = [p for c in chunks if c.doc == document.doc_id for p in c.pieces]
        assert [list(s.tokens) for s in document.sentences] == [
            [t for p in pieces if p.sentence == i for t in p.tokens]
            for i in range(len(document.sentences))]
        assert all(t == "O" for s in document.sentences for t in s.tags)
    expected = {"file": 1, "paragraphs": 2, "lines": 3}[documents]
    assert len(whole) == expected


def test_read_documents_keeps_the_gold_tags_of_conll(tmp_path):
    path = tmp_path / "gold.conll"
    path.write_text("-DOCSTART- O\n\nAshdown B-PER\nwon O\n\n-DOCSTART- O\n\nKalvenia B-LOC\n",
                    encoding="utf-8")
    documents = read_documents(path, ReadOptions())
    assert [[list(s.tags) for s in d.sentences] for d in documents] == [[["B-PER", "O"]],
                                                                   [["B-LOC"]]]


#: Every line break of str.splitlines().
SPLITLINES_BREAKS = ("\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
                     "\u2029")


@pytest.mark.parametrize("brk", SPLITLINES_BREAKS, ids=[f"U+{ord(b[0]):04X}{len(b)}"
                                                        for b in SPLITLINES_BREAKS])
def test_tokenized_lines_are_those_of_str_splitlines(tmp_path, brk):
    """Class: line splitting of ``--tokenized``: the stream of ``predict.py`` and
    ``Tagger.tag(tokenized=True)`` (:func:`~docgraph.tagging.tagger.as_document`) cut a text
    into the lines of :meth:`str.splitlines`, on every separator."""
    from docgraph.tagging.prediction_io import ReadOptions, read_chunks
    from docgraph.tagging.tagger import as_document

    text = f"Ada met Bob{brk}in Paris .{brk}{brk}Then left"
    expected = [line.split() for line in text.splitlines() if line.split()]
    path = tmp_path / "in.txt"
    path.write_bytes(text.encode("utf-8"))
    chunks = list(read_chunks(path, ReadOptions(tokenized=True)))
    streamed = [list(p.tokens) for c in chunks for p in c.pieces]
    assert streamed == expected
    assert [list(s.tokens) for s in as_document(text, "d", tokenized=True).sentences] == expected


def test_scores_and_min_score_through_the_script(model_dir, sample_splits, tmp_path, capsys):
    """--scores adds a score to every JSON line and changes nothing else; --min-score keeps
    the entities scored at least P (in JSON lines and as O tags in CoNLL output); a pool of
    processes gives the scores of one."""
    text = "\n\n".join(" ".join(s.tokens) for d in sample_splits["test"][:4] for s in d.sentences)
    path = tmp_path / "in.txt"
    path.write_text(text, encoding="utf-8")
    argv = ["--model", str(model_dir), str(path), "--device", "cpu", "--processes", "1"]
    assert predict_main(argv) == 0
    plain = _records(capsys)
    assert predict_main([*argv, "--scores"]) == 0
    scored = _records(capsys)
    assert len(plain) > 2 and [{k: v for k, v in r.items() if k != "score"}
                               for r in scored] == plain
    assert all(0.0 < r["score"] <= 1.0 for r in scored)
    cut = sorted(r["score"] for r in scored)[len(scored) // 2]
    assert predict_main([*argv, "--min-score", str(cut)]) == 0
    assert _records(capsys) == [r for r in scored if r["score"] >= cut]
    assert predict_main([*argv, "--min-score", str(cut), "--format", "conll"]) == 0
    tags = [line.split()[-1] for line in capsys.readouterr().out.splitlines()
            if line.strip() and not line.startswith("-DOCSTART-")]
    assert sum(t.startswith("B-") for t in tags) == sum(r["score"] >= cut for r in scored)
    chunks = list(read_chunks(path, ReadOptions(max_tokens=60)))
    tagger = Tagger.load(model_dir)
    one = [t for _, t in stream_tags(chunks, chunk_document, tagger, 1, scores=True,
                                     group_tokens=200)]
    two = [t for _, t in stream_tags(chunks, chunk_document, tagger, 2, scores=True,
                                     group_tokens=200)]
    assert [t.tags for t in two] == [t.tags for t in one]
    assert [x for t in two for s in t.scores for x in s] == pytest.approx(
        [x for t in one for s in t.scores for x in s], rel=1e-5)


def test_min_score_out_of_range_is_refused(model_dir, tmp_path, capsys):
    (tmp_path / "x.txt").write_text("Kestrel won .", encoding="utf-8")
    with pytest.raises(SystemExit):
        predict_main(["--model", str(model_dir), str(tmp_path / "x.txt"), "--min-score", "1.5"])
    assert "--min-score" in capsys.readouterr().err
