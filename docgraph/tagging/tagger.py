"""Tag new documents with a trained model directory, from Python, and score it on labelled
ones.

Example::

    from docgraph import Tagger

    tagger = Tagger.load("runs/sample")
    for entity in tagger.predict(["Kestrel beat Harwick 2-0 on Sunday. Kestrel ..."])[0]:
        print(entity.type, entity.text)
    print(tagger.evaluate(read_conll("test.txt")).scores.f1)
"""

from __future__ import annotations

import copy
import itertools
import os
import shutil
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import networkx as nx
import torch

from docgraph.config import ExperimentConfig
from docgraph.config.errors import DocgraphError
from docgraph.config.tagging import (
    LABEL_CONSISTENCY,
    Approximation,
    LabelConsistency,
    approximation_of,
)
from docgraph.data.contextual import ContextualEncoder
from docgraph.data.document import Document, make_document
from docgraph.data.tokenize import text_to_sentences, word_spans
from docgraph.data.vocab import Vocabularies
from docgraph.graph.splits import PreparedSplit
from docgraph.model import GCDoc
from docgraph.persistence.locate import read_model_files
from docgraph.persistence.manifest import save_threshold
from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
from docgraph.persistence.shipped import MODEL_FILES, OPTIONAL_MODEL_FILES
from docgraph.persistence.speeds import model_speeds
from docgraph.runtime.precision import tagging_precision
from docgraph.runtime.processes import min_tagging_tokens, tagging_processes
from docgraph.runtime.progress import Progress
from docgraph.runtime.threads import tagging_threads
from docgraph.tagging.chunks import (
    Chunk,
    DocumentInput,
    chunk_document,
    chunk_documents,
    input_chunks,
    tagged_documents,
)
from docgraph.tagging.inference import Evaluation
from docgraph.tagging.pipeline import (
    Tags,
    bounded_threads,
    chunk_tokens,
    inspect_in_process,
    stream_tags,
)
from docgraph.tagging.pipeline import batch_tokens as default_batch_tokens
from docgraph.tagging.result import Entity, TaggedDocument, Tagging
from docgraph.viz.html import to_html
from docgraph.viz.networkx import to_networkx

T = TypeVar("T")

def as_document(item: DocumentInput, doc_id: str, tokenized: bool = False) -> Document:
    """Turn raw text, a list of token lists or a :class:`Document` into a :class:`Document`.

    Raw text goes through :func:`docgraph.data.tokenize.text_to_sentences`; with
    ``tokenized=True`` a string is read as one sentence per line, tokens split on whitespace
    and control characters (:func:`~docgraph.data.tokenize.word_spans`).
    """
    if isinstance(item, Document):
        return item
    if isinstance(item, str):
        if tokenized:
            words = ([line[s:e] for s, e in word_spans(line)] for line in item.splitlines())
            sentences = [line for line in words if line]
        else:
            sentences = text_to_sentences(item)
    else:
        sentences = [list(s) for s in item if len(s) > 0]
    return make_document(doc_id, [(s, ["O"] * len(s)) for s in sentences])


class UnknownTypeError(DocgraphError, ValueError):
    """A gold entity type the model does not have, where it was met (a document and one of
    its sentences)."""

    def __init__(self, kind: str, known: Sequence[str], doc_id: str, sentence: int) -> None:
        self.kind, self.known, self.doc_id, self.sentence = kind, list(known), doc_id, sentence
        super().__init__(f"document {doc_id!r}, sentence {sentence}: {self.reason}")

    @property
    def reason(self) -> str:
        """What is wrong, without the place."""
        return (f"entity type {self.kind!r} is not one of the model's types "
                f"({', '.join(self.known)})")

    def __reduce__(self) -> tuple:
        return type(self), (self.kind, self.known, self.doc_id, self.sentence)


