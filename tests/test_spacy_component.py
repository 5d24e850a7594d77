"""Tests of the spaCy pipeline component ``docgraph_ner``
(docgraph/integrations/spacy_component.py): its
entities are ``Tagger.predict``'s on the same tokens, ``nlp.pipe`` is one-by-one, a saved
pipeline tags the same, and a spaCy user's mistakes get clear errors."""

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

spacy = pytest.importorskip(
    "spacy", reason="spaCy is not installed (pip install -e '.[spacy]'; .ci/run installs it)")

from spacy.tokens import Doc, Span  # noqa: E402

from docgraph.config.tagging import DEFAULT_MAX_DOC_TOKENS  # noqa: E402
from docgraph.integrations.spacy_component import (  # noqa: E402
    DocgraphSpacyError,
    doc_graph,
    label_clash,
)
from docgraph.tagging.chunks import input_chunks  # noqa: E402
from docgraph.tagging.tagger import Tagger  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
UNSEEN = ["Zorblax", "Quenthorpe", "visited", "Vyrnwick", "on", "Blarsday", "."]


@pytest.fixture(scope="module")
def tagger(model_dir):
    return Tagger.load(model_dir)


def chunked_tagger(tagger: Tagger, max_tokens: int | None) -> Tagger:
    """``tagger`` cutting documents at ``max_tokens`` tokens (``None``: whole documents), as the
    component does."""
    return Tagger(tagger.model, tagger.vocabs, tagger.config, path=tagger.path,
                  max_doc_tokens=max_tokens or 0)


def pipeline(model_dir, sentencizer: bool = True, **config):
    nlp = spacy.blank("en")
    if sentencizer:
        nlp.add_pipe("sentencizer")
    nlp.add_pipe("docgraph_ner", config={"model": str(model_dir), "device": "cpu", **config})
    return nlp


def make_doc(nlp, sentences: list[list[str]]) -> Doc:
    """A Doc of exactly these tokens and sentences."""
    words = [w for s in sentences for w in s]
    starts = [k == 0 for s in sentences for k in range(len(s))]
    return Doc(nlp.vocab, words=words, sent_starts=starts or None)


def ents_by_sentence(doc: Doc, sentences: list[list[str]]) -> list[tuple[int, int, int, str]]:
    """``doc.ents`` as ``(sentence, start, end, type)`` of
    :class:`docgraph.tagging.tagger.Entity`."""
    where = [(s, k) for s, sent in enumerate(sentences) for k in range(len(sent))]
    out = []
    for ent in doc.ents:
        s, a = where[ent.start]
        assert where[ent.end - 1][0] == s, "an entity never crosses a sentence"
        out.append((s, a, a + len(ent), ent.label_))
    return out


def expected(tagger: Tagger, sentences: list[list[str]], **kwargs) -> list[tuple]:
    return [(e.sentence, e.start, e.end, e.type)
            for e in tagger.predict([sentences], **kwargs)[0]]


@pytest.fixture(scope="module")
def documents(sample_splits) -> dict[str, list[list[str]]]:
    """One-sentence, multi-sentence, empty and 3,000-token documents (token lists)."""
    multi = [list(s.tokens) for s in sample_splits["test"][0].sentences]
    long: list[list[str]] = []
    for doc in sample_splits["train"]:
        long += [list(s.tokens) for s in doc.sentences if len(s)]
        if sum(map(len, long)) >= 3000:
            break
    while sum(map(len, long[:-1])) >= 3000:
        long.pop()
    long[-1] = long[-1][:3000 - sum(map(len, long[:-1]))]
    return {"one-sentence": [UNSEEN + multi[2]], "multi-sentence": multi, "empty": [],
            "3000-token": long}


