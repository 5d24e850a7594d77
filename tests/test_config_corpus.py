"""The settings of a corpus job (docgraph.config.corpus)."""

from __future__ import annotations

import pytest

from docgraph.config.corpus import OUTPUT_SETTINGS, CorpusConfig
from docgraph.config.fields import ConfigError


def test_the_output_settings_are_those_that_decide_the_records():
    config = CorpusConfig(actors=4, address="auto", scores=True)
    settings = config.output_settings()
    assert list(settings) == list(OUTPUT_SETTINGS)
    assert settings["scores"] is True and "actors" not in settings and "address" not in settings
    assert settings["consistency"] is None  # it decides the entities written (None: the model's)


def test_the_command_takes_consistency():
    from docgraph.integrations.tag_corpus import tag_corpus_parser

    parse = tag_corpus_parser().parse_args
    assert parse(["in.txt", "--output", "out", "--consistency"]).consistency is True
    assert parse(["in.txt", "--output", "out", "--no-consistency"]).consistency is False
    assert parse(["in.txt", "--output", "out"]).consistency is None


@pytest.mark.parametrize(("field", "value"), [("actors", 0), ("cpus_per_actor", 0.0),
                                              ("gpus_per_actor", -0.5), ("output_format", "csv"),
                                              ("input_format", "xml")])
def test_a_bad_setting_is_refused_by_name(field, value):
    with pytest.raises(ConfigError, match=field):
        CorpusConfig(**{field: value})
