"""Invented names, training-time masking and the name-group figures (names never seen)."""

import pytest

from docgraph.config import TrainConfig
from docgraph.config.fields import ConfigError
from docgraph.data.augment import epoch_cases
from docgraph.data.document import Document, Sentence
from docgraph.data.novel_names import NameGenerator, cue_words, novel_name_seed, novel_names
from docgraph.data.tokenize import case_shape
from docgraph.metrics import name_groups


def _doc(doc_id: str = "d1") -> Document:
    sentences = [
        (["Marisol", "Quenby", "joined", "Halvorsen", "Optics", "in", "1994", "."],
         ["B-PER", "I-PER", "O", "B-ORG", "I-ORG", "O", "O", "O"]),
        (["QUENBY", "left", "HALVORSEN", "and", "quenby", "returned", "."],
         ["B-PER", "O", "B-ORG", "O", "B-PER", "O", "O"]),
        (["Quenby", "Prize", "winners", "met", "in", "St.", "Louis", "."],
         ["B-MISC", "I-MISC", "O", "O", "O", "B-LOC", "I-LOC", "O"]),
    ]
    return Document(doc_id, tuple(Sentence(tuple(t), tuple(g), doc_id, i)
                                  for i, (t, g) in enumerate(sentences)))


def test_entity_words_are_replaced_consistently_and_the_rest_is_kept():
    doc = _doc()
    new = novel_names(doc, seed=3)
    assert [s.tags for s in new.sentences] == [s.tags for s in doc.sentences]
    old_tokens, new_tokens = doc.tokens, new.tokens
    tags = doc.tags
    invented: dict[str, str] = {}
    for old, token, tag in zip(old_tokens, new_tokens, tags):
        if tag == "O" or not any(c.isalpha() for c in old):
            assert token == old
            continue
        assert token.lower() != old.lower()
        assert case_shape(token) == ("title" if case_shape(old) == "other" else case_shape(old))
        # one invented word per original word, case-insensitively, in this document
        assert invented.setdefault(old.lower(), token.lower()) == token.lower()
    assert len(set(invented.values())) == len(invented)  # different words stay different


def test_invented_names_depend_on_the_seed_and_document_alone():
    assert novel_names(_doc(), seed=3) == novel_names(_doc(), seed=3)
    assert novel_names(_doc(), seed=3).tokens != novel_names(_doc(), seed=4).tokens
    assert novel_names(_doc("d1"), seed=3).tokens != novel_names(_doc("d2"), seed=3).tokens
    assert novel_name_seed(1, 0) != novel_name_seed(0, 1) and novel_name_seed(0, 0) >= 1_000


def test_the_generator_avoids_given_words_and_its_own():
    first = NameGenerator(7, "k").word("Quenby")
    avoided = NameGenerator(7, "k", avoid={first}).word("Quenby")
    assert avoided != first
    generator = NameGenerator(1)
    words = [generator.word("Ab") for _ in range(300)]
    assert len(set(words)) == 300 and all(w.isalpha() and w.islower() for w in words)


def test_epoch_draw_keeps_the_case_draw_and_adds_invented_names_without_overlap():
    plain = epoch_cases(20, 0.3, 0.2, seed=1, epoch=4)
    with_novel = epoch_cases(20, 0.3, 0.2, seed=1, epoch=4, novel_share=0.25)
    assert [c for c in with_novel if c != "novel"] != [] and with_novel.count("novel") == 5
    assert all(a == b for a, b in zip(plain, with_novel) if a != "cased")  # same case draws
    assert with_novel.count("lower") == 6 and with_novel.count("upper") == 4
    with pytest.raises(ValueError, match="at most 1"):
        epoch_cases(10, 0.5, 0.3, seed=1, epoch=0, novel_share=0.3)


def test_cue_words_are_the_words_of_several_different_mentions():
    doc = _doc()
    # "quenby" is in ("marisol", "quenby"), ("quenby",) and ("quenby", "prize"); "halvorsen" in
    # ("halvorsen", "optics") and ("halvorsen",); every other word in one mention
    assert cue_words([doc], 3) == {"quenby"}
    assert cue_words([doc], 2) == {"quenby", "halvorsen"}
    assert "optics" in cue_words([doc], 1) and cue_words([doc], 4) == frozenset()
    assert cue_words([doc], 2, kept_types={"PER", "MISC"}) == {"halvorsen"}
    # "returned" is a lowercase word outside mentions but in no mention; "quenby" (lowercase,
    # a mention) is not a common word; add one that is both
    common = Document("c", (Sentence(("the", "optics", "of", "Halvorsen", "Optics"),
                                     ("O", "O", "O", "B-ORG", "I-ORG"), "c", 0),))
    assert cue_words([doc, common], 3) == {"quenby"}
    assert cue_words([doc, common], 3, common=True) == {"quenby", "optics"}