@pytest.mark.parametrize("name", ["one-sentence", "multi-sentence", "empty", "3000-token"])
def test_entities_equal_tagger_predict(model_dir, tagger, documents, name):
    sentences = documents[name]
    if name == "3000-token":
        assert sum(map(len, sentences)) == 3000
    nlp = pipeline(model_dir)
    doc = nlp(make_doc(nlp, sentences))
    # the sample model has no max_doc_tokens: the component cuts at predict.py's default
    assert tagger.config.graph.max_doc_tokens is None
    reference = chunked_tagger(tagger, DEFAULT_MAX_DOC_TOKENS)
    assert ents_by_sentence(doc, sentences) == expected(reference, sentences)
    assert doc._.docgraph_sentence_source == "doc"
    _, tags = reference.tag([sentences])
    assert [t._.docgraph_tag for t in doc] == [t for s in tags[0] for t in s]
    if name != "empty":
        assert all(t._.docgraph_uncertainty is not None for t in doc)
    if name in ("multi-sentence", "3000-token"):
        assert doc.ents, "a test without entities would prove nothing"
    # tagged whole (max_doc_tokens=0), a Doc is the Tagger's whole document
    whole = pipeline(model_dir, max_doc_tokens=0)
    assert ents_by_sentence(whole(make_doc(whole, sentences)), sentences) == \
        expected(chunked_tagger(tagger, None), sentences)


def test_entity_scores_are_those_of_tagger_predict(model_dir, tagger, documents):
    """``span._.score`` of every entity and the ``doc.spans`` group carry the scores that
    :meth:`Tagger.predict` gives the same entities."""
    sentences = documents["multi-sentence"]
    nlp = pipeline(model_dir)
    doc = nlp(make_doc(nlp, sentences))
    reference = chunked_tagger(tagger, DEFAULT_MAX_DOC_TOKENS).predict([sentences])[0]
    assert doc.ents and len(doc.ents) == len(reference)
    for ent, entity in zip(doc.ents, reference):
        assert ent._.score == pytest.approx(entity.score, abs=1e-12)
        assert 0.0 < ent._.score <= 1.0
    group = doc.spans["docgraph"]
    assert [(s.start, s.end, s.label_) for s in group] == \
        [(e.start, e.end, e.label_) for e in doc.ents]
    assert group.attrs["scores"] == [ent._.score for ent in doc.ents]
    assert Span(doc, 0, 1, label="X")._.score is None  # not one of ours


def test_long_documents_are_chunked_as_predict_does(model_dir, tagger, documents):
    sentences = documents["3000-token"]
    nlp = pipeline(model_dir, max_doc_tokens=700)
    doc = nlp(make_doc(nlp, sentences))
    assert ents_by_sentence(doc, sentences) == expected(chunked_tagger(tagger, 700), sentences)
    # no edge reaches across chunks
    spans = [list(range(a, b)) for a, b in doc._.docgraph["sentences"]]
    chunks = list(input_chunks([[str(i) for i in s] for s in spans], "doc", False, 700))
    chunk_of = {int(i): c for c, chunk in enumerate(chunks) for piece in chunk.pieces
                for i in piece.tokens}
    assert len(chunks) == 5 and doc._.docgraph_edges
    assert all(chunk_of[j] == chunk_of[i] for j, i, _ in doc._.docgraph_edges)


def test_tags_equal_predict_py_in_chunks_and_pieces(model_dir, tagger):
    """The component's tags are those of predict.py's stream (Tagger.tag_chunks) on the same
    documents, long sentences cut into pieces and documents into chunks alike."""
    from docgraph.data.conll import read_conll
    from docgraph.tagging.prediction_io import ReadOptions, chunk_document, read_chunks

    path = ROOT / "docgraph" / "data" / "sample" / "test.txt"
    limit = 20
    expected: dict[str, list[str]] = {}
    for chunk, tagging in tagger.tag_chunks(
            read_chunks(path, ReadOptions("conll", max_tokens=limit)), chunk_document,
            processes=1):
        expected.setdefault(chunk.doc, []).extend(t for piece in tagging.tags for t in piece)
    documents = read_conll(path)
    assert any(len(s) > limit for d in documents for s in d.sentences), "pieces exercised"
    nlp = pipeline(model_dir, max_doc_tokens=limit)
    docs = nlp.pipe(make_doc(nlp, [list(s.tokens) for s in d.sentences if len(s)])
                    for d in documents)
    got = {d.doc_id: [t._.docgraph_tag for t in doc] for d, doc in zip(documents, docs)}
    assert got == expected
    assert any(t != "O" for tags in got.values() for t in tags)


