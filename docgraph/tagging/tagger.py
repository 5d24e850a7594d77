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

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from docgraph.config import ExperimentConfig
from docgraph.data.contextual import ContextualEncoder
from docgraph.data.document import Document, make_document
from docgraph.data.tags import spans
from docgraph.data.tokenize import text_to_sentences, word_spans
from docgraph.data.vocab import Vocabularies
from docgraph.graph import split_long_documents
from docgraph.graph.splits import PreparedSplit, prepare_split
from docgraph.model import GCDoc
from docgraph.persistence.locate import read_model_files
from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
from docgraph.runtime.processes import min_tagging_tokens, tagging_processes
from docgraph.runtime.progress import Progress
from docgraph.runtime.threads import bounded_threads, tagging_threads
from docgraph.tagging.inference import (
    Evaluation,
    inspect_documents,
    predict_graphs,
    predict_in_processes,
)
from docgraph.viz.html import to_html

DocumentInput = str | Sequence[Sequence[str]] | Document


@dataclass(frozen=True)
class Entity:
    """A predicted entity span: tokens ``start`` to ``end`` (exclusive) of one sentence."""

    doc: str
    sentence: int
    start: int
    end: int
    type: str
    text: str

    def to_dict(self) -> dict:
        """``{"doc", "sentence", "start", "end", "type", "text"}``."""
        return asdict(self)


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


