"""A model worker's pass through the tagging core (in this process, the shipped
``conll03``): documents of different requests in one pass, each as it would be alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docgraph.serve.batcher import PassDocument
from docgraph.serve.worker import model_card, tag_pass
from docgraph.tagging import entity_records

TEXTS = ["EU rejects German call to boycott British lamb .",
         "Peter Blackburn met Werner Zwingmann in Brussels on Monday .",
         "Germany 's representative to the European Union 's veterinary committee said ."]


@pytest.fixture(scope="module")
def tagger():
    from docgraph.tagging.tagger import Tagger

    return Tagger.load("conll03", threads=1)


def test_a_mixed_pass_gives_each_document_its_lone_records(tagger):
    wanted = [PassDocument("a", TEXTS[0]),
              PassDocument("b", TEXTS[1], scores=True),
              PassDocument("c", [t.split() for t in TEXTS[1:]], min_score=0.9),
              PassDocument("d", TEXTS[2], scores=True, types=("ORG",)),
              PassDocument("e", "")]
    results = tag_pass(tagger, wanted)
    assert len(results) == len(wanted)
    for document, (records, tokens) in zip(wanted, results):
        scored = document.needs_scores
        (alone,) = tagger.pipe([document.content], scores=scored, doc_ids=[document.doc_id])
        expected = entity_records(alone, scores=document.scores,
                                  min_score=document.min_score, types=document.types)
        assert [{k: v for k, v in r.items() if k != "score"} for r in records] == [
            {k: v for k, v in r.items() if k != "score"} for r in expected]
        assert [r.get("score", -1.0) for r in records] == pytest.approx(
            [r.get("score", -1.0) for r in expected], rel=1e-5)
        assert tokens == sum(len(s.tokens) for s in alone.sentences)
    records = dict(zip("abcde", (r for r, _ in results)))
    assert records["a"] and all("score" not in r and r["doc"] == "a" for r in records["a"])
    assert all(0 <= r["score"] <= 1 for r in records["b"])
    assert all("score" not in r and r["start_char"] is None for r in records["c"])
    assert {r["type"] for r in records["d"]} == {"ORG"}
    assert results[-1] == ([], 0)


def test_the_model_card(tagger, tmp_path):
    card = model_card(tagger, "conll03")
    assert card["name"] == "conll03"
    assert card["types"] == ["LOC", "MISC", "ORG", "PER"]
    assert card["graph"] is True and card["threshold"] == tagger.threshold
    assert card["run"] and card["dtype"] == "float16"
    assert card["approximation"] == "faithful"  # conll03 tags faithfully unless told
    assert card["label_consistency"] is True  # conll03 declares it ([model] label_consistency)
    # a shipped model: the test scores of its evaluation by name (no metrics.json)
    metrics = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "results"
                          / "shipped" / "conll03" / "test_metrics.json").read_text())
    assert card["figures"] == {"test": {k: metrics["test"][k]
                                        for k in ("precision", "recall", "f1")}}
    json.dumps(card)  # what GET /v1/model sends
