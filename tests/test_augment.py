"""Case augmentation: the case variants of a document and the per-epoch draw."""

from __future__ import annotations

import pytest

from docgraph.config import TrainConfig
from docgraph.config.fields import ConfigError
from docgraph.data.augment import augmented_words, case_variant, epoch_cases, variants_needed
from docgraph.data.document import make_document


@pytest.fixture
def document():
    return make_document("d", [(["Angela", "Merkel", "visited", "Paris"],
                                ["B-PER", "I-PER", "O", "B-LOC"]),
                               (["Merkel", "left"], ["B-PER", "O"])], "iob1")


def test_case_variants_change_tokens_only(document):
    lower, upper = case_variant(document, "lower"), case_variant(document, "upper")
    assert lower.tokens == ["angela", "merkel", "visited", "paris", "merkel", "left"]
    assert upper.tokens == ["ANGELA", "MERKEL", "VISITED", "PARIS", "MERKEL", "LEFT"]
    for variant in (lower, upper):
        assert variant.tags == document.tags
        assert variant.doc_id == document.doc_id
        assert variant.source_scheme == "iob1"
        assert [s.index for s in variant.sentences] == [0, 1]
    assert case_variant(document, "cased") is document
    with pytest.raises(ValueError, match="unknown case 'title'"):
        case_variant(document, "title")


def test_epoch_cases_draws_the_shares_without_overlap():
    cases = epoch_cases(10, 0.3, 0.2, seed=1, epoch=4)
    assert cases.count("lower") == 3 and cases.count("upper") == 2
    assert cases.count("cased") == 5
    assert epoch_cases(10, 0.3, 0.2, seed=1, epoch=4) == cases  # a resumed run draws the same
    draws = {tuple(epoch_cases(10, 0.3, 0.2, seed=1, epoch=e)) for e in range(1, 9)}
    assert len(draws) > 1  # a new draw every epoch
    assert epoch_cases(4, 0.0, 0.0, 1, 1) == ["cased"] * 4
    assert epoch_cases(3, 1.0, 0.0, 1, 1) == ["lower"] * 3
    with pytest.raises(ValueError, match="at most 1"):
        epoch_cases(4, 0.7, 0.4, 1, 1)


def test_every_document_is_seen_in_each_case_over_epochs():
    seen = {i: set() for i in range(6)}
    for epoch in range(1, 41):
        for i, case in enumerate(epoch_cases(6, 0.5, 0.25, seed=3, epoch=epoch)):
            seen[i].add(case)
    assert all(cases == {"cased", "lower", "upper"} for cases in seen.values())


def test_variants_and_their_words(document):
    assert variants_needed(0.0, 0.0) == ("cased",)
    assert variants_needed(0.3, 0.0) == ("cased", "lower")
    assert variants_needed(0.3, 0.1) == ("cased", "lower", "upper")
    assert augmented_words([document], ("cased",)) == []
    assert augmented_words([document], ("cased", "upper"))[:2] == ["ANGELA", "MERKEL"]


def test_the_vocabulary_holds_every_form_trained_on(sample_splits):
    from docgraph.graph.splits import build_vocabularies

    plain, _, _ = build_vocabularies(sample_splits, "none")
    vocabs, _, _ = build_vocabularies(sample_splits, "none", train_cases=("cased", "upper"))
    words = {w for d in sample_splits["train"] for w in d.tokens}
    assert all(w.upper() in vocabs.words for w in words)
    assert all(w in vocabs.words for w in words)
    assert len(vocabs.words) > len(plain.words)


def test_shares_are_checked_as_settings():
    assert TrainConfig(lowercase_share=0.5, uppercase_share=0.5).uppercase_share == 0.5
    with pytest.raises(ConfigError, match="lowercase_share \\+ uppercase_share"):
        TrainConfig(lowercase_share=0.6, uppercase_share=0.5)
    with pytest.raises(ConfigError, match="lowercase_share"):
        TrainConfig(lowercase_share=1.5)


def test_trainer_takes_each_document_in_its_drawn_case(tmp_path, sample_splits, sample_vocabs):
    from docgraph.graph.splits import prepare_split
    from docgraph.persistence.model_dir import build_model
    from docgraph.training.loop import Trainer
    from tests.conftest import tiny_config

    config = tiny_config(tmp_path / "run", lowercase_share=0.5, uppercase_share=0.25)
    train = sample_splits["train"]
    variants = {case: prepare_split([case_variant(d, case) for d in train], sample_vocabs,
                                    config) for case in ("lower", "upper")}
    prepared = prepare_split(train, sample_vocabs, config)
    trainer = Trainer(build_model(config.model, sample_vocabs, None), sample_vocabs, config,
                      prepared, prepared, tmp_path / "run", progress=False,
                      train_variants=variants)
    graphs = trainer.epoch_graphs(3)
    cases = epoch_cases(len(prepared.graphs), 0.5, 0.25, config.seed, 3)
    for i, case in enumerate(cases):
        source = prepared if case == "cased" else variants[case]
        assert graphs[i] is source.graphs[i]
    assert set(cases) == {"cased", "lower", "upper"}
