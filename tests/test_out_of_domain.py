"""The out-of-domain benchmark: its rows and their scores, on hand-made documents."""

from __future__ import annotations

from docgraph.data.document import make_document
from docgraph_dev.out_of_domain import conditions, evaluate_tagger, row


def _corpora():
    conll = [make_document("c-0", [(["Merkel", "met", "Macron", "in", "Paris"],
                                    ["B-PER", "O", "B-PER", "O", "B-LOC"])])]
    onto = [make_document("bc/x/00/x_0001/part-000",
                          [(["Merkel", "met", "Macron", "in", "Paris", "today"],
                            ["B-PERSON", "O", "B-PERSON", "O", "B-GPE", "B-DATE"])]),
            make_document("nw/y/00/y_0001/part-000",
                          [(["IBM", "rose"], ["B-ORG", "O"])])]
    return {"conll03": conll, "ontonotes": onto}


def test_rows_of_a_conll_model():
    names = [c[0] for c in conditions("conll03", _corpora())]
    assert names == ["conll03 test, cased", "conll03 test, lower", "conll03 test, upper",
                     "ontonotes test, cased, types mapped to conll03"]
    lower = conditions("conll03", _corpora())[1][1]
    assert lower[0].tokens == ["merkel", "met", "macron", "in", "paris"]
    mapped = conditions("conll03", _corpora())[3][1]
    assert mapped[0].tags == ["B-PER", "O", "B-PER", "O", "B-LOC", "O"]


def test_gold_tags_score_100_and_mapped_predictions_are_compared_in_conll_types():
    corpora = _corpora()
    # a tagger that returns the gold tags (of the text it is given)
    def gold(docs):
        return [[list(s.tags) for s in d.sentences] for d in docs]
    rows = evaluate_tagger("gold", "conll03", gold, corpora, log=lambda _: None)
    assert {r["scores"]["f1"] for r in rows.values()} == {100.0}
    assert set(rows["ontonotes test, cased, types mapped to conll03"]["genres"]) == {"bc", "nw"}
    # OntoNotes types predicted on CoNLL text: compared after mapping
    def ontonotes_style(docs):
        return [[["B-PERSON", "O", "B-PERSON", "O", "B-GPE"]] if d.doc_id == "c-0"
                else gold([d])[0] for d in docs]
    rows = evaluate_tagger("onto", "ontonotes", ontonotes_style, corpora, log=lambda _: None)
    assert rows["conll03 test, cased, types mapped to conll03"]["scores"]["f1"] == 100.0


def test_row_counts_by_hand():
    doc = make_document("d", [(["A", "B", "C"], ["B-PER", "O", "B-LOC"])])
    out = row([doc], [[["B-PER", "O", "B-ORG"]]])
    assert out["scores"]["correct"] == 1 and out["scores"]["predicted"] == 2
    assert out["scores"]["f1"] == 50.0
    assert out["scores"]["per_type"]["PER"]["f1"] == 100.0
    assert "recurrent" in out["consistency"]


def test_markdown_table_of_a_record():
    from docgraph_dev.out_of_domain import markdown_table

    doc = make_document("d", [(["A", "B", "C"], ["B-PER", "O", "B-LOC"])])
    record = {"taggers": {"runs/x": {"rows": {"conll03 test, cased":
                                              row([doc], [[["B-PER", "O", "B-ORG"]]])}}}}
    lines = markdown_table([record], names={"runs/x": "conll03"}).splitlines()
    assert lines[0].startswith("| tagger | text | F1 | PER | LOC | ORG | MISC |")
    assert lines[2].startswith("| conll03 | conll03 test, cased | **50.00** | 100.00 | 0.00 | "
                               "0.00 | – |")


def test_the_novel_names_row_follows_the_cases_and_keeps_the_gold_tags():
    from docgraph.data.novel_names import novel_names

    corpora = _corpora()
    novel = {name: [novel_names(d, 0) for d in docs] for name, docs in corpora.items()}
    rows = conditions("conll03", corpora, novel=novel)
    assert [r[0] for r in rows][3:] == ["conll03 test, novel names",
                                        "ontonotes test, cased, types mapped to conll03"]
    invented = rows[3][1][0]
    assert invented.tags == corpora["conll03"][0].tags
    assert invented.tokens[1::2] == ["met", "in"] and "Merkel" not in invented.tokens
    out = row(rows[3][1], [[list(s.tags) for s in d.sentences] for d in rows[3][1]])
    assert out["scores"]["f1"] == 100.0 and out["name_groups"]["groups"] == 0


def test_each_model_decodes_as_it_does_by_default_unless_told():
    from docgraph_dev.out_of_domain import DECODING_SUFFIX, parser

    parse = parser().parse_args
    assert parse([]).consistency is None  # Tagger.load's default: the model's own
    assert parse(["--consistency"]).consistency is True
    assert parse(["--no-consistency"]).consistency is False
    assert [DECODING_SUFFIX[v] for v in (None, True, False)] == [
        "", " --consistency", " --no-consistency"]
