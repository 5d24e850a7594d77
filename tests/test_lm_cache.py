"""Tests of :mod:`docgraph.data.lm_cache`: hits, misses and every setting in the key (the
fingerprints the keys are made of are ``tests/test_lm_fingerprints.py``'s).

The encoder is the tiny random BERT of ``conftest.tiny_lm``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import numpy as np
from conftest import needs_transformers, plain_document

from docgraph.data.lm_encoder import ContextualSettings
from docgraph.data.lm_fingerprints import model_dir_hash


@needs_transformers
def test_cache_hit_miss_and_invalidation(tiny_lm, tmp_path, monkeypatch, caplog):
    import shutil

    from docgraph.data.lm_cache import cached_features
    from docgraph.data.lm_encoder import ContextualEncoder

    lm = tmp_path / "lm"
    shutil.copytree(tiny_lm, lm)
    cache = tmp_path / "cache"
    docs = [plain_document("a", "the cat sat", "on the mat"), plain_document("b", "dog run")]
    enc = ContextualEncoder(lm, ContextualSettings(context=4))
    with caplog.at_level(logging.INFO, logger="docgraph"):
        first = cached_features(docs, enc, cache, "toy-train")
    assert "MiB" in caplog.text and "wrote" in caplog.text
    files = sorted(p.name for p in cache.iterdir())
    assert len(files) == 2 and not any(name.endswith(".tmp") for name in files)
    assert isinstance(first, np.memmap) and first.dtype == np.float16 and first.shape == (8, 16)
    np.testing.assert_allclose(first, enc.encode(docs), atol=2e-3)
    meta = json.loads(next(cache.glob("*.json")).read_text())
    assert meta["shape"] == [8, 16] and meta["model_hash"] == model_dir_hash(lm)

    def no_encode(*args, **kwargs):
        raise AssertionError("cache miss")

    with monkeypatch.context() as patch:
        patch.setattr(ContextualEncoder, "encode", no_encode)
        np.testing.assert_array_equal(cached_features(docs, enc, cache, "toy-train"), first)

    def npy_count() -> int:
        return len(list(cache.glob("*.npy")))

    # settings, corpus and model files each change the key
    cached_features(docs, ContextualEncoder(lm, ContextualSettings(context=4, pooling="first")),
                    cache, "toy-train")
    assert npy_count() == 2
    cached_features([*docs, plain_document("c", "the dog")], enc, cache, "toy-train")
    assert npy_count() == 3
    config = json.loads((lm / "config.json").read_text())
    config["layer_norm_eps"] = 1e-6
    (lm / "config.json").write_text(json.dumps(config))
    cached_features(docs, ContextualEncoder(lm, ContextualSettings(context=4)), cache,
                    "toy-train")
    assert npy_count() == 4
    # a damaged file is recomputed, not trusted
    path = sorted(cache.glob("*.npy"), key=lambda p: p.stat().st_mtime)[-1]
    np.save(path, np.zeros((3, 16), dtype=np.float16))
    again = cached_features(docs, ContextualEncoder(lm, ContextualSettings(context=4)), cache,
                            "toy-train")
    assert again.shape == (8, 16)


@needs_transformers
def test_every_feature_setting_is_in_the_cache_key(tiny_lm):
    # Each setting that changes the features (all of ContextualSettings but batch_size) gives
    # another cache key, so a changed --lm-context or layer selection never reuses stale
    # features; batch_size alone keeps the key.
    from dataclasses import fields

    from docgraph.data.lm_encoder import ContextualEncoder

    docs = [plain_document("a", "the cat sat", "on the mat")]
    base = ContextualSettings(context=4)
    key = ContextualEncoder(tiny_lm, base).cache_key(docs)
    changed = {"context": 2, "pooling": "first", "layers": 2, "max_length": 16, "pack": True,
               "batch_size": 3}
    assert set(changed) == {f.name for f in fields(ContextualSettings)}
    for name, value in changed.items():
        other = ContextualEncoder(tiny_lm, replace(base, **{name: value})).cache_key(docs)
        assert (other == key) == (name == "batch_size"), name
