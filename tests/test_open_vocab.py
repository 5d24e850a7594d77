"""The open vocabulary (docgraph/data/open_vocab.py, GCDoc.open_vocabulary/embed_words and
load_model_dir's ModelOverrides.open_vocabulary): words outside a model's vocabulary that have
a pretrained vector get it, by the lookup order of the vocabulary's own vectors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from docgraph.data.open_vocab import OpenVocab, PretrainedTable, unknown_share
from docgraph.data.vocab import Vocab
from docgraph.runtime.integrity import write_sealed_json

TABLE_WORDS = ["paris", "Berlin", "berlin", "0000", "rome", "paris"]  # "paris" twice


def table(calls: list | None = None) -> PretrainedTable:
    matrix = np.arange(len(TABLE_WORDS) * 3, dtype=np.float32).reshape(-1, 3)

    def load():
        if calls is not None:
            calls.append(1)
        return TABLE_WORDS, matrix

    return PretrainedTable(load, name="test")


def closed() -> Vocab:
    return Vocab(["<pad>", "<unk>", "the", "Rome"], pad_token="<pad>", unk_token="<unk>")


def test_table_is_read_on_the_first_word_outside_the_vocabulary():
    calls: list = []
    vocab = OpenVocab(closed(), table(calls))
    assert vocab.indices(["the", "Rome"]) == [2, 3]
    assert calls == [] and not vocab.table.loaded
    vocab.index("Paris")
    assert calls == [1]
    vocab.index("Berlin")
    assert calls == [1]  # read once


def test_lookup_order_exact_then_lowercase_then_digits():
    vocab = OpenVocab(closed(), table())
    n = len(closed())
    assert vocab.index("Berlin") == n + 1  # exact form first
    assert vocab.index("BERLIN") == n + 2  # then lowercase
    assert vocab.index("PARIS") == n + 0  # a duplicated word: its first row
    assert vocab.index("1996") == n + 3  # then digits normalised
    assert vocab.index("Madrid") == vocab.unk_index  # no vector: <unk>
    assert vocab.index("Rome") == 3  # the vocabulary's own entry wins over the table's "rome"
    assert vocab.indices(["the", "Paris", "Madrid"]) == [2, n, 1]


def test_open_vocab_keeps_the_closed_size_lookup_and_saved_form():
    vocab = OpenVocab(closed(), table())
    assert len(vocab) == len(closed())
    ids = vocab.indices(["Rome", "BERLIN", "1996"])
    assert vocab.lookup(ids) == ["Rome", "berlin", "0000"]
    assert vocab.to_dict() == closed().to_dict()
    with pytest.raises(IndexError):
        vocab.lookup([len(closed()) + len(TABLE_WORDS)])


def test_open_vocab_needs_an_unknown_entry():
    with pytest.raises(ValueError, match="unknown entry"):
        OpenVocab(Vocab(["a"]), table())


def test_unknown_share():
    assert unknown_share(closed(), ["the", "Paris", "x", "Rome"]) == 0.5
    assert unknown_share(OpenVocab(closed(), table()), ["the", "Paris", "x", "Rome"]) == 0.25
    assert unknown_share(closed(), []) == 0.0


def test_table_vectors_reads_the_rows():
    t = table()
    rows = t.vectors(torch.tensor([4, 0, 4]))
    assert rows.dtype == torch.float32
    assert rows.tolist() == [[12, 13, 14], [0, 1, 2], [12, 13, 14]]


def _tiny_model(num_words: int = 5, word_dim: int = 3):
    from docgraph.model import GCDoc, GCDocConfig

    config = GCDocConfig(word_dim=word_dim, hidden=4, char_dim=2, char_hidden=2, sent_dim=4,
                         uncertainty_hidden=2, num_samples=2)
    return GCDoc(config, num_words=num_words, num_chars=4, num_labels=3,
                 label_to_type=[0, 1, 1])


def test_embed_words_against_a_concatenated_table():
    torch.manual_seed(0)
    model = _tiny_model()
    vectors = torch.randn(7, 3)
    ids = torch.tensor([0, 3, 5, 11, 4, 5, 6])
    assert torch.equal(model.embed_words(ids[:2]), model.word_embedding(ids[:2]))
    model.open_vocabulary(vectors)
    expected = torch.cat([model.word_embedding.weight, vectors])[ids]
    assert torch.equal(model.embed_words(ids), expected)
    model.open_vocabulary(lambda rows: vectors[rows])  # a function of the row ids
    assert torch.equal(model.embed_words(ids), expected)
    model.open_vocabulary(None)
    with pytest.raises(IndexError):
        model.embed_words(ids)


def test_open_vocabulary_refuses_vectors_of_another_width():
    model = _tiny_model()
    with pytest.raises(ValueError, match="word_dim 3"):
        model.open_vocabulary(torch.zeros(4, 5))
    model.open_vocabulary(lambda rows: torch.zeros(len(rows), 5))
    with pytest.raises(ValueError, match="word_dim 3"):
        model.embed_words(torch.tensor([7]))


def test_embed_words_keeps_gradients_of_the_trained_rows():
    model = _tiny_model()
    model.open_vocabulary(torch.randn(3, 3))
    model.embed_words(torch.tensor([2, 6])).sum().backward()
    grad = model.word_embedding.weight.grad
    assert grad[2].abs().sum() > 0 and grad[0].abs().sum() == 0  # 0: the placeholder row


# ------------------------------------------------------------------ through load_model_dir
def test_loaded_model_tags_an_unseen_word_with_its_vector(vectors_run):
    """Brute force: a word outside the vocabulary, tagged with the open vocabulary, gets the
    tags of the same model whose vocabulary and embedding were extended by hand with that
    word's pretrained vector."""
    from dataclasses import replace

    from docgraph.data.embeddings import load_embeddings
    from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
    from docgraph.tagging.tagger import Tagger

    run_dir, _ = vectors_run
    words = ["Kestrel", "beat", "harbourmaster", "Carrow", "at", "Lowmoor", "on", "Saturday", "."]
    opened = Tagger.load(run_dir)
    shut = Tagger.load(run_dir, open_vocabulary=False)
    assert "harbourmaster" not in shut.vocabs.words
    assert opened.vocabs.words.index("harbourmaster") >= len(shut.vocabs.words)
    assert shut.vocabs.words.index("harbourmaster") == shut.vocabs.words.unk_index

    model, vocabs, config = load_model_dir(run_dir, overrides=ModelOverrides(open_vocabulary=False))
    table_words, matrix = load_embeddings(config.embeddings)
    row = table_words.index("harbourmaster")
    extended = Vocab([*vocabs.words.tokens, "harbourmaster"], pad_token="<pad>", unk_token="<unk>")
    with torch.no_grad():
        weight = torch.cat([model.word_embedding.weight, torch.from_numpy(matrix[row:row + 1])])
    model.word_embedding = torch.nn.Embedding.from_pretrained(weight, freeze=True, padding_idx=0)
    brute = Tagger(model, replace(vocabs, words=extended), config)
    assert opened.tag([[words]])[1] == brute.tag([[words]])[1]
    embedded = opened.model.embed_words(torch.tensor([opened.vocabs.words.index("harbourmaster")]))
    assert torch.equal(embedded[0], torch.from_numpy(matrix[row]))


