"""Tests of the one tagging core, :meth:`docgraph.tagging.tagger.Tagger.pipe`, and of the one
serialiser of its entities, :func:`docgraph.tagging.entity_records`."""

import io
import itertools
import json
import subprocess
import sys

import pytest
from conftest import reference_tags

from docgraph.data.document import make_document
from docgraph.data.tags import spans
from docgraph.tagging import entity_records
from docgraph.tagging.prediction_io import ReadOptions, write_predictions
from docgraph.tagging.tagger import Tagger


@pytest.fixture(scope="module")
def tagger(model_dir):
    return Tagger.load(model_dir)


def _text(doc) -> str:
    return "\n".join(" ".join(s.tokens) for s in doc.sentences)


def _inputs(sample_splits):
    """Raw text, token lists and Documents, an empty one among them."""
    docs = sample_splits["test"][:4]
    return [_text(docs[0]), [list(s.tokens) for s in docs[1].sentences], docs[2], "",
            _text(docs[3])]


def test_pipe_gives_the_tags_of_the_plain_loop(tagger, model_dir, sample_splits):
    """The tags of every kind of input are those of the plain one-process loop over the same
    documents, and the entities are the spans of those tags."""
    inputs = _inputs(sample_splits)
    tagged = list(tagger.pipe(inputs))
    assert [t.doc for t in tagged] == ["doc-0", "doc-1", inputs[2].doc_id, "doc-3", "doc-4"]
    nonempty = [t for t in tagged if t.sentences]
    documents = [make_document(t.doc, [(s.tokens, ["O"] * len(s.tokens)) for s in t.sentences])
                 for t in nonempty]
    assert [t.tags for t in nonempty] == reference_tags(documents, model_dir)
    assert tagged[3].sentences == () and tagged[3].entities == ()
    for t in tagged:
        found = [(s.index, kind, a, b) for s in t.sentences for kind, a, b in spans(s.tags)]
        assert [(e.sentence, e.type, e.start, e.end) for e in t.entities] == found
        assert all(e.score is None for e in t.entities)  # not asked for


def test_pipe_with_scores_is_tag_documents(tagger, sample_splits):
    """Scores change no tag, and the conveniences are the core's output."""
    inputs = _inputs(sample_splits)
    plain = list(tagger.pipe(inputs))
    scored = list(tagger.pipe(inputs, scores=True))
    assert [t.tags for t in scored] == [t.tags for t in plain]
    assert all(0.0 < e.score <= 1.0 for t in scored for e in t.entities)
    assert list(tagger.tag_documents(inputs)) == scored
    assert tagger.predict(inputs) == [list(t.entities) for t in scored]
    assert tagger.tag(inputs)[1] == [t.tags for t in plain]


def test_pipe_keeps_the_input_order_in_two_processes(tagger, sample_splits):
    """Documents of very different lengths come out in input order, the same in two
    processes as in one, with their ids."""
    docs = sample_splits["test"]
    inputs = [d if k % 2 else _text(d) for k, d in enumerate(docs)] + ["Veldania won ."]
    ids = [f"id-{k}" for k in range(len(inputs))]
    one = list(tagger.pipe(inputs, scores=True, doc_ids=ids))
    two = list(tagger.pipe(inputs, scores=True, doc_ids=ids, processes=2))
    expected = [d.doc_id if k % 2 else f"id-{k}" for k, d in enumerate(docs)] + [ids[-1]]
    assert [t.doc for t in one] == expected
    assert [t.tags for t in two] == [t.tags for t in one]
    assert [e.score for t in two for e in t.entities] == pytest.approx(
        [e.score for t in one for e in t.entities], rel=1e-5)