class Tagger:
    """A trained GCDoc model with its vocabularies, ready to tag documents
    (:meth:`tag`, :meth:`tag_stream`, :meth:`predict`, :meth:`inspect`, :meth:`to_html`) and
    to score it on labelled ones (:meth:`evaluate`), in one process or several
    (:meth:`processes_for`).

    Every method tags through the one pipeline (:mod:`docgraph.tagging.pipeline`): a document
    longer than :attr:`max_doc_tokens` is tagged in chunks of consecutive sentences (a longer
    sentence in pieces), each a document of its own for the model; the graph and the
    cross-sentence windows never mix two documents. A model trained with contextual features
    (``config.lm``) gets them computed on the fly, in batches, by ``lm_encoder`` (loaded from
    ``config.lm`` when ``None``).

    Tagging in this process uses :attr:`threads` torch intra-op threads, restored afterwards
    (:mod:`docgraph.runtime.threads`: ``threads``, else ``$DOCGRAPH_TAGGING_THREADS``, else one;
    ``0`` leaves torch's setting alone).
    """

    def __init__(self, model: GCDoc, vocabs: Vocabularies, config: ExperimentConfig,
                 device: str | torch.device = "cpu", lm_encoder: ContextualEncoder | None = None,
                 path: str | Path | None = None, overrides: ModelOverrides | None = None,
                 threads: int | None = None, max_doc_tokens: int | None = None,
                 batch_tokens: int | None = None,
                 consistency: bool | LabelConsistency | None = None) -> None:
        self.model = model
        self.vocabs = vocabs
        self.config = config
        self.device = torch.device(device)
        self.path = Path(path) if path is not None else None
        #: The overrides of :meth:`load` (language model, threshold, precision), passed on to
        #: the tagging processes; by default the language model of ``config``.
        self.overrides = overrides or ModelOverrides(lm=config.lm)
        if lm_encoder is None and config.lm is not None:
            lm_encoder = ContextualEncoder.from_config(config, device=str(self.device),
                                                       precision=self.overrides.lm_precision)
        self.lm_encoder = lm_encoder
        #: Intra-op threads of tagging in this process (``0``: torch's setting as it is).
        self.threads = tagging_threads(threads)
        #: The most tokens tagged as one document (``None``: whole documents;
        #: :func:`~docgraph.tagging.pipeline.chunk_tokens`).
        self.max_doc_tokens = chunk_tokens(config, max_doc_tokens)
        if batch_tokens is not None and batch_tokens < 1:
            raise ValueError(f"batch_tokens must be >= 1, got {batch_tokens}")
        #: The token budget of a tagging batch in this process
        #: (:func:`~docgraph.tagging.pipeline.batch_tokens` unless given).
        self.batch_tokens = batch_tokens or default_batch_tokens(config, self.device)
        #: The graph configuration documents are built by (``config.graph_config()``).
        self.graph_config = config.graph_config()
        if consistency is None:
            consistency = config.model.label_consistency
        #: Label consistency in decoding (:func:`~docgraph.tagging.consistency.consistent_tagging`)
        #: applied to every tagged document, ``None``: none.
        self.consistency: LabelConsistency | None = (
            LABEL_CONSISTENCY if consistency is True else consistency or None)

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "cpu",
             lm: str | Path | None = None, threshold: float | None = None,
             open_vocabulary: bool = True, threads: int | None = None,
             max_doc_tokens: int | None = None, batch_tokens: int | None = None,
             precision: str | None = None, speed: str | Approximation | None = None,
             consistency: bool | LabelConsistency | None = None) -> Tagger:
        """Load a model directory written by ``scripts/train.py`` or :meth:`save`, or a shipped
        model by name (``"conll03"``, ``"ontonotes"``: :mod:`docgraph.persistence.shipped`).

        Args:
            path: The model directory, or a shipped model's name (a directory wins).
            device: Where the model (and its language model, if any) runs.
            lm: Where the language model the model was trained with now is, when it was
                moved (its files must be the same).
            threshold: Prune the document graph at this uncertainty threshold instead of the
                trained one (:class:`~docgraph.persistence.model_dir.ModelOverrides`; also in
                the tagging processes).
            open_vocabulary: Words outside the model's vocabulary that have a pretrained
                vector get it (:mod:`docgraph.data.open_vocab`); off, they are ``<unk>``.
            threads: Intra-op threads of tagging in this process (see the class docstring).
            max_doc_tokens: The most tokens tagged as one document (``0``: whole documents;
                default: :func:`~docgraph.tagging.pipeline.chunk_tokens`).
            batch_tokens: The token budget of a tagging batch in this process (default:
                :func:`~docgraph.tagging.pipeline.batch_tokens`); the tags do not depend on it.
            precision: ``"fp32"``, ``"bf16"`` or ``"auto"``
                (:func:`~docgraph.runtime.precision.tagging_precision`; default:
                ``$DOCGRAPH_TAGGING_PRECISION``, else
                :data:`~docgraph.runtime.precision.DEFAULT_TAGGING_PRECISION`).
            speed: ``"faithful"`` (the trained computation), ``"fast"`` (the model's fast
                mode: :func:`~docgraph.persistence.speeds.model_speeds`) or an
                :class:`~docgraph.config.tagging.Approximation` (default: the model's default
                speed, as its directory declares; also in the tagging processes).
            consistency: Label consistency in decoding: ``True`` with the thresholds of
                :data:`~docgraph.config.tagging.LABEL_CONSISTENCY`, or others; ``False``:
                each sentence decoded alone (default: the model's
                ``[model] label_consistency``).

        Raises:
            CheckpointError: ``path`` is neither a model directory nor a shipped model's name,
                or a file of it is missing or damaged.
            ValueError: ``threads`` (or ``$DOCGRAPH_TAGGING_THREADS``) is not an integer >= 0,
                ``max_doc_tokens`` is negative, ``batch_tokens`` below 1, ``precision`` not
                one of :data:`~docgraph.runtime.precision.TAGGING_PRECISIONS`, ``speed`` not one
                of :data:`~docgraph.config.tagging.SPEEDS`, or int8 asked of a GPU.
        """
        threads = tagging_threads(threads)  # checked before the model loads
        precision = tagging_precision(precision, device)
        files = read_model_files(path)
        approximation = approximation_of(speed, device=torch.device(device).type,
                                         model=model_speeds(files))
        if max_doc_tokens is not None and max_doc_tokens < 0:
            raise ValueError(f"max_doc_tokens must be >= 0 (0: whole documents), got "
                             f"{max_doc_tokens}")
        if batch_tokens is not None and batch_tokens < 1:
            raise ValueError(f"batch_tokens must be >= 1, got {batch_tokens}")
        overrides = ModelOverrides(lm=lm, threshold=threshold, open_vocabulary=open_vocabulary,
                                   precision=precision, approximation=approximation)
        model, vocabs, config = load_model_dir(files, device, overrides)
        return cls(model, vocabs, config, device, path=files.directory, overrides=overrides,
                   threads=threads, max_doc_tokens=max_doc_tokens, batch_tokens=batch_tokens,
                   consistency=consistency)

    def save(self, directory: str | Path, overwrite: bool = False) -> Path:
        """Write the model directory this tagger was loaded from to ``directory``, whole or
        not at all: ``Tagger.load(directory)`` gives the same tags. Its files are copied byte
        for byte (a packed model stays packed, its checksums valid); a threshold given to
        :meth:`load` becomes the saved model's threshold. A language model the model reads
        stays recorded where it is.

        Args:
            directory: Where to write.
            overwrite: Replace ``directory`` when it exists and is not empty.

        Returns:
            ``directory``, resolved.

        Raises:
            ValueError: The tagger was not loaded from a model directory (:meth:`load`).
            FileExistsError: ``directory`` exists, is not empty, and ``overwrite`` is off.
        """
        if self.path is None:
            raise ValueError("Tagger.save needs a tagger loaded from a model directory "
                             "(Tagger.load)")
        target = Path(directory).expanduser().resolve()
        if target == self.path.resolve():
            return target
        if target.exists() and (not target.is_dir() or any(target.iterdir())) and not overwrite:
            raise FileExistsError(f"{target}: exists and is not empty (overwrite=True replaces "
                                  "it)")
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            for name in (*MODEL_FILES, *OPTIONAL_MODEL_FILES):
                if (self.path / name).is_file():
                    shutil.copyfile(self.path / name, staging / name)
            if self.overrides.threshold is not None:
                save_threshold(staging, self.config.model.threshold)
            for file in staging.iterdir():
                with open(file, "rb") as handle:
                    os.fsync(handle.fileno())
            if target.exists():
                old = target.with_name(f".{target.name}.replaced-{os.getpid()}")
                os.replace(target, old)
                os.replace(staging, target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return target

    @property
    def entity_types(self) -> list[str]:
        """The entity types the model predicts."""
        labels = self.vocabs.labels.lookup(list(range(len(self.vocabs.labels))))
        return sorted({lab[2:] for lab in labels if lab != "O"})

    @property
    def has_graph(self) -> bool:
        """Whether the model has the document graph (a BiLSTM-CRF has none)."""
        return self.model.document_graph is not None

    @property
    def threshold(self) -> float | None:
        """The uncertainty threshold the model prunes its graph at (``None``: no pruning)."""
        graph = self.model.document_graph
        return self.model.config.threshold if graph is not None and graph.uncertainty else None

    def processes_for(self, documents: Sequence[Document], requested: int = 0) -> int:
        """How many CPU processes :meth:`tag` and :meth:`evaluate` tag ``documents`` in.

        Args:
            documents: The documents to tag.
            requested: ``0``: automatic (one per core, at most 2, when each gets enough tokens
                to win back its start-up, see
                :func:`~docgraph.runtime.processes.min_tagging_tokens`); a positive number
                is taken as it is (capped by the number of tokens). Tagging on CUDA, or with a
                tagger not made by :meth:`load`, uses one process.

        Raises:
            ValueError: ``requested`` is negative, or above 1 for a tagger without a model
                directory to load in the processes.
        """
        if requested < 0:
            raise ValueError(f"processes must be >= 0 (0: automatic), got {requested}")
        if requested > 1 and self.path is None:
            raise ValueError("processes > 1 needs a tagger loaded from a model directory "
                             "(Tagger.load)")
        if self.path is None:
            return 1
        model = self.config.model
        return tagging_processes(sum(d.num_tokens for d in documents), self.device, requested,
                                 min_tokens=min_tagging_tokens(model.graph, model.cross_sentence))

    def chunks(self, documents: Iterable[Document]) -> list[Document]:
        """The documents as the model tags them, with their gold tags: one longer than
        :attr:`max_doc_tokens` in chunks of consecutive sentences, a longer sentence in pieces
        (:func:`~docgraph.tagging.chunks.chunk_documents`, the chunks of :meth:`pipe`); empty
        sentences left out."""
        return [chunk for doc in documents
                for chunk in chunk_documents(doc, self.max_doc_tokens)]

    def tag_chunks(self, chunks: Iterable[T], document: Callable[[T], Document],
                   processes: int = 0, mc_seed: int = 0, scores: bool = False
                   ) -> Iterator[tuple[T, Tagging]]:
        """The stream under :meth:`pipe`, a chunk at a time: chunks already cut to size
        (:func:`~docgraph.tagging.chunks.input_chunks`) tagged as they come, in input order,
        in bounded memory, so that an output can be written before a long document ends (what
        ``predict.py`` streams).

        Args:
            chunks: Anything, read lazily; each is one document for the model.
            document: The :class:`Document` of a chunk (its gold tags are not read).
            processes: CPU processes (``0``: automatic, on the tokens read so far).
            mc_seed: The tagging seed of the Monte-Carlo masks (see :meth:`pipe`).
            scores: Score every entity.

        Yields:
            Each chunk with its :class:`~docgraph.tagging.result.Tagging`: IOB2 tags, one list
            per sentence (none for a chunk without sentences), and the entities' scores.
        """
        return stream_tags(chunks, lambda chunk: _unlabelled(document(chunk)), self,
                           processes, mc_seed, scores=scores)

    def tag_stream(self, documents: Iterable[DocumentInput], tokenized: bool = False,
                   processes: int = 0, mc_seed: int = 0
                   ) -> Iterator[tuple[Document, Tags]]:
        """:meth:`pipe` as IOB2 tags: each document (as :func:`as_document` reads it) with its
        tags, one list per sentence (``[]`` for an empty one), as soon as it is tagged."""
        held: deque[Document] = deque()

        def read() -> Iterator[Document]:
            for i, item in enumerate(documents):
                held.append(as_document(item, f"doc-{i}", tokenized))
                yield held[-1]

        for tagged in self.pipe(read(), processes=processes, mc_seed=mc_seed):
            doc = held.popleft()
            tags: Tags = [[] for _ in doc.sentences]
            for sentence in tagged.sentences:
                tags[sentence.index] = list(sentence.tags)
            yield doc, tags

    def tag(self, documents: Sequence[DocumentInput], tokenized: bool = False,
            processes: int = 1, mc_seed: int = 0
            ) -> tuple[list[Document], list[list[list[str]]]]:
        """IOB2 tags per document, per sentence, and the documents that were tagged
        (:meth:`tag_stream`). Empty documents and empty sentences get no tags (``[]``); they
        never reach the model."""
        tagged = list(self.tag_stream(documents, tokenized, processes, mc_seed))
        return [doc for doc, _ in tagged], [tags for _, tags in tagged]

    def evaluate(self, documents: Sequence[Document], processes: int = 1, mc_seed: int = 0,
                 progress: str | None = None) -> Evaluation:
        """Score the model on labelled documents, as ``evaluate.py`` does.

        The documents are tagged as :meth:`pipe` tags them (a document longer than
        :attr:`max_doc_tokens` in chunks, :meth:`chunks`, each scored as a document of its
        own) and scored as conlleval scores them, overall and per type, with the
        document-consistency figures (:class:`~docgraph.tagging.inference.Evaluation`).

        Args:
            documents: Labelled documents (e.g. from :func:`~docgraph.data.conll.read_conll`).
            processes: CPU processes to tag in, as for :meth:`pipe` (``0``: automatic,
                :meth:`processes_for`); the scores are the same in any number.
            mc_seed: The tagging seed of the Monte-Carlo dropout masks (see :meth:`pipe`).
            progress: The name of the documents (e.g. ``"dev"``) to show the progress of
                tagging them under; ``None`` shows nothing.

        Raises:
            ValueError: For a bad number of processes (:meth:`processes_for`), or a gold tag
                the model cannot read.
        """
        docs = list(documents)
        self._check_gold(docs)
        chunks = self.chunks(docs)
        predictions = []
        with Progress(f"tagging {progress}", sum(d.num_tokens for d in chunks), unit="token",
                      enabled=progress is not None) as bar:
            for tagged in self.pipe(chunks, processes=processes, mc_seed=mc_seed):
                predictions.append(tagged.tags)
                bar.update(sum(len(s.tokens) for s in tagged.sentences))
        return Evaluation.of(PreparedSplit(chunks, []), predictions)

    def _check_gold(self, documents: Sequence[Document]) -> None:
        """Raise the error of a gold tag the model cannot read, before any tagging."""
        known_types = set(self.entity_types)
        for doc in documents:
            for sentence in doc.sentences:
                for tag in sentence.tags:
                    if tag != "O" and tag[2:] not in known_types:
                        raise UnknownTypeError(tag[2:], self.entity_types, doc.doc_id,
                                               sentence.index)

    def inspect(self, documents: Sequence[DocumentInput], tokenized: bool = False,
                mc_seed: int = 0, gold: bool | None = None, scores: bool = False
                ) -> list[nx.DiGraph]:
        """The documents as the model sees them: one annotated graph per chunk
        (:func:`~docgraph.viz.networkx.to_networkx`, :meth:`chunks`) with the predicted tags,
        each token's uncertainty and pruning, and each edge's learnt weight, from the pass of
        :meth:`pipe` with ``inspect`` (the same tags at the same ``mc_seed``). Graph
        attributes ``threshold`` and ``has_graph`` describe the model
        (:func:`docgraph.viz.html.to_html` reads them).

        Args:
            documents: Raw strings, token lists or :class:`Document` objects (tokenised as by
                :meth:`pipe`; empty sentences left out).
            tokenized: Raw strings are one sentence per line, tokens split on whitespace.
            mc_seed: The tagging seed of the Monte-Carlo masks.
            gold: Mark the gold tags of :class:`Document` inputs (``None``: for a document
                with a gold entity; ``False``: never).
            scores: Give every token of a predicted entity the entity's score (node
                attribute ``pred_score``).

        Raises:
            ValueError: A gold tag the model cannot read.
        """
        docs = [as_document(d, f"doc-{i}", tokenized) for i, d in enumerate(documents)]
        docs = [d for d in self.chunks(docs) if d.sentences]
        with bounded_threads(self.threads):
            inspected = inspect_in_process(docs, self, mc_seed, scores)
        graphs = []
        for doc, (graph, found) in zip(docs, inspected):
            G = to_networkx(graph, doc, self.vocabs, uncertainty=found.uncertainty,
                            drop=found.drop, edge_weight=found.edge_weight,
                            predicted=found.label_ids)
            if found.scores is not None:
                _mark_scores(G, Tagging(found.tags, found.scores), graph.sent_len.tolist())
            labelled = any(t != "O" for s in doc.sentences for t in s.tags)
            if gold is False or (gold is None and not labelled):
                for _, attrs in G.nodes(data=True):
                    attrs.pop("gold_tag", None)
                    attrs.pop("gold_type", None)
            G.graph.update(threshold=self.threshold, has_graph=self.has_graph)
            graphs.append(G)
        return graphs

    def to_html(self, documents: Sequence[DocumentInput], tokenized: bool = False,
                title: str = "docgraph", mc_seed: int = 0, scores: bool = False) -> str:
        """An interactive HTML page of the documents as the model sees them
        (:meth:`inspect`, :func:`docgraph.viz.html.to_html`): predicted entities, and, for
        :class:`Document` inputs with gold tags, the errors; each token's repeats with their
        learnt edge weights and pruning. ``mc_seed`` is the tagging seed of :meth:`pipe`: the
        page shows the tags it gives; with ``scores``, each entity's score as its colour
        strength and in its tooltip.
        """
        return to_html(self.inspect(documents, tokenized, mc_seed, scores=scores), title=title)

    def predict(self, documents: Sequence[DocumentInput], tokenized: bool = False,
                processes: int = 1, mc_seed: int = 0, scores: bool = True,
                min_score: float | None = None) -> list[list[Entity]]:
        """The entities of each document (raw strings, token lists or Documents): the
        :attr:`~docgraph.tagging.result.TaggedDocument.entities` of :meth:`pipe`, scored by
        default."""
        return [list(doc.entities) for doc in self.pipe(
            documents, tokenized=tokenized, processes=processes, mc_seed=mc_seed,
            scores=scores, min_score=min_score)]

    def tag_documents(self, documents: Iterable[DocumentInput], tokenized: bool = False,
                      processes: int = 1, mc_seed: int = 0, scores: bool = True,
                      min_score: float | None = None, inspect: bool = False
                      ) -> Iterator[TaggedDocument]:
        """:meth:`pipe` with the entities scored by default."""
        return self.pipe(documents, tokenized=tokenized, processes=processes, mc_seed=mc_seed,
                         scores=scores, min_score=min_score, inspect=inspect)

    def pipe(self, documents: Iterable[DocumentInput], *, tokenized: bool = False,
             scores: bool = False, inspect: bool = False, min_score: float | None = None,
             batch_tokens: int | None = None, processes: int = 1, mc_seed: int = 0,
             doc_ids: Iterable[str] | None = None) -> Iterator[TaggedDocument]:
        """Tag a stream of documents: the one way in of tagging.

        Each document comes out as a :class:`~docgraph.tagging.result.TaggedDocument` (its
        tokens with their character spans in a raw string, none for token lists and
        Documents; its sentences; its entities with their text as it stands in the input),
        in input order, as soon as it is tagged. The input is read lazily and a few groups of
        :data:`~docgraph.tagging.pipeline.GROUP_TOKENS` tokens are held at a time; a document
        longer than :attr:`max_doc_tokens` is tagged in chunks and comes out whole.

        Args:
            documents: Raw strings, token lists (sentences) or :class:`Document` objects.
            tokenized: Raw strings are one sentence per line, tokens split on whitespace.
            scores: Score every entity (its probability under the model).
            inspect: Add each token's Monte-Carlo uncertainty and pruning and the document
                graph's edges with their learnt weights, from the same pass.
            min_score: Keep only the entities scored at least this (needs ``scores``).
            batch_tokens: The token budget of a tagging batch (default: :attr:`batch_tokens`);
                the tags do not depend on it.
            processes: CPU processes, each loading the model from :attr:`path` (``0``:
                automatic, on the tokens read so far); a document's tags are the same in any
                number.
            mc_seed: The tagging seed of the Monte-Carlo dropout masks that prune the
                document graph.
            doc_ids: One id per input, in order, for raw strings and token lists (default:
                ``doc-0``, ``doc-1``, ...); a :class:`Document` keeps its own.

        Raises:
            ValueError: ``min_score`` without ``scores``, ``batch_tokens`` below 1, or a bad
                number of processes.
        """
        if min_score is not None and not scores:
            raise ValueError("min_score needs scores=True")
        if batch_tokens is not None and batch_tokens < 1:
            raise ValueError(f"batch_tokens must be >= 1, got {batch_tokens}")
        tagger = self
        if batch_tokens is not None and batch_tokens != self.batch_tokens:
            tagger = copy.copy(self)
            tagger.batch_tokens = batch_tokens
        return tagger._pipe(documents, tokenized, scores, inspect, min_score, processes,
                            mc_seed, doc_ids)

    def _pipe(self, documents: Iterable[DocumentInput | Chunk], tokenized: bool, scores: bool,
              inspect: bool, min_score: float | None, processes: int, mc_seed: int,
              doc_ids: Iterable[str] | None) -> Iterator[TaggedDocument]:
        """:meth:`pipe` once its arguments are checked."""
        max_tokens = self.max_doc_tokens or sys.maxsize
        ids = iter(doc_ids) if doc_ids is not None else (f"doc-{i}" for i in itertools.count())
        chunks = (chunk for item in documents
                  for chunk in input_chunks(item, next(ids), tokenized, max_tokens))
        tagged = stream_tags(chunks, chunk_document, self, processes, mc_seed, scores=scores,
                             inspect=inspect)
        yield from tagged_documents(tagged, min_score)


def _mark_scores(graph: nx.DiGraph, tagging: Tagging, sent_len: Sequence[int]) -> None:
    """Give every token of a predicted entity its entity's score (``pred_score``)."""
    starts = [0]
    for length in sent_len:
        starts.append(starts[-1] + length)
    for entity in tagging.entities():
        for i in range(starts[entity.sentence] + entity.start,
                       starts[entity.sentence] + entity.end):
            graph.nodes[i]["pred_score"] = entity.score


def _unlabelled(document: Document) -> Document:
    """``document`` without its gold tags (the model may not know their types)."""
    if all(tag == "O" for s in document.sentences for tag in s.tags):
        return document
    return make_document(document.doc_id, [(s.tokens, ["O"] * len(s))
                                           for s in document.sentences])

