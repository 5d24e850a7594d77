"""Tests of :mod:`docgraph.graph.splits`: a corpus split made ready for the model
(vocabularies, chunks, graphs and their contextual features)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from conftest import needs_transformers, plain_document, tiny_config


@needs_transformers
def test_features_of_chunked_documents_come_from_the_whole_documents(tiny_lm, sample_vocabs):
    # --max-doc-tokens splits a long document into chunks; its LM features are computed on the
    # whole document, so a chunk's first sentence keeps the context before it.
    from docgraph.data.lm_encoder import ContextualEncoder, ContextualSettings
    from docgraph.graph.splits import prepare_split

    encoder = ContextualEncoder(tiny_lm, ContextualSettings(context=8))
    docs = [plain_document("a", "the cat sat", "on the mat", "the dog sat", "dog run")]
    config = tiny_config("unused")
    config = replace(config, lm="unused", graph=replace(config.graph, max_doc_tokens=6))
    split = prepare_split(docs, sample_vocabs, config, lm_encoder=encoder)
    assert len(split.graphs) >= 2  # chunked
    got = np.concatenate([g.lm.numpy() for g in split.graphs])
    np.testing.assert_allclose(got, encoder.encode(docs), atol=1e-5)
    assert not np.allclose(got, encoder.encode(split.documents), atol=1e-3)


def test_build_vocabularies_adds_the_dev_and_test_words_that_have_vectors(tmp_path):
    from docgraph.graph.splits import build_vocabularies

    splits = {"train": [plain_document("t", "the cat sat")],
              "dev": [plain_document("d", "the dog sat")], "test": [plain_document("e", "a mat")]}
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("dog 0.5 -1.0\nmat 0.25 2.0\n")
    vocabs, matrix, _ = build_vocabularies(splits, str(vectors))
    assert {"the", "cat", "sat", "dog", "mat"} <= set(vocabs.words.lookup(range(len(vocabs.words))))
    assert "a" not in vocabs.words  # a dev/test word without a vector stays unknown
    assert tuple(matrix.shape) == (len(vocabs.words), 2)
    dog, mat = vocabs.words.indices(["dog", "mat"])
    assert matrix[dog].tolist() == [0.5, -1.0] and matrix[mat].tolist() == [0.25, 2.0]
    plain, no_matrix, no_coverage = build_vocabularies(splits, "none")
    assert no_matrix is None and no_coverage is None and "dog" not in plain.words


def test_prepared_split_chunks_and_keeps_documents_and_graphs_aligned(sample_splits,
                                                                      sample_vocabs):
    from docgraph.config import ExperimentConfig
    from docgraph.graph.splits import prepare_split

    docs = sample_splits["dev"][:6]
    config = ExperimentConfig()
    config = replace(config, graph=replace(config.graph, max_doc_tokens=40))
    split = prepare_split(docs, sample_vocabs, config)
    assert len(split.documents) > len(docs)  # chunked
    assert [d.doc_id for d in split.documents] == [g.doc_id for g in split.graphs]
    assert [d.num_tokens for d in split.documents] == [int(g.num_nodes) for g in split.graphs]
    assert all(d.num_tokens <= 40 or len(d.sentences) == 1 for d in split.documents)
    assert split.num_tokens == sum(d.num_tokens for d in docs)
    assert [t for d in split.documents for t in d.tokens] == [t for d in docs for t in d.tokens]


def test_dev_labels_of_a_training_type_join_the_label_vocabulary():
    from docgraph.data.document import make_document
    from docgraph.graph.splits import build_vocabularies, with_evaluation_labels

    def doc(doc_id, tags):
        return make_document(doc_id, [(["a", "b", "c"], tags)])

    train = [doc("t", ["B-PER", "I-PER", "O"])]
    dev = [doc("d", ["B-PER", "I-PER", "I-PER"]), doc("e", ["B-DATE", "O", "O"])]
    vocabs = build_vocabularies({"train": train, "dev": dev}, "none")[0]
    assert vocabs.labels.tokens == ["O", "B-PER", "I-PER", "E-PER"]  # I-PER of dev; no DATE
    assert with_evaluation_labels(vocabs, {"train": train, "dev": dev}) is vocabs