def test_raw_text_through_spacy_tokens_and_sentences(model_dir, tagger, sample_splits):
    text = "  ".join(" ".join(" ".join(s.tokens) for s in d.sentences)
                     for d in sample_splits["test"][:2])
    nlp = pipeline(model_dir)
    doc = nlp(text)
    assert any(t.is_space for t in doc), "the double spaces are whitespace tokens"
    sentences = [[t.text for t in sent if not t.is_space] for sent in doc.sents]
    sentences = [s for s in sentences if s]
    # whitespace tokens are skipped, the Doc's sentences kept
    assert [(e.text.split(), e.label_) for e in doc.ents] == [
        (s[a:b], t) for s_i, a, b, t in expected(tagger, sentences)
        for s in [sentences[s_i]]]
    assert doc.ents


def test_without_sentence_boundaries_docgraph_splits_and_says_so(model_dir, tagger, caplog):
    from docgraph.data.tokenize import split_sentences

    text = ("Tavistre beat Brennock 4-1 in the Veldanian League on Saturday. "
            "Mr. Orlan Vesk scored twice for Tavistre! Brennock lost again.")
    nlp = pipeline(model_dir, sentencizer=False)
    with caplog.at_level(logging.WARNING, logger="docgraph.integrations.spacy_component"):
        docs = [nlp(text), nlp(text)]
    said = [r for r in caplog.records if "no sentence boundaries" in r.getMessage()]
    assert len(said) == 1, "said once"
    doc = docs[0]
    assert doc._.docgraph_sentence_source == "docgraph"
    # docgraph's sentences, of spaCy's tokens ("4-1" is three)
    bounds = doc._.docgraph["sentences"]
    assert [doc[a:b].text for a, b in bounds] == split_sentences(text)
    sentences = [[doc[i].text for i in range(a, b)] for a, b in bounds]
    assert ents_by_sentence(doc, sentences) == expected(tagger, sentences)
    assert doc.ents


def assert_same_tagging(a: Doc, b: Doc) -> None:
    """The same entities, tags, pruning and graph; uncertainty and edge weights up to float32
    rounding (a batch of other lengths pads the sequences differently)."""
    assert [(e.start, e.end, e.label_) for e in a.ents] == \
        [(e.start, e.end, e.label_) for e in b.ents]
    for key in ("sentence_source", "sentences", "tags", "pruned"):
        assert a._.docgraph[key] == b._.docgraph[key], key
    assert a._.docgraph["uncertainty"] == pytest.approx(b._.docgraph["uncertainty"], abs=1e-5)
    assert [(j, i) for j, i, _ in a._.docgraph_edges] == [(j, i) for j, i, _ in b._.docgraph_edges]
    assert [w for _, _, w in a._.docgraph_edges] == \
        pytest.approx([w for _, _, w in b._.docgraph_edges], abs=1e-5)


def test_pipe_equals_one_by_one(model_dir, documents, sample_splits):
    nlp = pipeline(model_dir)
    texts = [" ".join(" ".join(s.tokens) for s in d.sentences) for d in sample_splits["dev"]]
    texts[3:3] = ["", "   ", " ".join(UNSEEN)]
    one = [nlp(t) for t in texts]
    assert sum(len(d.ents) for d in one) > 0
    for batch_size in (1, 4, 100):
        piped = list(nlp.pipe(texts, batch_size=batch_size))
        assert [d.text for d in piped] == texts
        for a, b in zip(one, piped):
            assert_same_tagging(a, b)
    # in spaCy's processes (forked from this one): the same again
    forked = list(nlp.pipe(texts, batch_size=4, n_process=2))
    assert [d.text for d in forked] == texts
    for a, b in zip(one, forked):
        assert_same_tagging(a, b)


