"""Starting a run from a trained model (``train.py --init-from MODEL``): its weights, its
vocabularies grown by the new data, and output layers grown by the entity types it lacks.

* **Words.** The model's word vocabulary keeps its entries and their ids; the words of the new
  data it lacks (the training words, their case variants, and with ``vocab_eval_words`` the
  dev/test words that have a pretrained vector, as for any run) are appended, each with its
  pretrained row (:func:`~docgraph.data.embeddings.build_embedding_matrix`: exact form, then
  lowercase, then digits normalised; the model's ``<unk>`` row without one, as the model read
  that word). The embedding matrix grows; the old rows are the model's, bit for bit.
* **Characters.** New characters are appended, each starting as the model's ``<unk>``
  character row. So the run's first forward pass is the model's own (with its open
  vocabulary) on any text of its types.
* **Entity types.** The label vocabulary becomes the union of the model's labels, the data's,
  the four BIOES labels of each type the model lacks (so that an entity of any length of it
  can be tagged) and the dev/test labels of those types, in the usual order
  (:func:`~docgraph.data.vocab.label_sort_key`). Every weight indexed by label -- the emission
  layer, the uncertainty tagger's dense layer and the CRF's start, end and transition scores
  (:data:`LABEL_ROWS`) -- keeps the model's values for the model's labels; the rows of a new
  label are freshly initialised (as a new model's are). The buffers derived from the labels
  (the type of each label, the BIOES constraint masks: :data:`DERIVED`) are rebuilt for the
  new label set. The relation classifier scores pairs of token states and has no label
  dimension; its targets follow the rebuilt label types.
* **Types kept.** With ``new_types`` off (``--no-new-types``) a type the model lacks is an
  error naming the file, the line, the document and the span (:func:`check_types`), raised
  before any graph is built.
* **A language model added.** A model trained without a language model may be given one
  (``--lm``, :func:`docgraph.config.init_from.adds_language_model`): its features are the
  last columns of the context encoder's input, and the input weights of that encoder
  (:data:`LM_COLUMNS`) gain those columns as zeros. The features then change nothing until
  training moves them, and the run's first forward pass is the model's.
* **Types the data does not annotate** (:class:`~docgraph.config.fine_tune.FineTuneConfig`):
  the model's entities of those types kept as silver labels where the data has no span
  (:func:`with_silver`), or a token tagged ``O`` allowed any label of those types in the loss
  (:func:`label_lattice`).
* **Everything else** is copied; a tensor whose shape differs is an error (the architecture
  settings come from the model, :mod:`docgraph.config.init_from`).

The model is read with ``weights_only=True``
(:func:`~docgraph.persistence.model_dir.load_model_weights`); a packed model's 16-bit or 8-bit
tensors are read back into float32 parameters, and the words a packed model left out (their
rows were their pretrained vectors) come back as new words with those same vectors.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from docgraph.config import ExperimentConfig, GCDocConfig
from docgraph.config.errors import DocgraphError
from docgraph.config.init_from import architecture_conflicts
from docgraph.data.augment import augmented_words
from docgraph.data.document import Document
from docgraph.data.embeddings import build_embedding_matrix, load_embeddings, words_with_vectors
from docgraph.data.tags import entity_type, from_spans, spans
from docgraph.data.vocab import PAD, UNK, Vocab, Vocabularies, label_sort_key, label_types
from docgraph.graph.splits import with_evaluation_labels
from docgraph.model import GCDoc
from docgraph.persistence.locate import read_model_files
from docgraph.persistence.model_dir import build_model, load_model_weights, read_model_dir

__all__ = ["DERIVED", "LABEL_ROWS", "LM_COLUMNS", "OUTPUT_PARTS", "Growth", "InitFromError",
           "InitModel", "annotated_types", "check_types", "grow_vocabularies", "initial_model",
           "initial_state", "label_lattice", "label_map", "load_init_model",
           "train_only_output", "with_silver", "without_types"]

log = logging.getLogger("docgraph")

#: The weights indexed by label: state-dict key -> the dimensions that run over the labels.
LABEL_ROWS: Mapping[str, tuple[int, ...]] = {
    "emission.weight": (0,),
    "emission.bias": (0,),
    "document_graph.uncertainty.lin.weight": (0,),
    "document_graph.uncertainty.lin.bias": (0,),
    "crf.crf.start_transitions": (0,),
    "crf.crf.end_transitions": (0,),
    "crf.crf.transitions": (0, 1),
}

#: Buffers computed from the label vocabulary: the new model's are kept.
DERIVED = ("label_to_type", "crf.allowed_transitions", "crf.allowed_start", "crf.allowed_end")

#: The weights that read a language model's features, in their last columns.
LM_COLUMNS = ("context_encoder.lstm.weight_ih_l0", "context_encoder.lstm.weight_ih_l0_reverse")

#: Embedding tables that grow by rows appended to the model's.
WORDS, CHARS = "word_embedding.weight", "char_encoder.embedding.weight"


class InitFromError(DocgraphError, ValueError):
    """A model that a run cannot start from (the message names the model and the reason)."""


@dataclass
class InitModel:
    """A trained model read to start a run from.

    Args:
        name: The model as given (a shipped model's name or a directory).
        directory: Its model directory.
        config: Its saved configuration (``lm`` pointing at its checked language model).
        vocabs: Its vocabularies.
        state: Its weights, float32.
    """

    name: str
    directory: Path
    config: ExperimentConfig
    vocabs: Vocabularies
    state: dict[str, Tensor]

    @property
    def types(self) -> list[str]:
        """The entity types the model tags."""
        return label_types(self.vocabs.labels)[0][1:]


def load_init_model(model: str | Path) -> InitModel:
    """Read the model ``model`` (a shipped model's name or a model directory) to start a run
    from: its configuration, vocabularies and float32 weights (read with
    ``weights_only=True``).

    Raises:
        CheckpointError: It is not a readable model directory (the message names it).
    """
    files = read_model_files(model)
    config, vocabs = read_model_dir(files)
    weights = load_model_weights(files.directory, config, vocabs)
    state = {k: v.detach().clone() for k, v in weights.state_dict().items()}
    return InitModel(str(model), files.directory, config, vocabs, state)


@dataclass
class Growth:
    """What a run's vocabularies add to its starting model's.

    Args:
        model: The starting model as given.
        directory: Its directory.
        words: Words appended to the model's word vocabulary.
        word_vectors: How the appended words found their pretrained rows (counts of
            :func:`~docgraph.data.embeddings.build_embedding_matrix`; ``None`` without
            vectors).
        characters: Characters appended.
        added_types: Entity types of the data the model lacked (its output layers grew).
        model_types: The model's entity types.
        types_not_in_data: The model's types that the training data does not have (kept).
    """

    model: str
    directory: str
    words: int
    word_vectors: dict[str, int] | None
    characters: int
    added_types: list[str]
    model_types: list[str]
    types_not_in_data: list[str]

    def to_dict(self) -> dict[str, Any]:
        """The record of ``metrics.json`` (``"init_from"``)."""
        return {"model": self.model, "directory": self.directory, "added_words": self.words,
                "added_word_vectors": self.word_vectors, "added_characters": self.characters,
                "added_types": self.added_types, "model_types": self.model_types,
                "types_not_in_data": self.types_not_in_data}


def _unk_row(init: InitModel, key: str, vocab: Vocab) -> Tensor:
    """The model's row of ``<unk>`` in the table ``key`` (zeros without an unknown entry)."""
    weight = init.state[key]
    return weight[vocab.unk_index].clone() if vocab.unk_index is not None \
        else weight.new_zeros(weight.size(1))


def _appended(old: Vocab, new: Sequence[str]) -> tuple[Vocab, list[str]]:
    """``old`` with the entries of ``new`` it lacks appended (in ``new``'s order)."""
    known = set(old)
    added = [t for t in dict.fromkeys(new) if t not in known]
    return Vocab([*old.tokens, *added], pad_token=old.pad_token, unk_token=old.unk_token), added


def grow_vocabularies(init: InitModel, splits: Mapping[str, Sequence[Document]],
                      embeddings: str, eval_words: bool = True,
                      train_cases: Sequence[str] = ("cased",)
                      ) -> tuple[Vocabularies, Tensor, Growth]:
    """The model's vocabularies grown by the data of ``splits`` (see the module docstring),
    the embedding rows of the appended words (``[added words, word_dim]``) and what was
    added. The words are chosen as :func:`~docgraph.graph.splits.build_vocabularies` chooses
    a new run's."""
    vectors = load_embeddings(embeddings)
    extra: list[str] = augmented_words(list(splits["train"]), train_cases)
    if vectors is not None and eval_words:
        candidates = (w for name, docs in splits.items() if name != "train"
                      for doc in docs for w in doc.tokens)
        extra += words_with_vectors(candidates, vectors[0])
    data = Vocabularies.build(splits["train"], extra_words=extra)
    words, added_words = _appended(init.vocabs.words, data.words.tokens)
    chars, added_chars = _appended(init.vocabs.chars, data.chars.tokens)
    data_types = label_types(data.labels)[0][1:]
    added_types = [t for t in data_types if t not in init.types]
    labels = Vocab(sorted({*init.vocabs.labels, *data.labels,
                           *(f"{p}-{t}" for t in added_types for p in "BIES")},
                          key=label_sort_key))
    labels = with_evaluation_labels(Vocabularies(words, chars, labels), splits).labels
    dim = init.config.model.word_dim
    coverage = None
    if vectors is None:  # no vectors: every new word starts as the model reads it, <unk>
        rows = _unk_row(init, WORDS, init.vocabs.words).expand(len(added_words), dim).clone()
    else:
        table, coverage = build_embedding_matrix(Vocab([PAD, UNK, *added_words], PAD, UNK),
                                                 vectors[0], vectors[1], seed=0)
        rows = table[2:]
        if rows.size(1) != dim:
            raise InitFromError(f"--init-from {init.name}: its word rows have {dim} "
                                f"dimensions but the vectors {embeddings} have {rows.size(1)}")
        # a word without a vector starts as the model reads it: as <unk>
        found = set(words_with_vectors(added_words, vectors[0]))
        unknown = [i for i, w in enumerate(added_words) if w not in found]
        if unknown:
            rows[torch.tensor(unknown)] = _unk_row(init, WORDS, init.vocabs.words)
    growth = Growth(init.name, str(init.directory), len(added_words), coverage,
                    len(added_chars), added_types, init.types,
                    [t for t in init.types if t not in data_types])
    return Vocabularies(words, chars, labels), rows, growth


def _unknown_entity(documents: Sequence[Document], known: set[str]
                    ) -> tuple[Document, int, int, int, str] | None:
    """The first entity of ``documents`` whose type is not in ``known``: ``(document,
    sentence index, first token, end token, type)``."""
    for doc in documents:
        for s, sentence in enumerate(doc.sentences):
            tags = sentence.tags
            for i, tag in enumerate(tags):
                if tag.startswith("B-") and tag[2:] not in known:
                    end = i + 1
                    while end < len(tags) and tags[end] == f"I-{tag[2:]}":
                        end += 1
                    return doc, s, i, end, tag[2:]
    return None


def _line_of(path: Path, kind: str, first_token: str) -> int | None:
    """The 1-based line of ``path`` where an entity of type ``kind`` starts: a span JSON line
    with a span of that type, or a column line of the entity's first token tagged with it
    (``None`` for another format or when none is found)."""
    if path.suffix == ".gz" or not path.is_file():
        return None
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    for number, line in enumerate(lines, 1):
        if path.suffix == ".jsonl":
            try:
                record = json.loads(line)
            except ValueError:
                continue
            spans = [record.get(k) for k in ("spans", "entities", "label")] \
                if isinstance(record, dict) else []
            if any(isinstance(item, list) and len(item) >= 3 and item[2] == kind
                   for found in spans if isinstance(found, list) for item in found):
                return number
        else:
            fields = line.split()
            if len(fields) >= 2 and fields[0] == first_token and fields[-1].endswith(f"-{kind}"):
                return number
    return None


def check_types(init: InitModel, splits: Mapping[str, Sequence[Document]],
                files: Mapping[str, Path]) -> None:
    """Raise :class:`InitFromError` for the first entity of ``splits`` whose type the model
    lacks (a run that keeps the model's types, ``--no-new-types``), naming the file of its
    split (``files``) and the line where it is found, the document, the sentence and the
    span."""
    known = set(init.types)
    for split, documents in splits.items():
        found = _unknown_entity(documents, known)
        if found is None:
            continue
        doc, s, start, end, kind = found
        words = doc.sentences[s].tokens[start:end]
        path = files.get(split)
        line = None if path is None else _line_of(Path(path), kind, words[0])
        where = f"{path}:{line}" if line is not None else str(path or split)
        raise InitFromError(
            f"{where}: entity {' '.join(words)!r} of type {kind} (document {doc.doc_id!r}, "
            f"sentence {s + 1}, tokens {start + 1}-{end}) is not one of the types of "
            f"--init-from {init.name} ({', '.join(sorted(known))}); --no-new-types keeps the "
            "model's types (without it the type is added)")


def label_map(old: Vocab, new: Vocab) -> tuple[Tensor, Tensor]:
    """``(new ids, old ids)`` of the labels both vocabularies hold.

    Raises:
        InitFromError: ``new`` lacks a label of ``old``.
    """
    lost = [t for t in old if t not in new]
    if lost:
        raise InitFromError(f"the new label vocabulary lacks the model's labels {lost}")
    pairs = [(new.index(t), i) for i, t in enumerate(old)]
    return (torch.tensor([p[0] for p in pairs], dtype=torch.long),
            torch.tensor([p[1] for p in pairs], dtype=torch.long))


def initial_state(old: Mapping[str, Tensor], fresh: Mapping[str, Tensor], old_labels: Vocab,
                  new_labels: Vocab, word_rows: Tensor, where: str = "the model",
                  char_unk: int | None = None) -> dict[str, Tensor]:
    """The starting weights of a model whose freshly initialised state is ``fresh``: the
    model's weights ``old`` copied into it (see the module docstring), ``word_rows`` appended to
    its word embedding; the rows of new characters are the model's row ``char_unk`` (its
    ``<unk>``) when given; the added columns of :data:`LM_COLUMNS` are zeros.

    Raises:
        InitFromError: A tensor of ``old`` has no place in ``fresh`` (naming ``where``).
    """
    missing = sorted(set(old) - set(fresh) - set(DERIVED))
    if missing:
        raise InitFromError(f"{where}: the new model has no {missing[0]}")
    new_ids, old_ids = label_map(old_labels, new_labels)
    out: dict[str, Tensor] = {}
    for key, start in fresh.items():
        if key in DERIVED:
            out[key] = start.clone()
            continue
        if key not in old:
            raise InitFromError(f"{where}: it has no {key}")
        weight = old[key].to(start.dtype)
        if key == WORDS:
            out[key] = torch.cat([weight, word_rows.to(start.dtype)])
            if out[key].shape != start.shape:
                raise InitFromError(f"{where}: {key} of {list(weight.shape)} and "
                                    f"{word_rows.size(0)} new rows do not make "
                                    f"{list(start.shape)}")
        elif key == CHARS and weight.dim() == 2 and weight.size(1) == start.size(1) \
                and weight.size(0) <= start.size(0):
            out[key] = start.clone()
            out[key][:weight.size(0)] = weight
            if char_unk is not None:  # a new character starts as the model reads it
                out[key][weight.size(0):] = weight[char_unk]
        elif key in LM_COLUMNS and weight.dim() == 2 and weight.size(0) == start.size(0) \
                and weight.size(1) < start.size(1):
            out[key] = torch.zeros_like(start)  # the added features start unread
            out[key][:, :weight.size(1)] = weight
        elif key in LABEL_ROWS:
            out[key] = start.clone()
            if LABEL_ROWS[key] == (0, 1):
                out[key][new_ids.unsqueeze(1), new_ids] = weight[old_ids.unsqueeze(1), old_ids]
            else:
                out[key][new_ids] = weight[old_ids]
        elif weight.shape != start.shape:
            raise InitFromError(f"{where}: {key} is {list(weight.shape)} in the model but "
                                f"{list(start.shape)} in the new one")
        else:
            out[key] = weight.clone()
    return out


def initial_model(init: InitModel, config: GCDocConfig, vocabs: Vocabularies,
                  word_rows: Tensor) -> GCDoc:
    """The model a run starts from: built for ``vocabs`` with ``config`` (whose architecture
    must be the model's), its parameters drawn as a new model's (seed the generators first),
    then the model's weights put in (:func:`initial_state`).

    Raises:
        InitFromError: ``config`` changes the model's architecture.
    """
    conflicts = architecture_conflicts(config, init.config.model)
    if conflicts:
        raise InitFromError(f"--init-from {init.name}: the run's {conflicts[0]}; a run that "
                            "starts from a model keeps its architecture")
    model = build_model(config, vocabs)
    state = initial_state(init.state, model.state_dict(), init.vocabs.labels, vocabs.labels,
                          word_rows, where=f"--init-from {init.name}",
                          char_unk=init.vocabs.chars.unk_index)
    model.load_state_dict(state)
    return model


#: The modules of :class:`~docgraph.model.GCDoc` that ``--tune output`` trains.
OUTPUT_PARTS = ("emission", "crf")


def train_only_output(model: GCDoc) -> int:
    """Freeze every parameter of ``model`` but those of :data:`OUTPUT_PARTS`; returns how many
    weights still train."""
    trained = 0
    for name, parameter in model.named_parameters():
        train = name.split(".")[0] in OUTPUT_PARTS
        parameter.requires_grad_(train)
        trained += parameter.numel() if train else 0
    return trained


def annotated_types(documents: Sequence[Document]) -> set[str]:
    """The entity types that ``documents`` annotate (have at least one entity of)."""
    return {entity_type(tag) for doc in documents for sentence in doc.sentences
            for tag in sentence.tags} - {"O"}


def without_types(document: Document, types: Collection[str]) -> Document:
    """``document`` with its spans of ``types`` taken out (their tokens ``O``)."""
    unwanted = set(types)
    sentences = []
    for sentence in document.sentences:
        own = spans(sentence.tags)
        kept = [span for span in own if span[0] not in unwanted]
        if len(kept) != len(own):
            sentence = replace(sentence, tags=tuple(from_spans(kept, len(sentence))))
        sentences.append(sentence)
    return replace(document, sentences=tuple(sentences))


def with_silver(document: Document, predicted: Sequence[Sequence[str]],
                types: Collection[str]) -> tuple[Document, int]:
    """``document`` with the entities of ``predicted`` (IOB2 tags per sentence, e.g. the
    starting model's) whose type is one of ``types`` added as labels, each where every token
    of its span is ``O`` in the document (the document's own spans always win); and how many
    were added."""
    if len(predicted) != len(document.sentences):
        raise ValueError(f"document {document.doc_id!r}: {len(predicted)} sentences of "
                         f"predictions for {len(document.sentences)}")
    wanted = set(types)
    sentences, added = [], 0
    for sentence, tags in zip(document.sentences, predicted):
        own = spans(sentence.tags)
        taken = {i for _, start, end in own for i in range(start, end)}
        silver = [(kind, start, end) for kind, start, end in spans(tags)
                  if kind in wanted and not taken.intersection(range(start, end))]
        if silver:
            merged = sorted([*own, *silver], key=lambda span: span[1])
            sentence = replace(sentence, tags=tuple(from_spans(merged, len(sentence))))
            added += len(silver)
        sentences.append(sentence)
    return replace(document, sentences=tuple(sentences)), added


def label_lattice(labels: Vocab, types: Collection[str]) -> Tensor:
    """The label lattice of partial annotation (:meth:`~docgraph.model.GCDoc.set_label_lattice`):
    a token tagged ``O`` may carry any label of ``types``; every other tag only itself."""
    lattice = torch.eye(len(labels), dtype=torch.bool)
    free = [i for i, label in enumerate(labels) if entity_type(label) in set(types)]
    if "O" in labels and free:
        lattice[labels.index("O"), torch.tensor(free)] = True
    return lattice
