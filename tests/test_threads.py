"""Thread policy of tagging in the caller's process (:mod:`docgraph.runtime.threads`)."""

import pytest
import torch

import docgraph.tagging.pipeline as pipeline
from docgraph.runtime.threads import THREADS_ENV, tagging_threads
from docgraph.tagging.pipeline import bounded_threads
from docgraph.tagging.tagger import Tagger

TEXT = "Kestrel beat Carrow 2-1 on Saturday. Piet Rauch scored twice for Kestrel."


@pytest.fixture
def two_threads():
    """The caller runs torch with two intra-op threads (put back to one afterwards)."""
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(1)


def spy(monkeypatch, module, name):
    """Record ``torch.get_num_threads()`` in each call of ``module.name``."""
    seen = []
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return seen


def test_the_setting_comes_from_the_argument_the_variable_or_one(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert tagging_threads() == 1
    assert tagging_threads(3) == 3
    monkeypatch.setenv(THREADS_ENV, "2")
    assert tagging_threads() == 2
    assert tagging_threads(0) == 0
    monkeypatch.setenv(THREADS_ENV, "two")
    with pytest.raises(ValueError, match=f"{THREADS_ENV}='two': expected an integer >= 0"):
        tagging_threads()
    with pytest.raises(ValueError, match="threads must be an integer >= 0.* got -1"):
        tagging_threads(-1)


def test_bounded_threads_restores_the_callers_count(two_threads):
    with bounded_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with pytest.raises(RuntimeError), bounded_threads(1):
        raise RuntimeError
    assert torch.get_num_threads() == 2
    with bounded_threads(0):
        assert torch.get_num_threads() == 2


def test_tagger_tags_in_one_thread_and_gives_the_callers_back(model_dir, monkeypatch,
                                                              two_threads):
    # Tagger.predict tagged with torch's default threads: on a busy 2-core machine a few texts
    # took a minute instead of a second
    monkeypatch.delenv(THREADS_ENV, raising=False)
    seen = spy(monkeypatch, pipeline, "tag_graphs")
    tagger = Tagger.load(model_dir)
    tagger.predict([TEXT])
    assert seen == [1]
    assert torch.get_num_threads() == 2
    Tagger.load(model_dir, threads=0).predict([TEXT])
    assert seen == [1, 2]
    monkeypatch.setenv(THREADS_ENV, "2")
    torch.set_num_threads(1)
    Tagger.load(model_dir).predict([TEXT])
    assert seen == [1, 2, 2]
    assert torch.get_num_threads() == 1


def test_the_spacy_component_tags_in_one_thread(model_dir, monkeypatch, two_threads):
    spacy = pytest.importorskip("spacy")
    import docgraph.integrations.spacy_component  # noqa: F401
    from docgraph.integrations.spacy_component import DocgraphSpacyError

    monkeypatch.delenv(THREADS_ENV, raising=False)
    seen = spy(monkeypatch, pipeline, "inspect_graphs")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("docgraph_ner", config={"model": str(model_dir), "device": "cpu"})
    nlp(TEXT)
    list(nlp.pipe([TEXT, TEXT]))
    assert seen == [1, 1]
    assert torch.get_num_threads() == 2
    other = spacy.blank("en")
    with pytest.raises(DocgraphSpacyError, match="threads must be an integer >= 0"):
        other.add_pipe("docgraph_ner", config={"model": str(model_dir), "threads": -2})