def test_spacy_processes_forked_from_a_multithreaded_parent_do_not_hang(model_dir, tmp_path):
    # torch's OpenMP pool, once used by the parent, hangs a forked child that uses it: the
    # component drops to one thread in spaCy's processes
    code = (
        "import spacy, torch\n"
        "torch.set_num_threads(2)\n"
        "nlp = spacy.blank('en'); nlp.add_pipe('sentencizer')\n"
        f"nlp.add_pipe('docgraph_ner', config={{'model': {str(model_dir)!r}, 'device': 'cpu'}})\n"
        "texts = ['Tavistre beat Brennock 4-1 in the Veldanian League.'] * 6\n"
        "one = [[(e.start, e.end, e.label_) for e in nlp(t).ents] for t in texts]\n"
        "two = [[(e.start, e.end, e.label_) for e in d.ents]\n"
        "       for d in nlp.pipe(texts, batch_size=2, n_process=2)]\n"
        "print(one == two, len(two))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore")
    env.pop("OMP_NUM_THREADS", None)
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=180)
    except subprocess.TimeoutExpired:
        pytest.fail("nlp.pipe(n_process=2) hung")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "6"]


def test_saved_pipeline_tags_identically(model_dir, tmp_path, sample_splits):
    nlp = pipeline(model_dir, mc_seed=3)
    texts = [" ".join(" ".join(s.tokens) for s in d.sentences) for d in sample_splits["test"]]
    before = [(d._.docgraph, [(e.start, e.end, e.label_) for e in d.ents])
              for d in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "pipeline")
    state = json.loads((tmp_path / "pipeline" / "docgraph_ner" / "docgraph_ner.json")
                       .read_text())
    assert state["model"] == str(Path(model_dir).resolve())
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["sentencizer", "docgraph_ner"]
    assert loaded.get_pipe("docgraph_ner").mc_seed == 3
    after = [(d._.docgraph, [(e.start, e.end, e.label_) for e in d.ents])
             for d in loaded.pipe(texts)]
    assert after == before
    assert sum(len(ents) for _, ents in after) > 0
    restored = pipeline(model_dir, mc_seed=3).from_bytes(nlp.to_bytes())
    assert [(d._.docgraph, [(e.start, e.end, e.label_) for e in d.ents])
            for d in restored.pipe(texts)] == before


def test_a_saved_pipeline_loads_from_any_working_directory(model_dir, tmp_path, monkeypatch,
                                                           sample_splits):
    # config.cfg keeps the model as given ("runs/sample"): spacy.load from another working
    # directory failed, and a pipeline whose model directory was retrained tagged with the
    # new weights
    build = tmp_path / "build"
    shutil.copytree(model_dir, build / "runs" / "sample")
    monkeypatch.chdir(build)
    nlp = pipeline("runs/sample", mc_seed=3)
    texts = [" ".join(" ".join(s.tokens) for s in d.sentences) for d in sample_splits["test"]]

    def tagged(nlp):
        return [([(e.start, e.end, e.label_) for e in d.ents], d._.docgraph["tags"],
                 d._.docgraph["uncertainty"]) for d in nlp.pipe(texts)]

    before = tagged(nlp)
    nlp.to_disk(tmp_path / "pipeline")
    assert "runs/sample" in (tmp_path / "pipeline" / "config.cfg").read_text()
    shutil.rmtree(build / "runs")  # the directory the pipeline was built from is gone
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    loaded = spacy.load(tmp_path / "pipeline")
    copy = (tmp_path / "pipeline" / "docgraph_ner" / "model").resolve()
    assert loaded.get_pipe("docgraph_ner").model_path == copy
    assert tagged(loaded) == before
    assert sum(len(ents) for ents, _, _ in before) > 0
    loaded.to_disk(tmp_path / "again")  # saved again: whole again
    assert tagged(spacy.load(tmp_path / "again")) == before


