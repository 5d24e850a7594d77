"""Shared fixtures of the whole-model, training, CLI, tagger and language-model tests.

Every training here is tiny (hidden 16, no pretrained vectors, a few epochs on the bundled
sample corpus) so the whole suite stays fast on two CPU cores.
"""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
import torch

# before any test module imports torch_geometric (and with it torch._dynamo, which makes
# its compile cache at import): docgraph points that cache out of $TMPDIR
import docgraph  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]

TINY_MODEL = {"hidden": 16, "char_hidden": 8, "sent_dim": 16, "uncertainty_hidden": 8,
              "num_samples": 2}
TINY_TRAIN = {"epochs": 3, "patience": 10, "optimizer": "adam", "lr": 0.03,
              "batch_tokens": 1000, "loss_reduction": "sentence_mean", "threads": 1}
TINY_FLAGS = ["--hidden", "16", "--char-hidden", "8", "--sent-dim", "16",
              "--uncertainty-hidden", "8", "--samples", "2", "--embeddings", "none",
              "--threads", "1", "--device", "cpu", "--quiet"]


#: WordPiece vocabulary and positions of the tiny language model of :func:`tiny_lm`.
TINY_LM_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "dog", "sat", "on",
                 "mat", "run", "##ning", "##s", "."]
TINY_LM_POSITIONS = 32

needs_transformers = pytest.mark.skipif(
    find_spec("transformers") is None,
    reason="transformers is not installed (pip install 'docgraph[lm]')",
)


def plain_document(doc_id: str, *sentences: str):
    """A document of whitespace-separated sentences, every token tagged ``O``."""
    from docgraph.data.document import make_document

    return make_document(doc_id, [(s.split(), ["O"] * len(s.split())) for s in sentences])


def with_type(document, kind: str = "DATE"):
    """``document`` with every ``MISC`` entity retyped as ``kind`` (a type a model lacks)."""
    from docgraph.data.document import Document, Sentence

    return Document(document.doc_id, tuple(
        Sentence(s.tokens, tuple(t.replace("MISC", kind) for t in s.tags), s.doc_id, s.index)
        for s in document.sentences), document.source_scheme)


def resumed_like_whole(config_of, tmp_path: Path, key: str) -> tuple[list, list]:
    """Train ``config_of(directory, epochs)`` for 3 epochs at once and for 2 then resumed to 3;
    assert their dev and test scores equal and return each run's per-epoch ``key`` of
    ``train_log.jsonl`` (whole, resumed)."""
    import json
    from dataclasses import replace

    from docgraph.training.experiment import run_experiment

    whole = run_experiment(config_of(tmp_path / "whole", 3), progress=False)
    first = config_of(tmp_path / "resumed", 2)
    run_experiment(first, progress=False)
    resumed = run_experiment(replace(first, train=replace(first.train, epochs=3)),
                             resume=True, progress=False)
    for split in ("dev", "test"):
        assert resumed[split] == whole[split]
    whole_log, resumed_log = ([json.loads(line)[key] for line in
                               (tmp_path / name / "train_log.jsonl").read_text().splitlines()]
                              for name in ("whole", "resumed"))
    return whole_log, resumed_log


def reference_tags(documents, model_dir, overrides=None, seed: int = 0):
    """The tags of ``documents`` by the plain one-process loop (load the model directory,
    build every graph, :func:`~docgraph.tagging.inference.predict_graphs` in batches of
    ``eval_batch_tokens``): the reference the tagging pipeline is checked against."""
    from docgraph.graph.splits import prepare_split
    from docgraph.persistence.model_dir import load_model_dir
    from docgraph.tagging.inference import predict_graphs

    model, vocabs, config = load_model_dir(model_dir, "cpu", overrides)
    prepared = prepare_split(documents, vocabs, config)
    return predict_graphs(model, prepared.graphs, vocabs, config.train.eval_batch_tokens,
                          seed=seed)


def annotated_graphs(model, graphs, documents, vocabs, batch_tokens: int = 2000,
                     mc_seed: int = 0):
    """The networkx graphs of one tagging pass over ``graphs`` in batches of ``batch_tokens``
    (what :meth:`Tagger.inspect` builds, at a batch size of the test's choosing)."""
    from docgraph.tagging.inference import inspect_graphs
    from docgraph.viz.networkx import to_networkx

    found = inspect_graphs(model, graphs, vocabs, batch_tokens, "cpu", mc_seed)
    return [to_networkx(graph, doc, vocabs, uncertainty=out.uncertainty, drop=out.drop,
                        edge_weight=out.edge_weight, predicted=out.label_ids)
            for graph, doc, out in zip(graphs, documents, found, strict=True)]


def tiny_config(output_dir: str | Path, model: dict | None = None, **train):
    """A tiny :class:`~docgraph.config.ExperimentConfig` on the sample corpus."""
    from docgraph.config import ExperimentConfig, apply_overrides

    return apply_overrides(ExperimentConfig(), {
        "dataset": "sample", "embeddings": "none", "output_dir": str(output_dir),
        "device": "cpu", "seed": 1,
        "model": {**TINY_MODEL, **(model or {})}, "train": {**TINY_TRAIN, **train},
    })


