"""Tests of :mod:`docgraph.persistence.model_dir`: a model directory that is missing, corrupt or
does not fit its configuration, a model built for vectors of another size, and the threshold
override of :func:`load_model_dir`."""

import json

import pytest
import torch

from docgraph.persistence.checkpoint import CheckpointError
from docgraph.persistence.model_dir import ModelOverrides, load_model_dir


def test_corrupt_model_directory(model_dir, tmp_path):
    import shutil

    with pytest.raises(CheckpointError, match="neither a model directory nor a shipped model"):
        load_model_dir(tmp_path / "nowhere")
    copy = tmp_path / "copy"
    shutil.copytree(model_dir, copy)
    (copy / "model.pt").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="model.pt"):
        load_model_dir(copy)
    shutil.copy(model_dir / "model.pt", copy / "model.pt")
    config = json.loads((copy / "config.json").read_text())
    config["model"]["hidden"] = 32
    (copy / "config.json").write_text(json.dumps(config))  # its seal no longer fits
    with pytest.raises(CheckpointError, match=r"copy/config.json: damaged .* set its "
                                              r"'sha256' entry to 'edited'\)$"):
        load_model_dir(copy)
    del config["sha256"]  # no seal: refused
    (copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match=r"copy/config.json: damaged or not written by "
                                              r"docgraph \(a JSON object without the 'sha256'"):
        load_model_dir(copy)
    config["sha256"] = "edited"  # edited on purpose: read as it is, checked against the weights
    (copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="weights do not fit"):
        load_model_dir(copy)
    (copy / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match=r"copy/config.json: not valid JSON \(line 1, "
                                              r"column 2: "):
        load_model_dir(copy)


@pytest.mark.parametrize(("key", "bound"), [("window", "integer >= 0 and <= 64"),
                                             ("hidden", "integer >= 1 and <= 1048576")])
def test_a_config_value_out_of_its_bounds_is_refused_before_anything_is_built(
        model_dir, tmp_path, key, bound):
    import shutil
    import time

    from docgraph.runtime.integrity import read_json_file, write_sealed_json

    copy = tmp_path / "copy"
    shutil.copytree(model_dir, copy)
    config = read_json_file(copy / "config.json")
    config["model"][key] = 10**9
    write_sealed_json(copy / "config.json", config)
    start = time.monotonic()
    with pytest.raises(CheckpointError) as info:
        load_model_dir(copy)
    assert str(info.value) == (f"{copy / 'config.json'}: not the configuration of a docgraph "
                               f"model (config [model] {key} = 1000000000: expected an "
                               f"{bound})")
    assert time.monotonic() - start < 30


def test_model_rejects_vectors_of_another_size(sample_vocabs):
    from docgraph.model import GCDocConfig
    from docgraph.persistence.model_dir import build_model

    with pytest.raises(ValueError, match="3 dimensions but config.word_dim is 50"):
        build_model(GCDocConfig(), sample_vocabs, torch.zeros(len(sample_vocabs.words), 3))


@pytest.fixture(scope="module")
def dev_batch(model_dir):
    from torch_geometric.data import Batch

    from docgraph.graph.splits import prepare_run_split

    _, vocabs, config = load_model_dir(model_dir)
    return Batch.from_data_list(prepare_run_split(config, vocabs, "dev").graphs[:4])


def test_threshold_override_reaches_the_config_the_model_and_drop(model_dir, dev_batch):
    import math

    model, _, config = load_model_dir(model_dir)
    trained = config.model.threshold
    assert model.config.threshold == model.document_graph.uncertainty.threshold == trained
    base = model.inspect(dev_batch)
    u = base.uncertainty
    assert torch.equal(base.drop, u > trained)
    assert 0 < int(base.drop.sum()) < u.numel()  # the trained threshold prunes some tokens
    num_labels = model.emission.out_features
    middle = float(u.median())
    for threshold in (middle, 100.0):
        overridden, _, changed = load_model_dir(model_dir,
                                                overrides=ModelOverrides(threshold=threshold))
        assert changed.model.threshold == threshold
        assert overridden.config.threshold == threshold
        assert overridden.document_graph.uncertainty.threshold == threshold
        out = overridden.inspect(dev_batch)
        assert torch.equal(out.uncertainty, u)  # the override moves the cut only
        assert torch.equal(out.drop, u > threshold)
    assert threshold > math.log(num_labels) and not out.drop.any()  # 100 > ln C: Drop is empty
    # nothing pruned: the tags of the unpruned graph
    unpruned = model.forward(dev_batch, compute_loss=False, prune=False, mc_seed=0)
    expected = model.crf.decode(unpruned.emissions, dev_batch.sent_len)
    assert torch.equal(overridden.predict(dev_batch), expected)
    assert not torch.equal(model.predict(dev_batch), expected)  # the trained cut matters here
    # no override: the trained threshold
    _, _, same = load_model_dir(model_dir, overrides=ModelOverrides(threshold=None))
    assert same.model.threshold == trained


def test_an_override_the_model_cannot_take_names_the_setting(tmp_path):
    from docgraph.config import ExperimentConfig, apply_overrides
    from docgraph.persistence.locate import ModelFiles
    from docgraph.persistence.manifest import PACK_FORMAT, PACK_VERSION
    from docgraph.persistence.model_dir import OverrideError

    trained = ModelFiles(tmp_path, None)
    unpruned = apply_overrides(ExperimentConfig(), {"model": {"pruning": False}})
    with pytest.raises(OverrideError) as caught:
        ModelOverrides(threshold=2.0).check(unpruned, trained)
    err = caught.value
    assert (err.setting, err.value) == ("threshold", 2.0)
    assert str(tmp_path) in err.reason and "does not prune" in err.reason
    assert str(err).startswith("threshold 2.0: ")
    ModelOverrides(threshold=2.0).check(ExperimentConfig(), trained)  # a pruning model takes it
    packed = ModelFiles(tmp_path, {"format": PACK_FORMAT, "version": PACK_VERSION, "files": {}})
    with pytest.raises(OverrideError, match="needs its open vocabulary") as caught:
        ModelOverrides(open_vocabulary=False).check(ExperimentConfig(), packed)
    assert caught.value.setting == "open_vocabulary"


def test_a_model_without_pretrained_vectors_needs_none():
    from docgraph.persistence.model_dir import embeddings_problem

    assert embeddings_problem("none") is None
    assert embeddings_problem("/nowhere/vectors.txt") == \
        "the pretrained vectors /nowhere/vectors.txt are not found"