class Tagger:
    """A trained GCDoc model with its vocabularies, ready to tag documents
    (:meth:`tag`, :meth:`predict`, :meth:`to_html`) and to score it on labelled ones
    (:meth:`evaluate`), in one process or several (:meth:`processes_for`).

    Documents are tagged whole: the graph and the cross-sentence windows never mix the
    sentences of two documents. A model trained with contextual features (``config.lm``) gets
    them computed on the fly, in batches, by ``lm_encoder`` (loaded from ``config.lm`` when
    ``None``).

    Tagging in this process uses :attr:`threads` torch intra-op threads, restored afterwards
    (:mod:`docgraph.runtime.threads`: ``threads``, else ``$DOCGRAPH_TAGGING_THREADS``, else one;
    ``0`` leaves torch's setting alone).
    """

    def __init__(self, model: GCDoc, vocabs: Vocabularies, config: ExperimentConfig,
                 device: str | torch.device = "cpu", lm_encoder: ContextualEncoder | None = None,
                 path: str | Path | None = None, overrides: ModelOverrides | None = None,
                 threads: int | None = None) -> None:
        self.model = model
        self.vocabs = vocabs
        self.config = config
        self.device = torch.device(device)
        self.path = Path(path) if path is not None else None
        if lm_encoder is None and config.lm is not None:
            lm_encoder = ContextualEncoder.from_config(config, device=str(self.device))
        self.lm_encoder = lm_encoder
        #: The overrides of :meth:`load` (language model, threshold), passed on to the tagging
        #: processes of :meth:`tag` and :meth:`evaluate`; by default the language model of
        #: ``config``.
        self.overrides = overrides or ModelOverrides(lm=config.lm)
        #: Intra-op threads of tagging in this process (``0``: torch's setting as it is).
        self.threads = tagging_threads(threads)

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "cpu",
             lm: str | Path | None = None, threshold: float | None = None,
             open_vocabulary: bool = True, threads: int | None = None) -> Tagger:
        """Load a model directory written by ``scripts/train.py``, or a shipped model by name
        (``"conll03"``, ``"ontonotes"``: :mod:`docgraph.persistence.shipped`).

        Args:
            path: The model directory, or a shipped model's name (a directory wins).
            device: Where the model (and its language model, if any) runs.
            lm: Where the language model the model was trained with now is, when it was
                moved (its files must be the same).
            threshold: Prune the document graph at this uncertainty threshold instead of the
                trained one (:class:`~docgraph.persistence.model_dir.ModelOverrides`; also in
                the tagging processes of :meth:`tag` and :meth:`evaluate`).
            open_vocabulary: Words outside the model's vocabulary that have a pretrained
                vector get it (:mod:`docgraph.data.open_vocab`); off, they are ``<unk>``.
            threads: Intra-op threads of tagging in this process (see the class docstring).

        Raises:
            CheckpointError: ``path`` is neither a model directory nor a shipped model's name,
                or a file of it is missing or damaged.
            ValueError: ``threads`` (or ``$DOCGRAPH_TAGGING_THREADS``) is not an integer >= 0.
        """
        threads = tagging_threads(threads)  # checked before the model loads
        overrides = ModelOverrides(lm=lm, threshold=threshold, open_vocabulary=open_vocabulary)
        files = read_model_files(path)
        model, vocabs, config = load_model_dir(files, device, overrides)
        return cls(model, vocabs, config, device, path=files.directory, overrides=overrides,
                   threads=threads)

    @property
    def entity_types(self) -> list[str]:
        """The entity types the model predicts."""
        labels = self.vocabs.labels.lookup(list(range(len(self.vocabs.labels))))
        return sorted({lab[2:] for lab in labels if lab != "O"})

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

    def tag(self, documents: Sequence[DocumentInput], tokenized: bool = False,
            processes: int = 1, mc_seed: int = 0
            ) -> tuple[list[Document], list[list[list[str]]]]:
        """IOB2 tags per document, per sentence, and the documents that were tagged.

        Empty documents (``""``, blank text, no sentences) and empty sentences get no tags
        (``[]``); they never reach the model.

        Args:
            documents: Raw strings, token lists (sentences) or :class:`Document` objects.
            tokenized: Raw strings are one sentence per line, tokens split on whitespace.
            processes: CPU processes to tag in, each loading the model from :attr:`path`
                (a tagger made by :meth:`load`); ``0``: automatic (:meth:`processes_for`).
                A document's tags are the same in any number of processes, alone or among
                others: its Monte-Carlo masks and sampled neighbours are its own (see
                :func:`~docgraph.tagging.inference.predict_graphs`).
            mc_seed: The tagging seed of the Monte-Carlo dropout masks that prune the
                document graph (``evaluate.py --mc-seed``); other seeds show the model's
                Monte-Carlo noise.
        """
        docs = [as_document(d, f"doc-{i}", tokenized) for i, d in enumerate(documents)]
        return docs, self._tag_documents(docs, self.processes_for(docs, processes), mc_seed)

    def evaluate(self, documents: Sequence[Document], processes: int = 1, mc_seed: int = 0,
                 progress: str | None = None) -> Evaluation:
        """Score the model on labelled documents, as ``evaluate.py`` does.

        The documents are tagged as they are (their ids, gold tags and sentences kept; a
        document longer than ``max_doc_tokens`` in chunks, each scored as a document of its
        own) and scored as conlleval scores them, overall and per type, with the
        document-consistency figures (:class:`~docgraph.tagging.inference.Evaluation`).

        Args:
            documents: Labelled documents (e.g. from :func:`~docgraph.data.conll.read_conll`).
            processes: CPU processes to tag in, as for :meth:`tag` (``0``: automatic,
                :meth:`processes_for`); the scores are the same in any number.
            mc_seed: The tagging seed of the Monte-Carlo dropout masks (see :meth:`tag`).
            progress: The name of the documents (e.g. ``"dev"``) to show the progress of
                building their graphs and tagging them under; ``None`` shows nothing.

        Raises:
            ValueError: For a bad number of processes (:meth:`processes_for`), or a gold tag
                the model cannot read.
        """
        docs = list(documents)
        chunks, predictions = self._tag_chunks(docs, self.processes_for(docs, processes),
                                               mc_seed, progress)
        return Evaluation.of(PreparedSplit(chunks, []), predictions)

    def _tag_chunks(self, docs: list[Document], processes: int, mc_seed: int,
                    progress: str | None = None
                    ) -> tuple[list[Document], list[list[list[str]]]]:
        """The chunks the model tags ``docs`` in (a document longer than ``max_doc_tokens`` in
        several) and their IOB2 tags, in ``processes`` CPU processes (more than one: the
        processes load the model, :func:`~docgraph.tagging.inference.predict_in_processes`).
        ``progress`` names the documents whose graph building and tagging are shown."""
        tagging = None if progress is None else f"tagging {progress}"
        if processes > 1:
            chunks = split_long_documents(docs, self.config.graph.max_doc_tokens)
            return chunks, predict_in_processes(str(self.path), docs, processes, self.overrides,
                                                mc_seed, progress=tagging)
        tokens = sum(d.num_tokens for d in docs)
        with bounded_threads(self.threads):
            with Progress(f"building graphs ({progress})", tokens, unit="token",
                          enabled=progress is not None) as bar:
                split = prepare_split(docs, self.vocabs, self.config,
                                      lm_encoder=self.lm_encoder)
                bar.update(tokens)
            return split.documents, predict_graphs(self.model, split.graphs, self.vocabs,
                                                   self.config.train.eval_batch_tokens,
                                                   self.device, mc_seed, tagging)

    def _tag_documents(self, docs: list[Document], processes: int = 1, mc_seed: int = 0
                       ) -> list[list[list[str]]]:
        """Tags of :meth:`tag` for documents already made :class:`Document` objects, in
        ``processes`` CPU processes (:func:`~docgraph.tagging.inference.predict_in_processes`)."""
        # Tag unlabelled copies under positional ids: gold tags of Document inputs (possibly
        # with types the model does not know) are ignored, and documents sharing an id (two
        # input files with the same name) are never merged. Empty sentences are left out.
        inputs = [make_document(str(i), [(s.tokens, ["O"] * len(s)) for s in d.sentences if len(s)])
                  for i, d in enumerate(docs)]
        inputs = [d for d in inputs if d.sentences]
        merged: dict[str, list[list[str]]] = {d.doc_id: [] for d in inputs}
        if inputs:
            chunks, tags = self._tag_chunks(inputs, processes, mc_seed)
            # re-join chunks of long documents
            for chunk, chunk_tags in zip(chunks, tags):
                merged[_parent_id(chunk.doc_id, merged)].extend(chunk_tags)
        return [_with_empty_sentences(d, merged.get(str(i), [])) for i, d in enumerate(docs)]

    def to_html(self, documents: Sequence[DocumentInput], tokenized: bool = False,
                title: str = "docgraph", mc_seed: int = 0) -> str:
        """An interactive HTML page of the documents as the model sees them
        (:func:`docgraph.viz.html.to_html`): predicted entities, and, for :class:`Document`
        inputs with gold tags, the errors; each token's repeats with their learnt edge weights
        and pruning. Raw strings are tokenised as by :meth:`tag`; empty sentences are left out.
        ``mc_seed`` is the tagging seed of :meth:`tag`: the page shows the tags it gives.
        """
        docs = [as_document(d, f"doc-{i}", tokenized) for i, d in enumerate(documents)]
        docs = [make_document(d.doc_id, [(s.tokens, list(s.tags) if s.tags else ["O"] * len(s))
                                         for s in d.sentences if len(s)])
                for d in docs]
        docs = [d for d in docs if d.sentences]
        with bounded_threads(self.threads):
            prepared = prepare_split(docs, self.vocabs, self.config,
                                     lm_encoder=self.lm_encoder)
            graphs = inspect_documents(self.model, prepared.graphs, prepared.documents,
                                       self.vocabs, self.config.train.eval_batch_tokens, mc_seed)
        unlabelled = [not any(t != "O" for s in d.sentences for t in s.tags)
                      for d in prepared.documents]
        for G, plain in zip(graphs, unlabelled):
            if plain:  # no gold tags given: no errors to mark
                for _, attrs in G.nodes(data=True):
                    attrs.pop("gold_tag", None)
                    attrs.pop("gold_type", None)
        graph = self.model.document_graph
        prunes = graph is not None and graph.uncertainty is not None
        return to_html(graphs, title=title,
                       threshold=self.model.config.threshold if prunes else None,
                       has_graph=graph is not None)

    def predict(self, documents: Sequence[DocumentInput], tokenized: bool = False,
                processes: int = 1, mc_seed: int = 0) -> list[list[Entity]]:
        """Entity spans for each document (raw strings, token lists or Documents); see
        :meth:`tag` for ``processes`` and ``mc_seed``."""
        docs, tags = self.tag(documents, tokenized, processes, mc_seed)
        result = []
        for doc, doc_tags in zip(docs, tags):
            entities = []
            for sentence, sent_tags in zip(doc.sentences, doc_tags):
                for etype, start, end in spans(sent_tags):
                    entities.append(Entity(doc.doc_id, sentence.index, start, end, etype,
                                           " ".join(sentence.tokens[start:end])))
            result.append(entities)
        return result


def _with_empty_sentences(document: Document, tags: list[list[str]]) -> list[list[str]]:
    """Tags of the non-empty sentences of ``document`` spread over all of them (``[]``)."""
    it = iter(tags)
    return [next(it) if len(sentence) else [] for sentence in document.sentences]


def _parent_id(chunk_id: str, known: dict) -> str:
    if chunk_id in known:
        return chunk_id
    parent = chunk_id.rsplit("#", 1)[0]
    if parent in known:
        return parent
    raise KeyError(f"cannot map chunk {chunk_id!r} back to its document")