def test_a_saved_pipeline_keeps_its_weights_when_the_directory_is_retrained(model_dir,
                                                                            tmp_path):
    import torch

    from docgraph.persistence.checkpoint import load_checkpoint, save_checkpoint

    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy)
    nlp = pipeline(copy)
    nlp.to_disk(tmp_path / "pipeline")
    saved = (tmp_path / "pipeline" / "docgraph_ner" / "model" / "model.pt").read_bytes()
    state = load_checkpoint(copy / "model.pt")
    name = next(iter(state["model"]))
    state["model"][name] = state["model"][name] + torch.ones_like(state["model"][name])
    save_checkpoint(copy / "model.pt", state)
    component = spacy.load(tmp_path / "pipeline").get_pipe("docgraph_ner")
    assert component.model_path == (tmp_path / "pipeline" / "docgraph_ner" / "model").resolve()
    assert (component.model_path / "model.pt").read_bytes() == saved
    loaded = component.tagger.model.state_dict()[name]
    assert torch.equal(loaded, nlp.get_pipe("docgraph_ner").tagger.model.state_dict()[name])


def test_existing_entities_are_kept_or_overwritten(model_dir, documents):
    sentences = documents["multi-sentence"]
    plain = pipeline(model_dir)
    ours = [(e.start, e.end, e.label_) for e in plain(make_doc(plain, sentences)).ents]
    first = ours[0]
    for overwrite in (False, True):
        nlp = pipeline(model_dir, overwrite_ents=overwrite)
        doc = make_doc(nlp, sentences)
        doc.ents = [Span(doc, first[0], first[1], label="CUSTOM")]
        got = [(e.start, e.end, e.label_) for e in nlp(doc).ents]
        if overwrite:
            assert got == ours
        else:
            assert got == [(first[0], first[1], "CUSTOM"), *ours[1:]]
        assert doc[first[0]]._.docgraph_tag == f"B-{first[2]}"  # our tag either way


def test_uncertainty_and_edges_are_the_models(model_dir, tagger, documents):
    sentences = documents["multi-sentence"]
    nlp = pipeline(model_dir)
    doc = nlp(make_doc(nlp, sentences))
    [G] = tagger.inspect([sentences])
    assert [t._.docgraph_uncertainty for t in doc] == pytest.approx(
        [G.nodes[i]["uncertainty"] for i in range(len(doc))], abs=1e-5)
    assert [t._.docgraph_pruned for t in doc] == [G.nodes[i]["pruned"] for i in range(len(doc))]
    edges = doc._.docgraph_edges
    assert edges and sorted((j, i) for j, i, _ in edges) == sorted(G.edges)
    assert [w for _, _, w in edges] == pytest.approx([G.edges[j, i]["r_ij"]
                                                      for j, i, _ in edges], abs=1e-5)
    for token in doc:
        assert [(n.i, w) for n, w in token._.docgraph_neighbours] == \
            [(j, w) for j, i, w in edges if i == token.i]
    assert any(token._.docgraph_neighbours for token in doc)
    # the Doc's graph is the one Tagger.to_html draws
    mine = doc_graph(doc)
    assert sorted(mine.edges) == sorted(G.edges)
    for node, attrs in mine.nodes(data=True):
        for key in ("word", "sentence", "position", "pred_tag", "pruned"):
            assert attrs[key] == G.nodes[node][key], (node, key)