def test_label_consistency_is_the_step_applied_to_the_scored_tagging(model_dir, sample_splits):
    """A tagger loaded with ``consistency`` gives, in one process and in two, the tags of the
    consistency step applied to each document's scored tagging, and scores only when asked."""
    from docgraph.config.tagging import LABEL_CONSISTENCY
    from docgraph.tagging.consistency import consistent_tagging
    from docgraph.tagging.result import Tagging

    inputs = _inputs(sample_splits) + [sample_splits["test"][k] for k in range(4, 12)]
    plain = Tagger.load(model_dir)
    consistent = Tagger.load(model_dir, consistency=True)
    assert consistent.consistency == LABEL_CONSISTENCY and plain.consistency is None
    expected = []
    for t in plain.pipe(inputs, scores=True):
        by_span = {(e.sentence, e.start, e.end): e.score for e in t.entities}
        tagging = Tagging(t.tags, [[by_span[(s.index, a, b)] for _, a, b in spans(s.tags)]
                                   for s in t.sentences])
        expected.append(consistent_tagging([s.tokens for s in t.sentences], tagging,
                                           LABEL_CONSISTENCY.min_votes,
                                           LABEL_CONSISTENCY.relabel_below).tags)
    one = list(consistent.pipe(inputs))
    assert [t.tags for t in one] == expected
    assert all(e.score is None for t in one for e in t.entities)
    two = list(consistent.pipe(inputs, scores=True, processes=2))
    assert [t.tags for t in two] == expected
    assert all(0.0 < e.score <= 1.0 for t in two for e in t.entities)


def test_pipe_reads_a_generator_lazily(tagger, sample_splits):
    """The first document comes out of an endless input: the core reads a group ahead, not
    the whole input."""
    text = _text(sample_splits["test"][0])
    read = itertools.count()

    def endless():
        while True:
            next(read)
            yield text

    stream = tagger.pipe(endless())
    first = next(stream)
    stream.close()
    assert first.tags == next(tagger.pipe([text])).tags
    consumed = next(read)
    assert 1 <= consumed <= 2 * 20_000 // len(text.split()) + 2


def test_pipe_batch_tokens_changes_no_tag(tagger, sample_splits):
    inputs = _inputs(sample_splits)
    assert [t.tags for t in tagger.pipe(inputs, batch_tokens=7)] == \
        [t.tags for t in tagger.pipe(inputs)]
    assert tagger.batch_tokens != 7  # the tagger is left as it was
    with pytest.raises(ValueError, match="batch_tokens must be >= 1"):
        tagger.pipe(inputs, batch_tokens=0)
    with pytest.raises(ValueError, match="min_score needs scores=True"):
        tagger.pipe(inputs, min_score=0.5)


def test_pipe_inspect_adds_what_the_pass_saw(tagger, sample_splits):
    inputs = _inputs(sample_splits)
    seen = list(tagger.pipe(inputs, inspect=True))
    assert [t.tags for t in seen] == [t.tags for t in tagger.pipe(inputs)]
    for t in seen:
        for s in t.sentences:
            assert len(s.uncertainty) == len(s.pruned) == len(s.tokens)
    assert any(t.edges for t in seen)


def test_entity_records_are_the_lines_predict_writes(tagger, sample_splits, tmp_path):
    """predict.py's JSON lines of a raw-text file are entity_records of the tagged
    document, line for line; the filters keep what they say."""
    text = "\n\n".join(_text(d) for d in sample_splits["test"][:3])
    path = tmp_path / "news.txt"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    write_predictions(tagger, [path], ReadOptions(max_tokens=tagger.max_doc_tokens), "jsonl",
                      out, processes=1, scores=True)
    tagged = next(tagger.pipe([text], scores=True, doc_ids=["news"]))
    records = entity_records(tagged)
    assert records and [json.dumps(r) for r in records] == out.getvalue().splitlines()
    for r in records:
        assert r["text"] == text[r["start_char"]:r["end_char"]]
    cut = sorted(r["score"] for r in records)[len(records) // 2]
    assert entity_records(tagged, min_score=cut) == [r for r in records if r["score"] >= cut]
    kind = records[0]["type"]
    assert entity_records(tagged, types={kind}) == [r for r in records if r["type"] == kind]
    assert entity_records(tagged, scores=False) == [
        {k: v for k, v in r.items() if k != "score"} for r in records]
    unscored = next(tagger.pipe([text], doc_ids=["news"]))
    assert entity_records(unscored) == entity_records(tagged, scores=False)
    with pytest.raises(ValueError, match="min_score"):
        entity_records(unscored, min_score=0.5)


def test_the_raw_text_path_does_not_load_the_file_readers():
    """Reading files is an adapter in front of the core: tagging raw text from Python does
    not load the module of predict.py's input and output formats."""
    code = ("import sys; import docgraph.tagging.tagger; "
            "print('docgraph.tagging.prediction_io' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout.strip() == "False"