def test_kept_words_keep_their_form_inside_mentions_and_the_rest_is_invented():
    doc = _doc()
    new = novel_names(doc, seed=3, kept_words={"optics", "st."})
    plain = novel_names(doc, seed=3)
    assert new.sentences[0].tokens[4] == "Optics" and plain.sentences[0].tokens[4] != "Optics"
    assert new.sentences[2].tokens[5] == "St."
    for old, token, tag in zip(doc.tokens, new.tokens, doc.tags):
        if tag != "O" and old.lower() not in {"optics", "st."}:
            assert token.lower() != old.lower()


def test_novel_name_cues_need_invented_names():
    with pytest.raises(ConfigError, match="novel_name_cues"):
        TrainConfig(novel_name_cues=5)
    assert TrainConfig(novel_name_cues=5, novel_name_share=0.3).novel_name_cues == 5
    with pytest.raises(ConfigError, match="novel_name_common_cues"):
        TrainConfig(novel_name_common_cues=True, novel_name_share=0.3)


def test_train_config_refuses_shares_over_one():
    with pytest.raises(ConfigError, match="novel_name_share"):
        TrainConfig(lowercase_share=0.5, uppercase_share=0.3, novel_name_share=0.3)


def test_name_groups_counts_each_way_a_repeated_name_can_be_tagged():
    tokens = [[["Quenby", "met", "Halvorsen", "."], ["Quenby", "and", "Halvorsen", "."],
               ["Brack", "Brack", "Oslo", "Oslo"]]]
    gold = [[["B-PER", "O", "B-ORG", "O"], ["B-PER", "O", "B-ORG", "O"],
             ["B-LOC", "B-LOC", "B-LOC", "B-LOC"]]]
    pred = [[["B-PER", "O", "B-PER", "O"], ["B-PER", "O", "B-ORG", "O"],
             ["B-LOC", "O", "O", "O"]]]
    groups = name_groups(tokens, gold, pred)
    # Quenby: one type (correct); Halvorsen: two types; Brack: partly missed; Oslo: missed
    assert (groups.groups, groups.one_type, groups.correct, groups.mixed,
            groups.partly_missed, groups.missed) == (4, 1, 1, 1, 1, 1)
    assert groups.inconsistent == 2 and groups.to_dict()["inconsistent_share"] == 50.0
    wrong = name_groups(tokens, gold, [[["B-ORG", "O", "O", "O"], ["B-ORG", "O", "O", "O"],
                                        ["O"] * 4]])
    assert (wrong.one_type, wrong.correct) == (1, 0)


def test_a_run_trains_on_invented_names_and_selects_on_the_three_forms_of_dev(tmp_path):
    import json

    from conftest import tiny_config

    from docgraph.training.experiment import run_experiment

    config = tiny_config(tmp_path / "run", epochs=2, novel_name_share=0.4, word_dropout=0.1,
                         mention_masking=0.5, selection="robust_dev", novel_name_cues=2)
    metrics = run_experiment(config, progress=False)
    records = [json.loads(line) for line in (tmp_path / "run" / "train_log.jsonl").open()]
    for record in records:
        forms = (record["dev_f1"], record["dev_f1_lower"], record["dev_f1_novel"])
        assert record["selection_f1"] == pytest.approx(sum(forms) / 3)
    best = max(records, key=lambda r: r["selection_f1"])
    assert metrics["best_epoch"] == best["epoch"]


def test_words_of_numeric_and_temporal_types_are_not_names_and_stay():
    doc = Document("o1", (Sentence(("Quenby", "left", "on", "Monday", "with", "three", "million"),
                                   ("B-PERSON", "O", "O", "B-DATE", "O", "B-MONEY", "I-MONEY"),
                                   "o1", 0),))
    tokens = novel_names(doc, seed=0).tokens
    assert tokens[0] != "Quenby" and tokens[1:] == ["left", "on", "Monday", "with", "three",
                                                    "million"]
    assert novel_names(doc, seed=0, kept_types=()).tokens[3] != "Monday"