def test_mc_seed_and_threshold_reach_the_model(model_dir, sample_splits):
    documents = [[list(s.tokens) for s in d.sentences if len(s)] for d in sample_splits["test"]]
    nlp = pipeline(model_dir)
    uncertainty = sorted(t._.docgraph_uncertainty for doc in nlp.pipe(
        make_doc(nlp, d) for d in documents) for t in doc)
    threshold = uncertainty[len(uncertainty) // 2]  # prunes about half: tags move with masks
    reference = Tagger.load(model_dir, threshold=threshold)

    def tags(seed: int) -> list[str]:
        return [t for doc in reference.tag(documents, mc_seed=seed)[1] for s in doc for t in s]

    seed = next((s for s in range(1, 20) if tags(s) != tags(0)), None)
    assert seed is not None, "no tagging seed in 1-19 changes a tag: the test would be vacuous"
    nlp = pipeline(model_dir, threshold=threshold, mc_seed=seed)
    docs = list(nlp.pipe(make_doc(nlp, d) for d in documents))
    assert [t._.docgraph_tag for doc in docs for t in doc] == tags(seed)
    pruned = [t._.docgraph_pruned for doc in docs for t in doc]
    assert 0.3 < sum(pruned) / len(pruned) < 0.7
    assert all(d._.docgraph["threshold"] == pytest.approx(threshold) for d in docs)


@pytest.mark.parametrize("text", ["", "  \n\t "])
def test_an_empty_doc_gets_no_entities_and_a_warning(model_dir, text, caplog):
    nlp = pipeline(model_dir, sentencizer=False)
    with caplog.at_level(logging.WARNING, logger="docgraph.integrations.spacy_component"):
        doc = nlp(text)
        nlp(text)
    assert doc.ents == ()
    assert doc._.docgraph["sentences"] == [] and doc._.docgraph_edges == []
    said = [r.getMessage() for r in caplog.records]
    assert len([m for m in said if "has no tokens" in m]) == 1
    assert not [m for m in said if "sentence boundaries" in m]


def test_displacy_and_the_html_view_take_tagged_docs(model_dir, documents):
    from spacy import displacy

    from docgraph.viz.html import to_html

    nlp = pipeline(model_dir)
    doc = nlp(make_doc(nlp, documents["multi-sentence"]))
    ent = doc.ents[0]
    markup = displacy.render(doc, style="ent", page=False)
    assert ent.text in markup and ent.label_ in markup
    page = to_html([doc, nlp(make_doc(nlp, documents["one-sentence"]))], title="spaCy")
    assert page.count('<section class="doc"') == 2
    assert f'data-threshold="{doc._.docgraph["threshold"]:g}"' in page
    assert f"{len(doc._.docgraph_edges)} edges" in page
    assert f"<sup>{ent.label_}</sup>" in page
    with pytest.raises(DocgraphSpacyError, match="not tagged by a docgraph_ner"):
        to_html([spacy.blank("en")("untagged")])
    with pytest.raises(TypeError, match="spaCy Docs tagged by the docgraph_ner"):
        to_html(["a string"])


def test_nlp_evaluate_scores_as_conlleval(model_dir, tagger, sample_splits):
    from spacy.training import Example

    from docgraph.data.tags import spans
    from docgraph.metrics import score

    nlp = pipeline(model_dir)
    examples, gold_tags, pred_tags = [], [], []
    for document in sample_splits["test"]:
        sentences = [list(s.tokens) for s in document.sentences if len(s)]
        reference = make_doc(nlp, sentences)
        tags = [s.tags for s in document.sentences if len(s)]
        offsets = [sum(map(len, sentences[:k])) for k in range(len(sentences))]
        reference.ents = [Span(reference, o + a, o + b, label=t)
                          for o, s_tags in zip(offsets, tags) for t, a, b in spans(s_tags)]
        examples.append(Example(make_doc(nlp, sentences), reference))
        gold_tags += tags
        pred_tags += tagger.tag([sentences])[1][0]
    scores = nlp.evaluate(examples)
    assert scores["ents_f"] * 100 == pytest.approx(score(gold_tags, pred_tags).overall.f1,
                                                   abs=1e-6)


def test_a_missing_or_foreign_model_directory_is_named(tmp_path, model_dir):
    nlp = pipeline("nowhere/model")  # a saved pipeline's from_disk would bring the model
    with pytest.raises(DocgraphSpacyError, match=r"nowhere/model: neither a model directory "
                                                 "nor a shipped model .*working directory"):
        nlp("Kestrel beat Carrow.")
    (tmp_path / "vocab.json").write_text("{}")
    with pytest.raises(DocgraphSpacyError, match=r"not a model directory written by train.py "
                                                 r"\(no config.json, model.pt"):
        pipeline(tmp_path)
    with pytest.raises(DocgraphSpacyError, match="is a file"):
        pipeline(tmp_path / "vocab.json")
    broken = tmp_path / "broken"
    shutil.copytree(model_dir, broken)
    (broken / "config.json").write_text("not json")
    with pytest.raises(DocgraphSpacyError, match="cannot load .*broken"):
        pipeline(broken)
    for key, value in (("batch_tokens", 0), ("mc_seed", -1), ("max_doc_tokens", -5)):
        with pytest.raises(DocgraphSpacyError, match=f"{key} must be >="):
            pipeline(model_dir, **{key: value})


def test_labels_that_clash_with_an_ner_component(model_dir):
    assert label_clash(["LOC", "MISC", "ORG", "PER"], ["PERSON", "ORG", "GPE", "LOC"]) == \
        ["GPE", "MISC", "PER", "PERSON"]
    assert label_clash(["ORG", "PER"], ["ORG", "PER", "LOC"]) == []  # nested
    assert label_clash(["ORG", "PER"], ["DRUG", "DOSE"]) == []  # other kinds of entities
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("ner")
    for label in ("PERSON", "ORG", "GPE"):
        ner.add_label(label)
    with pytest.raises(DocgraphSpacyError, match=r"clash with those of the pipeline's 'ner' "
                                                 r"component .*overwrite_ents"):
        nlp.add_pipe("docgraph_ner", config={"model": str(model_dir), "device": "cpu"})
    nlp.add_pipe("docgraph_ner", config={"model": str(model_dir), "device": "cpu",
                                         "overwrite_ents": True})
    other = spacy.blank("en")
    other.add_pipe("ner").add_label("DRUG")
    other.add_pipe("docgraph_ner", config={"model": str(model_dir), "device": "cpu"})


def test_the_factory_is_a_spacy_entry_point(model_dir, tmp_path):
    import importlib.metadata

    text = (ROOT / "pyproject.toml").read_text()
    assert ('[project.entry-points.spacy_factories]\n'
            'docgraph_ner = "docgraph.integrations.spacy_component:make_docgraph_ner"') in text
    assert 'spacy = ["spacy>=3.8,<3.9"]' in text
    found = [e for e in importlib.metadata.entry_points(group="spacy_factories")
             if e.name == "docgraph_ner"]
    if not found:
        pytest.skip("the installed docgraph predates the entry point: pip install -e '.[spacy]'")
    # a fresh process that never imports docgraph itself finds the component
    code = ("import spacy, sys; nlp = spacy.blank('en'); "
            f"nlp.add_pipe('docgraph_ner', config={{'model': {str(model_dir)!r}, "
            "'device': 'cpu'}); print([e.label_ for e in nlp('Tavistre beat Brennock .').ents]"
            " is not None, 'docgraph' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OMP_NUM_THREADS"] = "1"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


def test_the_component_tags_in_the_precision_it_is_given(model_dir):
    nlp = pipeline(model_dir, precision="bf16")
    assert nlp.get_pipe("docgraph_ner").tagger.model.config.precision == "bf16"
    assert nlp.get_pipe("docgraph_ner").tagger.overrides.precision == "bf16"
    assert pipeline(model_dir, precision="fp32").get_pipe("docgraph_ner").tagger.model.config \
        .precision == "fp32"
    with pytest.raises(DocgraphSpacyError, match="precision must be one of auto, fp32, bf16"):
        pipeline(model_dir, precision="fp16")


def test_consistency_reaches_the_tagger(model_dir, sample_splits):
    """``consistency`` in the component's config tags as a tagger loaded with it does."""
    documents = [[list(s.tokens) for s in d.sentences if len(s)] for d in sample_splits["test"]]
    nlp = pipeline(model_dir, consistency=True)
    assert nlp.get_pipe("docgraph_ner").tagger.consistency is not None
    docs = list(nlp.pipe(make_doc(nlp, d) for d in documents))
    expected = Tagger.load(model_dir, consistency=True).tag(documents)[1]
    assert [t._.docgraph_tag for doc in docs for t in doc] == [
        t for doc in expected for s in doc for t in s]
