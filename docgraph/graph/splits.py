"""A split of a corpus made ready for the model: vocabularies, chunks and document graphs.

The one step from :class:`~docgraph.data.document.Document` objects (strings) to the
:class:`~docgraph.graph.DocumentGraph` objects (ids and edges) the model reads, shared by
training (:mod:`docgraph.training.experiment`), tagging (:mod:`docgraph.tagging.inference`,
:class:`~docgraph.tagging.tagger.Tagger`) and the tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from torch import Tensor

from docgraph.config import ExperimentConfig
from docgraph.data.augment import augmented_words
from docgraph.data.chunking import split_long_documents
from docgraph.data.document import Document
from docgraph.data.embeddings import (
    build_embedding_matrix,
    load_embeddings,
    words_with_vectors,
)
from docgraph.data.lm_encoder import ContextualEncoder
from docgraph.data.registry import load_dataset
from docgraph.data.tags import entity_type, iob2_to_bioes
from docgraph.data.vocab import Vocab, Vocabularies, label_sort_key
from docgraph.graph.build import DocumentGraph, attach_token_features, documents_to_graphs


@dataclass
class PreparedSplit:
    """Documents of one split (after chunking) and their graphs, index-aligned."""

    documents: list[Document]
    graphs: list[DocumentGraph]

    @property
    def num_tokens(self) -> int:
        """Tokens in the split."""
        return sum(int(g.num_nodes) for g in self.graphs)


def build_vocabularies(
    splits: dict[str, list[Document]], embeddings: str, eval_words: bool = True,
    train_cases: Sequence[str] = ("cased",),
) -> tuple[Vocabularies, Tensor | None, dict | None]:
    """Vocabularies from the training split and the rows of the pretrained vectors they need.

    With ``eval_words``, words of dev/test that have a pretrained vector are added to the word
    vocabulary (so their vectors are usable); words of the training data without one get a
    random vector. ``train_cases`` (:mod:`docgraph.data.augment`): the forms in which the
    training words are seen; each form gets a row of its own, as a training word does.
    """
    vectors = load_embeddings(embeddings)
    extra: list[str] = augmented_words(splits["train"], train_cases)
    if vectors is not None and eval_words:
        candidates = (w for name, docs in splits.items() if name != "train"
                      for doc in docs for w in doc.tokens)
        extra += words_with_vectors(candidates, vectors[0])
    vocabs = with_evaluation_labels(Vocabularies.build(splits["train"], extra_words=extra),
                                    splits)
    if vectors is None:
        return vocabs, None, None
    matrix, coverage = build_embedding_matrix(vocabs.words, vectors[0], vectors[1], seed=0)
    return vocabs, matrix, coverage


def with_evaluation_labels(vocabs: Vocabularies,
                           splits: dict[str, list[Document]]) -> Vocabularies:
    """``vocabs`` with the BIOES labels of the dev and test documents whose entity type the
    label vocabulary has (a type seen in training; e.g. ``I-PER`` of a three-word name in dev
    when the few training documents have none), so that those splits can be scored; a type
    that only dev or test has is left out (and refused when their graphs are built)."""
    types = {entity_type(label) for label in vocabs.labels}
    found = {label for name, docs in splits.items() if name != "train" for doc in docs
             for sentence in doc.sentences for label in iob2_to_bioes(sentence.tags)
             if label not in vocabs.labels and entity_type(label) in types}
    if not found:
        return vocabs
    labels = Vocab(sorted({*vocabs.labels, *found}, key=label_sort_key))
    return Vocabularies(vocabs.words, vocabs.chars, labels)


def prepare_split(
    documents: Sequence[Document], vocabs: Vocabularies, config: ExperimentConfig,
    lm_features: Tensor | None = None, lm_encoder: ContextualEncoder | None = None,
) -> PreparedSplit:
    """Chunk long documents and build their graphs.

    With ``config.lm`` the graphs also get the contextual word features ``lm``, computed on the
    whole documents (before chunking): ``lm_features`` (``[T, H]`` rows in token order, e.g.
    from :func:`~docgraph.data.contextual.cached_features`) when given, else on the fly with
    ``lm_encoder`` (a :class:`~docgraph.data.contextual.ContextualEncoder`, loaded from
    ``config.lm`` when ``None``).
    """
    docs = split_long_documents(list(documents), config.graph.max_doc_tokens)
    graphs = documents_to_graphs(docs, vocabs, config.graph_config())
    if config.lm is not None:
        if lm_features is None:
            if lm_encoder is None:
                lm_encoder = ContextualEncoder.from_config(config)
            lm_features = lm_encoder.encode(list(documents))
        attach_token_features(graphs, lm_features)
    return PreparedSplit(docs, graphs)


def prepare_run_split(
    config: ExperimentConfig, vocabs: Vocabularies, split: str, data_dir: str | None = None
) -> PreparedSplit:
    """Split ``split`` of a trained run's data set, prepared as the run prepared it.

    Args:
        config: The run's configuration (from
        :func:`~docgraph.persistence.model_dir.load_model_dir`).
        vocabs: The run's vocabularies.
        split: ``"train"``, ``"dev"`` or ``"test"``.
        data_dir: Corpus directory (default: the run's, else ``DOCGRAPH_DATA_DIR``).
    """
    documents = load_dataset(config.dataset, data_dir if data_dir is not None
                             else config.data_dir, splits=(split,))[split]
    return prepare_split(documents, vocabs, config)