def script_env() -> dict[str, str]:
    """Environment of a script subprocess: one thread, no ``DOCGRAPH_DATA_DIR``."""
    env = {k: v for k, v in os.environ.items() if k != "DOCGRAPH_DATA_DIR"}
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONWARNINGS"] = "ignore"
    # the scripts import this checkout's docgraph, not another installed (editable) copy
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def as_in_a_terminal() -> None:
    """``preexec_fn`` of a script that a test interrupts: Ctrl-C reaches it as it reaches a
    terminal's foreground job, even when the tests run as a background job (which starts with
    SIGINT ignored, and a script then rightly keeps ignoring it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_script(name: str, *args: str, timeout: float = 240, cwd: Path | None = None
               ) -> subprocess.CompletedProcess:
    """Run ``python scripts/<name>.py ARGS`` and capture its output."""
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / f"{name}.py"), *map(str, args)],
        capture_output=True, text=True, timeout=timeout, env=script_env(), cwd=cwd or ROOT,
    )


@pytest.fixture(scope="session", autouse=True)
def _one_thread():
    torch.set_num_threads(1)


@pytest.fixture(scope="session", autouse=True)
def _float32_tagging():
    """Tag in float32 on every machine, in this process and the scripts it starts: the tests
    compare exact tags, which ``auto`` would compute in bfloat16 on a CPU with bf16
    instructions only (test_precision.py and test_batch_independence.py test bf16)."""
    from docgraph.config.tagging import PRECISION_ENV

    os.environ[PRECISION_ENV] = "fp32"


@pytest.fixture
def manifest_reads(monkeypatch) -> list[str]:
    """The paths of every ``manifest.json`` opened from now on in this test (by ``open`` or
    :meth:`pathlib.Path.open` and its ``read_text``/``read_bytes``)."""
    import builtins
    import io

    reads: list[str] = []

    def counting(original):
        def opener(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and Path(file).name == "manifest.json":
                reads.append(str(file))
            return original(file, *args, **kwargs)
        return opener

    monkeypatch.setattr(io, "open", counting(io.open))
    monkeypatch.setattr(builtins, "open", counting(builtins.open))
    return reads


@pytest.fixture(scope="session")
def sample_splits():
    """The bundled sample corpus (train/dev/test documents)."""
    from docgraph.data.registry import load_dataset

    return load_dataset("sample")


@pytest.fixture(scope="session")
def sample_vocabs(sample_splits):
    """Vocabularies of the sample corpus (no pretrained vectors)."""
    from docgraph.graph.splits import build_vocabularies

    vocabs, _, _ = build_vocabularies(sample_splits, "none")
    return vocabs


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory):
    """A tiny random BERT (4 layers, hidden 16, 32 positions) with a fast 15-entry WordPiece
    tokenizer, saved to a temporary directory. Tests must not write into it (copy it)."""
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    path = tmp_path_factory.mktemp("tiny-lm")
    vocab_file = path / "vocab.txt"
    vocab_file.write_text("\n".join(TINY_LM_VOCAB) + "\n")
    cls = transformers.BertTokenizerFast
    key = "vocab" if "vocab" in inspect.signature(cls.__init__).parameters else "vocab_file"
    tokenizer = cls(**{key: str(vocab_file)}, do_lower_case=True)
    tokenizer.model_max_length = TINY_LM_POSITIONS
    tokenizer.save_pretrained(path)
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(TINY_LM_VOCAB), hidden_size=16, num_hidden_layers=4,
        num_attention_heads=2, intermediate_size=32, max_position_embeddings=TINY_LM_POSITIONS)
    transformers.BertModel(config).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def encoder(tiny_lm):
    """A :class:`~docgraph.data.lm_encoder.ContextualEncoder` of :func:`tiny_lm` (context 8)."""
    from docgraph.data.lm_encoder import ContextualEncoder, ContextualSettings

    return ContextualEncoder(tiny_lm, ContextualSettings(context=8))


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory):
    """A run directory trained ONCE with a tiny config for 3 epochs; returns (dir, metrics).

    Tests must not write into it (use ``--output-dir`` elsewhere).
    """
    from docgraph.training.experiment import run_experiment

    run_dir = tmp_path_factory.mktemp("trained") / "run"
    metrics = run_experiment(tiny_config(run_dir))
    return run_dir, metrics


@pytest.fixture(scope="session")
def model_dir(trained_run):
    """The model directory of :func:`trained_run`."""
    return trained_run[0]


#: Words of the tiny pretrained vectors of :func:`vectors_run` that the sample corpus lacks.
UNSEEN_VECTOR_WORDS = ("harbourmaster", "lighthouse", "0000")


@pytest.fixture(scope="session")
def tiny_vectors(tmp_path_factory, sample_splits):
    """A GloVe-format text file of 6-dimensional random vectors: the lowercased words of the
    sample corpus's training split and :data:`UNSEEN_VECTOR_WORDS`."""
    import numpy as np

    words = sorted({w.lower() for d in sample_splits["train"] for w in d.tokens})
    words = [*words[::2], *UNSEEN_VECTOR_WORDS]  # half the words: some training words have none
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("vectors") / "tiny.6d.txt"
    path.write_text("".join(f"{w} {' '.join(f'{x:.5f}' for x in rng.normal(size=6))}\n"
                            for w in words), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def vectors_run(tmp_path_factory, tiny_vectors):
    """A tiny run trained ONCE with :func:`tiny_vectors`, frozen, training words only; returns
    (dir, metrics). Tests must not write into it."""
    from dataclasses import replace

    from docgraph.training.experiment import run_experiment

    run_dir = tmp_path_factory.mktemp("vectors-run") / "run"
    config = tiny_config(run_dir, {"freeze_embeddings": True}, epochs=2)
    config = replace(config, embeddings=str(tiny_vectors), vocab_eval_words=False)
    return run_dir, run_experiment(config)


#: Three sentences in which "Lombardi" is a person twice and an organisation once (the
#: paper's Figure 3): the hand-made document of the viz tests.
LOMBARDI_SENTENCES = [
    (["Lombardi", "joined", "Lombardi", "Bank", "."], ["B-PER", "O", "B-ORG", "I-ORG", "O"]),
    (["Lombardi", "said", "the", "bank", "grew", "."], ["B-PER", "O", "O", "O", "O", "O"]),
    (["The", "Bank", "thanked", "Mr", "Lombardi"], ["O", "B-ORG", "O", "O", "B-PER"]),
]


def lombardi_example():
    """``(document, vocabularies, graph with every neighbour)`` of :data:`LOMBARDI_SENTENCES`."""
    from docgraph.config import GraphConfig
    from docgraph.data.document import make_document
    from docgraph.data.vocab import Vocabularies
    from docgraph.graph import document_to_graph

    doc = make_document("doc-1", LOMBARDI_SENTENCES)
    vocabs = Vocabularies.build([doc])
    return doc, vocabs, document_to_graph(doc, vocabs, GraphConfig(max_neighbours=None))


#: Model sizes of the measurement tests: small enough to count the FLOPs by hand.
HAND_COUNT_MODEL = {"word_dim": 8, "char_dim": 4, "char_hidden": 4, "hidden": 6, "sent_dim": 8,
                    "uncertainty_hidden": 4, "num_samples": 2}


def three_sentence_batch():
    """``(vocabularies, batch)`` of one document of three sentences (2, 3 and 4 tokens) in
    which "Peter" and "Paris" recur."""
    from torch_geometric.data import Batch

    from docgraph.data.document import make_document
    from docgraph.data.vocab import Vocabularies
    from docgraph.graph import documents_to_graphs

    words = ["Peter", "went", "to", "Paris", "again", "."]
    doc = make_document(
        "d",
        [
            (words[:2], ["B-PER", "O"]),
            (words[2:5], ["O", "B-LOC", "O"]),
            (["Peter", "in", "Paris", "."], ["B-PER", "O", "B-LOC", "O"]),
        ],
    )
    vocabs = Vocabularies.build([doc])
    return vocabs, Batch.from_data_list(documents_to_graphs([doc], vocabs))


def half_pruning_model(vocabs, graphs, precision: str = "fp32"):
    """A small untrained GCDoc whose threshold, the median uncertainty of ``graphs``, prunes
    about half of their tokens (its tags then depend on the Monte-Carlo masks); built from the
    configuration with that threshold, as every setting is (forward pass in ``precision``)."""
    from dataclasses import replace

    from torch_geometric.data import Batch

    from docgraph.config import GCDocConfig
    from docgraph.persistence.model_dir import build_model

    torch.manual_seed(0)
    model = build_model(GCDocConfig(hidden=12, char_hidden=6, sent_dim=10, word_dim=8,
                                    char_dim=5, uncertainty_hidden=6, num_samples=3,
                                    precision=precision), vocabs).eval()
    u = model.inspect(Batch.from_data_list(graphs)).uncertainty
    pruning = build_model(replace(model.config, threshold=float(u.median())), vocabs)
    pruning.load_state_dict(model.state_dict())
    return pruning.eval()


def child_processes(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux ``/proc``), multiprocessing's resource tracker
    left out, in the order they were started (by pid)."""
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children += [int(c) for c in (task / "children").read_text().split()]
    return sorted(c for c in children if process_alive(c)
                  and b"resource_tracker" not in Path(f"/proc/{c}/cmdline").read_bytes())


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def still_running(pids, seconds: float) -> list[int]:
    """The processes of ``pids`` still running ``seconds`` from now (checked until then)."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        running = [p for p in pids if process_alive(p)]
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.1)


needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir(),
                                reason="needs Linux /proc to find child processes")


@pytest.fixture(scope="session")
def packed(vectors_run, tmp_path_factory):
    """The tiny model of ``vectors_run`` packed (float32), with its summary."""
    from docgraph.persistence.packing import pack_model_dir

    run_dir, _ = vectors_run
    target = tmp_path_factory.mktemp("packed") / "tiny"
    return run_dir, pack_model_dir(run_dir, target, dtype="float32")
