"""Tagging on several CPU processes: shard arithmetic, the process pool, and equal outputs."""

import json
import shutil
from dataclasses import replace

import pytest
from conftest import reference_tags, run_script

from docgraph.data.registry import load_dataset
from docgraph.runtime.integrity import write_sealed_json
from docgraph.runtime.processes import (
    MIN_TOKENS_PER_TAGGING_PROCESS,
    contiguous_shards,
    min_tagging_tokens,
    tagging_processes,
)
from docgraph.tagging.tagger import Tagger


@pytest.mark.parametrize("lengths, parts, expected", [
    ([100, 10], 2, [(0, 1), (1, 2)]),
    ([1, 1, 1, 1], 2, [(0, 2), (2, 4)]),
    ([1, 1, 1, 1], 3, [(0, 2), (2, 3), (3, 4)]),
    ([5, 5], 3, [(0, 1), (1, 2)]),  # fewer items than parts: fewer shards, none empty
    ([3, 1, 1, 1], 2, [(0, 1), (1, 4)]),
    ([7], 2, [(0, 1)]),
    ([], 2, []),
    ([2, 2, 2], 1, [(0, 3)]),
])
def test_contiguous_shards(lengths, parts, expected):
    shards = contiguous_shards(lengths, parts)
    assert [(r.start, r.stop) for r in shards] == expected
    assert [i for r in shards for i in r] == list(range(len(lengths)))


def test_contiguous_shards_balance_many_documents():
    lengths = [(37 * i) % 500 + 20 for i in range(300)]
    shards = contiguous_shards(lengths, 2)
    loads = [sum(lengths[i] for i in r) for r in shards]
    assert abs(loads[0] - loads[1]) <= max(lengths)
    with pytest.raises(ValueError, match="parts"):
        contiguous_shards(lengths, 0)


def test_tagging_processes():
    big = 3 * MIN_TOKENS_PER_TAGGING_PROCESS
    assert tagging_processes(big, "cpu", cores=2) == 2
    assert tagging_processes(big, "cpu", cores=1) == 1
    assert tagging_processes(big, "cpu", cores=16) == 2  # at most 2
    assert tagging_processes(MIN_TOKENS_PER_TAGGING_PROCESS, "cpu", cores=2) == 1  # too small
    assert tagging_processes(big, "cuda", cores=2) == 1
    assert tagging_processes(big, "cuda", requested=2, cores=2) == 1
    assert tagging_processes(10, "cpu", requested=3) == 3  # explicit counts are taken
    assert tagging_processes(2, "cpu", requested=3) == 2  # but never more than tokens
    with pytest.raises(ValueError, match="processes must be >= 0"):
        tagging_processes(big, "cpu", requested=-1)
    # a BiLSTM-CRF tags ~8x faster, so it needs ~8x more tokens per process to gain
    assert min_tagging_tokens(graph=False, cross_sentence=False) == 8 * min_tagging_tokens(
        graph=True, cross_sentence=False) == 8 * min_tagging_tokens(False, True)
    baseline = min_tagging_tokens(False, False)
    assert tagging_processes(big, "cpu", cores=2, min_tokens=baseline) == 1
    assert tagging_processes(2 * baseline, "cpu", cores=2, min_tokens=baseline) == 2


@pytest.fixture(scope="module")
def deterministic_model(model_dir, tmp_path_factory):
    """The trained tiny model with every neighbour kept and no pruning: its tags do not
    depend on random draws, so any number of processes must give the same tags."""
    path = tmp_path_factory.mktemp("deterministic") / "model"
    shutil.copytree(model_dir, path)
    config = json.loads((path / "config.json").read_text())
    config["graph"]["max_neighbours"] = None
    config["model"]["threshold"] = 1e9  # no token is ever uncertain enough to be pruned
    write_sealed_json(path / "config.json", config)
    return path


def test_tagger_in_two_processes_equals_one(deterministic_model, sample_splits):
    tagger = Tagger.load(deterministic_model)
    docs = sample_splits["test"] + sample_splits["dev"]
    one_docs, one = tagger.tag(docs)
    two_docs, two = tagger.tag(docs, processes=2)
    assert [d.doc_id for d in two_docs] == [d.doc_id for d in one_docs]
    assert two == one
    assert any(t != "O" for doc in two for sent in doc for t in sent)
    # the entities are the same; their scores to the last bits of float32 emissions
    def unscored(found):
        return [[replace(e, score=None) for e in doc] for doc in found]

    one_scored, two_scored = tagger.predict(docs), tagger.predict(docs, processes=2)
    assert unscored(two_scored) == unscored(one_scored)
    assert [e.score for d in two_scored for e in d] == pytest.approx(
        [e.score for d in one_scored for e in d], rel=1e-5)


def test_tagger_processes_arguments(model_dir, sample_splits):
    tagger = Tagger.load(model_dir)
    with pytest.raises(ValueError, match="processes must be >= 0"):
        tagger.tag(sample_splits["test"], processes=-1)
    unloaded = Tagger(tagger.model, tagger.vocabs, tagger.config)
    with pytest.raises(ValueError, match="Tagger.load"):
        unloaded.tag(sample_splits["test"], processes=2)
    # automatic: the sample is far below MIN_TOKENS_PER_TAGGING_PROCESS, so one process
    assert unloaded.tag(sample_splits["test"], processes=0)[1] == tagger.tag(
        sample_splits["test"])[1]


def test_predict_in_two_processes_writes_what_one_process_tags(deterministic_model):
    """``predict.py --processes 2`` writes the tags of one process (evaluate.py in two
    processes: ``test_inference.py``, ``test_batch_independence.py``)."""
    res = run_script("predict", "--model", deterministic_model, "--format", "conll",
                     "--processes", "2", "docgraph/data/sample/test.txt")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "-DOCSTART-" in res.stdout
    tags = [line.split()[-1] for line in res.stdout.splitlines()
            if line and not line.startswith("-DOCSTART-")]
    docs = load_dataset("sample", splits=("test",))["test"]
    expected = Tagger.load(deterministic_model).tag(docs, processes=1)[1]
    assert tags == [t for doc in expected for sentence in doc for t in sentence]
    assert any(t != "O" for t in tags)


def test_threshold_override_reaches_tagging_processes(model_dir, sample_splits, tmp_path):
    from docgraph.persistence.model_dir import ModelOverrides

    # every neighbour kept, the trained threshold left as it is: the override alone decides
    path = tmp_path / "model"
    shutil.copytree(model_dir, path)
    config = json.loads((path / "config.json").read_text())
    config["graph"]["max_neighbours"] = None
    write_sealed_json(path / "config.json", config)
    docs = sample_splits["test"] + sample_splits["dev"]
    references = {}
    # 0 prunes every token with any uncertainty, 1e9 none: both leave nothing to chance
    from docgraph.tagging.tagger import Tagger

    for threshold in (0.0, 1e9):
        overrides = ModelOverrides(threshold=threshold)
        references[threshold] = reference_tags(docs, path, overrides)  # 1 process
        # the Tagger (predict.py, evaluate.py) carries the override into its processes
        tagger = Tagger.load(path, threshold=threshold)
        assert tagger.tag(docs, processes=2)[1] == references[threshold]
    assert references[0.0] != references[1e9]  # the graph's messages change some tags