def test_model_without_pretrained_vectors_stays_closed(model_dir):
    from docgraph.tagging.tagger import Tagger

    tagger = Tagger.load(model_dir)
    assert not isinstance(tagger.vocabs.words, OpenVocab)
    assert tagger.model.open_vectors is None


def test_missing_vectors_leave_the_vocabulary_closed_with_a_warning(vectors_run, tmp_path,
                                                                    caplog):
    import json
    import shutil

    from docgraph.tagging.tagger import Tagger

    run_dir, _ = vectors_run
    moved = tmp_path / "moved"
    shutil.copytree(run_dir, moved)
    config = json.loads((moved / "config.json").read_text())
    config["embeddings"] = str(tmp_path / "gone.txt")
    write_sealed_json(moved / "config.json", config)
    with caplog.at_level("WARNING"):
        tagger = Tagger.load(moved)
    assert not isinstance(tagger.vocabs.words, OpenVocab)
    assert "open vocabulary off" in caplog.text and "gone.txt" in caplog.text


def test_the_first_id_past_the_closed_vocabulary_is_the_tables_first_row():
    """Class: the open-vocabulary boundary id (``len(closed)``)."""
    vocab = OpenVocab(closed(), table())
    first = len(closed())
    assert vocab.lookup([first]) == [TABLE_WORDS[0]]
    assert vocab.lookup([first - 1, first, first + 1]) == ["Rome", "paris", "Berlin"]
    assert vocab.index("paris") == first  # row 0 of the table


def test_a_case_variant_of_a_vocabulary_word_gets_the_pretrained_row():
    """Class: the case-variant rule. Trained rows are keyed by the exact form; a case variant
    the vocabulary does not hold (``rOME``, ``ROME``) gets the pretrained vector of its
    lowercase form, as an unseen word does, not the trained row of ``Rome``."""
    vocab = OpenVocab(closed(), table())
    rome_row = TABLE_WORDS.index("rome")
    assert vocab.index("Rome") == closed().index("Rome")
    for variant in ("rOME", "ROME", "rome"):
        assert vocab.index(variant) == len(closed()) + rome_row, variant
