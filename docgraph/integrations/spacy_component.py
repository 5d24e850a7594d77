"""docgraph's models in a spaCy pipeline: the ``docgraph_ner`` component (``pip install
docgraph[spacy]``, spaCy 3.8).

Example::

    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("docgraph_ner", config={"model": "runs/sample"})
    doc = nlp("Kestrel beat Harwick 2-0 on Sunday. Kestrel top the table.")
    print([(ent.text, ent.label_) for ent in doc.ents])

What the component reads: the Doc's tokens as the pipeline made them (whitespace tokens are
skipped: the model never saw one) and its sentence boundaries (a sentencizer, parser or
senter). A Doc without boundaries is split with docgraph's own rules
(:func:`docgraph.data.tokenize.sentence_spans` on ``doc.text``, each token in the sentence its first
character falls in); the component logs that once and records it on every Doc as
``doc._.docgraph_sentence_source`` (``"doc"`` or ``"docgraph"``).

How it tags, through the tagging core of ``scripts/predict.py`` (:meth:`Tagger.pipe
<docgraph.tagging.tagger.Tagger.pipe>`, its sentences given as token lists): a Doc longer than
``max_doc_tokens`` is tagged in chunks of consecutive sentences packed greedily in order (a
longer sentence in pieces of ``max_doc_tokens`` tokens; :mod:`docgraph.tagging.chunks`), each
chunk a document of its own for the model; the chunks of many Docs (``nlp.pipe``) are batched by the
tagging token budget (:func:`docgraph.tagging.pipeline.batch_tokens`) on the model's device, a
group of about :data:`~docgraph.tagging.pipeline.GROUP_TOKENS` tokens at a time; ``mc_seed`` is
the tagging seed of the Monte-Carlo masks. A Doc's tags depend on its tokens, sentences and the
seed only: the same alone, in any batch or in spaCy's processes (``nlp.pipe(n_process=N)``).

What it writes (``doc._.docgraph`` holds plain lists, so Docs keep it through
``DocBin(store_user_data=True)``; the other attributes read it):

* ``doc.ents``: the entities of the model's IOB2 tags, read per sentence by
  :func:`docgraph.data.tags.spans` (the rules of ``predict.py``), with the model's labels;
  existing entities stay and ours fill the free tokens, or with ``overwrite_ents=True`` ours
  replace them all;
* ``token._.docgraph_tag`` (IOB2), ``token._.docgraph_uncertainty`` (the Monte-Carlo
  uncertainty :math:`u_i`) and ``token._.docgraph_pruned`` (in *Drop*: it sends no message);
  ``None`` where the model has no such thing (no pruning, no graph) or for whitespace tokens;
* ``doc._.docgraph_edges``: the document graph, ``(source, target, weight)`` per edge in
  ``doc`` token indices (``source``'s state is a message to ``target``; ``weight`` the learnt
  same-type score :math:`r_{ij}`, ``None`` for a model without edge weights), sorted by
  target; ``None`` for a model without a graph (a BiLSTM-CRF);
* ``token._.docgraph_neighbours``: the ``(token, weight)`` pairs sending messages to a token;
* ``doc._.docgraph_graph()``: the annotated :class:`networkx.DiGraph` of
  :func:`docgraph.viz.to_networkx`, so :func:`docgraph.viz.html.to_html` takes such Docs;
* ``span._.score`` of each of our entities in ``doc.ents``: its probability under the model
  (:mod:`docgraph.tagging.result`; ``None`` for entities that are not ours), and the group
  ``doc.spans["docgraph"]`` of all our entities, even those that lost to existing ones, with
  their scores in ``doc.spans["docgraph"].attrs["scores"]``.

Importing this module is cheap (spaCy imports every ``spacy_factories`` entry point on
creating any pipeline): torch and the model code load when a component is created.
"""

import bisect
import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.scorer import get_ner_prf
from spacy.tokens import Doc, Span, SpanGroup, Token
from spacy.training import Example
from spacy.util import minibatch

from docgraph.config.errors import DocgraphError
from docgraph.config.tagging import TaggingConfig
from docgraph.data.tags import entity_type
from docgraph.data.tokenize import sentence_spans
from docgraph.persistence.locate import ModelDirError, locate_model_dir
from docgraph.persistence.manifest import file_sha256
from docgraph.persistence.shipped import MODEL_FILES, OPTIONAL_MODEL_FILES
from docgraph.runtime.atomic import atomic_write_json

if TYPE_CHECKING:  # torch loads when a component is created, not on import
    from docgraph.tagging.result import TaggedDocument

__all__ = ["FACTORY", "DocgraphNER", "DocgraphSpacyError", "make_docgraph_ner",
           "register_extensions"]

log = logging.getLogger(__name__)

FACTORY = "docgraph_ner"
"""The component's factory name: ``nlp.add_pipe("docgraph_ner", config=...)``."""

SPANS_KEY = "docgraph"
"""The ``doc.spans`` group of the model's entities, their scores in its ``attrs["scores"]``
(the convention of spaCy's ``spancat``)."""

_STATE_FILE = "docgraph_ner.json"
_MODEL_COPY = "model"
_NER_FACTORIES = ("ner", "beam_ner")
#: The tagging tools' defaults, which the component shares (``config/tagging.py``).
_TAGGING = TaggingConfig()


class DocgraphSpacyError(DocgraphError, ValueError):
    """A ``docgraph_ner`` component that cannot be made or loaded as asked."""


# ----------------------------------------------------------------------- extension attributes
def _annotation(doc: Doc) -> dict[str, Any] | None:
    return doc._.docgraph


def _token_value(key: str) -> Any:
    def get(token: Token) -> Any:
        data = _annotation(token.doc)
        values = None if data is None else data[key]
        return None if values is None else values[token.i]
    return get


def _doc_edges(doc: Doc) -> list[tuple[int, int, float | None]] | None:
    data = _annotation(doc)
    if data is None or data["edges"] is None:
        return None
    return [(int(j), int(i), w) for j, i, w in data["edges"]]


def _neighbours(token: Token) -> list[tuple[Token, float | None]] | None:
    data = _annotation(token.doc)
    if data is None or data["edges"] is None:
        return None
    edges = data["edges"]
    first = bisect.bisect_left(edges, token.i, key=lambda e: e[1])
    found = []
    for j, i, weight in edges[first:]:
        if i != token.i:
            break
        found.append((token.doc[int(j)], weight))
    return found


def _sentence_source(doc: Doc) -> str | None:
    data = _annotation(doc)
    return None if data is None else data["sentence_source"]


def _span_score(span: Span) -> float | None:
    data = _annotation(span.doc)
    if data is None or not data.get("entities"):
        return None
    entities = data["entities"]  # in reading order, none overlapping
    k = bisect.bisect_left(entities, span.start, key=lambda e: e[0])
    if k < len(entities):
        start, end, label, score = entities[k]
        if start == span.start and end == span.end and label == span.label_:
            return score
    return None


def register_extensions() -> None:
    """Register the component's extension attributes (see the module docstring); idempotent,
    done on import."""
    doc_attributes = {"docgraph": {"default": None},
                      "docgraph_edges": {"getter": _doc_edges},
                      "docgraph_sentence_source": {"getter": _sentence_source},
                      "docgraph_graph": {"method": doc_graph}}
    token_attributes = {"docgraph_tag": {"getter": _token_value("tags")},
                        "docgraph_uncertainty": {"getter": _token_value("uncertainty")},
                        "docgraph_pruned": {"getter": _token_value("pruned")},
                        "docgraph_neighbours": {"getter": _neighbours}}
    span_attributes = {"score": {"getter": _span_score}}
    for cls, attributes in ((Doc, doc_attributes), (Token, token_attributes),
                            (Span, span_attributes)):
        for name, kwargs in attributes.items():
            if not cls.has_extension(name):
                cls.set_extension(name, **kwargs)


def doc_graph(doc: Doc) -> nx.DiGraph:
    """The Doc as :func:`docgraph.viz.to_networkx` annotates a document: one node per token the
    model read (numbered from 0, whitespace tokens left out), with ``word``, ``sentence``,
    ``position``, ``pred_tag``/``pred_type`` and, where the model has them, ``uncertainty``
    and ``pruned``; one edge per graph edge with ``r_ij`` and ``pruned``. Graph attributes
    ``threshold`` and ``has_graph`` tell :func:`docgraph.viz.html.to_html` about the model.

    Raises:
        DocgraphSpacyError: The Doc was not tagged by a ``docgraph_ner`` component.
    """
    data = _annotation(doc)
    if data is None:
        raise DocgraphSpacyError("this Doc was not tagged by a docgraph_ner component "
                                 "(doc._.docgraph is None): nothing to draw")
    node_of: dict[int, int] = {}
    G = nx.DiGraph(doc_id=None, num_sentences=len(data["sentences"]),
                   threshold=data["threshold"], has_graph=data["edges"] is not None)
    for s, (start, end) in enumerate(data["sentences"]):
        position = 0
        for i in range(start, end):
            if doc[i].is_space:
                continue
            tag = data["tags"][i]
            attrs: dict[str, Any] = {"word": doc[i].text, "sentence": s, "position": position,
                                     "pred_tag": tag, "pred_type": entity_type(tag)}
            if data["uncertainty"] is not None:
                attrs["uncertainty"] = data["uncertainty"][i]
            if data["pruned"] is not None:
                attrs["pruned"] = data["pruned"][i]
            node_of[i] = len(node_of)
            G.add_node(node_of[i], **attrs)
            position += 1
    for j, i, weight in data["edges"] or ():
        attrs = {} if weight is None else {"r_ij": weight}
        if data["pruned"] is not None:
            attrs["pruned"] = bool(data["pruned"][j])
        G.add_edge(node_of[j], node_of[i], **attrs)
    return G


register_extensions()


# ----------------------------------------------------------------------------- reading a Doc
@dataclass(frozen=True)
class DocLayout:
    """What the model reads of one Doc.

    Args:
        source: Where the sentence boundaries came from: ``"doc"`` or ``"docgraph"``.
        sentences: ``doc`` indices of the non-whitespace tokens of each sentence.
    """

    source: str
    sentences: list[list[int]]

    @property
    def num_tokens(self) -> int:
        """Tokens the model reads."""
        return sum(len(s) for s in self.sentences)


def doc_sentences(doc: Doc) -> tuple[str, list[list[int]]]:
    """The Doc's sentences as lists of its non-whitespace token indices, and their source:
    the Doc's own boundaries (``"doc"``) or, without any, docgraph's rules (``"docgraph"``)."""
    if doc.has_annotation("SENT_START"):
        source = "doc"
        groups = [[t.i for t in sent if not t.is_space] for sent in doc.sents]
    else:
        source = "docgraph"
        starts = [start for start, _ in sentence_spans(doc.text)]
        groups = [[] for _ in starts]
        for token in doc:
            if not token.is_space:
                groups[max(0, bisect.bisect_right(starts, token.idx) - 1)].append(token.i)
    return source, [g for g in groups if g]


def doc_layout(doc: Doc) -> DocLayout:
    """:func:`doc_sentences` of one Doc."""
    source, sentences = doc_sentences(doc)
    return DocLayout(source, sentences)


# ----------------------------------------------------------------------------- the component
def check_model_dir(model: str | Path) -> Path:
    """The absolute path of a docgraph model directory, or of the shipped model named
    ``model`` (a directory wins): :func:`~docgraph.persistence.locate.locate_model_dir`.

    Raises:
        DocgraphSpacyError: ``model`` does not exist, is not a directory, lacks a file of
            :data:`MODEL_FILES` or has a damaged ``model.pt`` (the message of
            :class:`~docgraph.persistence.locate.ModelDirError`).
    """
    try:
        return locate_model_dir(model)
    except ModelDirError as err:
        raise DocgraphSpacyError(f"docgraph_ner: {err}") from None


def label_clash(ours: Iterable[str], theirs: Iterable[str]) -> list[str]:
    """The labels that make two entity label sets clash: sets that share some labels but
    neither holds the other (CoNLL's PER/LOC/ORG/MISC against OntoNotes' 18 types: ORG and LOC
    in both, but LOC does not mean the same). Disjoint sets (other kinds of entities) and
    nested ones do not clash. ``[]`` when they do not."""
    a, b = set(ours), set(theirs)
    if not a & b or a <= b or b <= a:
        return []
    return sorted(a ^ b)


class DocgraphNER(Pipe):
    """A docgraph model as a spaCy pipeline component (see the module docstring).

    A saved pipeline is self-contained: ``nlp.to_disk`` copies the model directory (its
    weights, vocabularies and configuration; for a model with language-model features the
    record of its language model, whose own directory stays where it is) into the component's
    folder, and ``spacy.load`` tags with that copy, from any working directory, whatever
    became of the directory the pipeline was built from. ``to_bytes`` holds the model
    directory's path and the SHA-256 of its weights, not the model: ``from_bytes`` warns when
    the weights changed since.

    A component made from a saved pipeline's configuration whose ``model`` cannot be found
    (a relative path read from another working directory) waits for ``from_disk`` to give it
    the pipeline's copy; used before that, it raises the error naming the missing directory.

    Args:
        nlp: The pipeline (its NER components are checked for labels that clash with ours).
        name: The component's name.
        model: The model directory written by ``scripts/train.py``.
        overwrite_ents: Replace the Doc's existing entities with ours; ``False``: keep them
            and add ours where they overlap none.
        batch_tokens: Token budget of a batch (default: ``predict.py``'s,
            :func:`docgraph.tagging.pipeline.batch_tokens`).
        mc_seed: Tagging seed of the Monte-Carlo masks (``predict.py --mc-seed``).
        device: ``"auto"`` (a GPU when there is one), ``"cpu"`` or ``"cuda"``.
        threshold: Prune the graph at this uncertainty threshold instead of the trained one.
        max_doc_tokens: Tag Docs in chunks of at most this many tokens (default: the model's
            ``max_doc_tokens``, else ``predict.py``'s
            :data:`~docgraph.config.tagging.DEFAULT_MAX_DOC_TOKENS`); ``0``: whole Docs.
        threads: Torch intra-op threads while a Doc or batch is tagged, the caller's count
            restored afterwards (default: ``$DOCGRAPH_TAGGING_THREADS``, else one;
            ``0``: torch's setting as it is; :mod:`docgraph.runtime.threads`).
        precision: ``"fp32"``, ``"bf16"`` or ``"auto"`` (``predict.py --precision``; default:
            ``$DOCGRAPH_TAGGING_PRECISION``, else :mod:`docgraph.runtime.precision`'s).
        speed: ``"faithful"`` or ``"fast"`` (``predict.py --speed``; default: the model's,
            :func:`~docgraph.persistence.speeds.model_speeds`).
        consistency: Label consistency in decoding (``predict.py --consistency``; ``False``:
            ``--no-consistency``; default: the model's).

    Raises:
        DocgraphSpacyError: The model directory is not ours, an argument is out of range, or
            our labels clash with those of an NER component of ``nlp`` while
            ``overwrite_ents`` is off (a missing model directory: on first use, see above).
    """

    def __init__(self, nlp: Language, name: str = FACTORY, *, model: str | Path,
                 overwrite_ents: bool = False, batch_tokens: int | None = None,
                 mc_seed: int = _TAGGING.mc_seed, device: str = _TAGGING.device,
                 threshold: float | None = _TAGGING.threshold,
                 max_doc_tokens: int | None = _TAGGING.max_doc_tokens,
                 threads: int | None = None, precision: str | None = None,
                 speed: str | None = None, consistency: bool | None = None) -> None:
        for key, value, least in (("batch_tokens", batch_tokens, 1), ("mc_seed", mc_seed, 0),
                                  ("max_doc_tokens", max_doc_tokens, 0)):
            if value is not None and value < least:
                raise DocgraphSpacyError(f"docgraph_ner: {key} must be >= {least}, got {value}")
        from docgraph.runtime.threads import tagging_threads

        self.name = name
        try:
            #: Intra-op threads while tagging (``0``: torch's setting as it is).
            self.threads = tagging_threads(threads)
        except ValueError as err:
            raise DocgraphSpacyError(f"docgraph_ner: {err}") from None
        self.overwrite_ents = bool(overwrite_ents)
        self.mc_seed = int(mc_seed)
        self._options = {"batch_tokens": batch_tokens, "device": device,
                         "threshold": threshold, "max_doc_tokens": max_doc_tokens,
                         "precision": precision, "speed": speed,
                         "consistency": None if consistency is None else bool(consistency)}
        self._said_sentences = self._said_empty = False
        self._pid = os.getpid()
        self._missing: DocgraphSpacyError | None = None
        try:
            self.model_path = check_model_dir(model)
        except DocgraphSpacyError as err:
            if Path(model).expanduser().exists():
                raise
            self.model_path = Path(model).expanduser().resolve()
            self._missing = err  # a saved pipeline's from_disk brings its copy
            return
        self._load(self.model_path)
        self.check_labels(nlp)

    def _load(self, model_path: Path) -> None:
        """Load the model directory ``model_path`` with the component's options."""
        from docgraph.persistence.checkpoint import CheckpointError
        from docgraph.runtime.machine import resolve_device
        from docgraph.tagging.pipeline import bound_onednn_caches
        from docgraph.tagging.tagger import Tagger

        # read by oneDNN when it first runs: bounded memory over many Docs, as predict.py
        bound_onednn_caches()
        options = self._options
        try:
            self.tagger: Tagger = Tagger.load(
                model_path, resolve_device(options["device"]), threshold=options["threshold"],
                threads=self.threads, max_doc_tokens=options["max_doc_tokens"],
                batch_tokens=options["batch_tokens"], precision=options["precision"],
                speed=options["speed"], consistency=options["consistency"])
        except (CheckpointError, ValueError) as err:
            raise DocgraphSpacyError(f"docgraph_ner: cannot load {model_path}: {err}") from err
        self.model_path = model_path
        self._missing = None
        self.batch_tokens = self.tagger.batch_tokens
        self.max_doc_tokens = self.tagger.max_doc_tokens

    def _require_model(self) -> None:
        """Raise the error of a model directory that was not found and never replaced."""
        if self._missing is not None:
            raise self._missing

    @property
    def labels(self) -> tuple[str, ...]:
        """The entity types the model predicts (none while the model waits for
        ``from_disk``)."""
        if self._missing is not None:
            return ()
        return tuple(self.tagger.entity_types)

    def check_labels(self, nlp: Language) -> None:
        """Raise :class:`DocgraphSpacyError` when an NER component of ``nlp`` has labels that
        clash with ours (:func:`label_clash`) and ``overwrite_ents`` is off."""
        if self.overwrite_ents:
            return
        for name in nlp.pipe_names:
            if name == self.name or nlp.get_pipe_meta(name).factory not in _NER_FACTORIES:
                continue
            theirs = tuple(getattr(nlp.get_pipe(name), "labels", ()))
            clash = label_clash(self.labels, theirs)
            if clash:
                raise DocgraphSpacyError(
                    f"docgraph_ner: the labels of {self.model_path} ({', '.join(self.labels)}) "
                    f"clash with those of the pipeline's {name!r} component "
                    f"({', '.join(theirs)}): {', '.join(clash)} are in one set only, so Docs "
                    "would mix two label schemes. Add the component with config="
                    "{'overwrite_ents': True} to keep ours only, or remove or disable "
                    f"{name!r}")

    def initialize(self, get_examples: Any = None, *, nlp: Language | None = None) -> None:
        """``nlp.initialize()``: nothing to train; the labels are checked against the
        pipeline's NER components again."""
        if nlp is not None and self._missing is None:
            self.check_labels(nlp)

    # ---------------------------------------------------------------------------- tagging
    def __call__(self, doc: Doc) -> Doc:
        """Tag one Doc (see the module docstring)."""
        self.annotate([doc])
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Tag Docs ``batch_size`` at a time, their chunks batched by the token budget."""
        error_handler = self.get_error_handler()
        for docs in minibatch(stream, size=batch_size):
            try:
                self.annotate(docs)
                yield from docs
            except Exception as err:
                error_handler(self.name, self, docs, err)

    def annotate(self, docs: Sequence[Doc]) -> None:
        """Tag ``docs`` in place through the tagging core (:meth:`Tagger.pipe
        <docgraph.tagging.tagger.Tagger.pipe>`, with scores and the inspection): each Doc's
        sentences go in as token lists and come back whole."""
        self._require_model()
        if os.getpid() != self._pid:
            self._forked()

        layouts = [doc_layout(doc) for doc in docs]
        self._say(layouts)
        tagged = self.tagger.pipe(
            ([[docs[d][i].text for i in sentence] for sentence in layout.sentences]
             for d, layout in enumerate(layouts)),
            scores=True, inspect=True, mc_seed=self.mc_seed)
        for doc, layout, result in zip(docs, layouts, tagged, strict=True):
            self._set_annotations(doc, layout, result)

    def _forked(self) -> None:
        """First use in a process forked by ``nlp.pipe(n_process=N)``: one intra-op thread
        (the OpenMP pool of the parent hangs a forked child that uses it), no CUDA (it cannot
        start again in a forked process)."""
        import torch

        if self.tagger.device.type == "cuda":
            raise DocgraphSpacyError(
                f"{self.name}: nlp.pipe(n_process > 1) forks processes, where CUDA cannot run: "
                "tag on the GPU with n_process=1 (batches of many Docs use it well)")
        torch.set_num_threads(1)
        self._pid = os.getpid()

    def _say(self, layouts: Sequence[DocLayout]) -> None:
        """Log, once per component, that Docs had no sentence boundaries or no tokens."""
        if not self._said_sentences and any(
                lay.source == "docgraph" and lay.num_tokens for lay in layouts):
            self._said_sentences = True
            log.warning("%s: a Doc has no sentence boundaries: splitting its sentences with "
                        "docgraph's rules (doc._.docgraph_sentence_source == 'docgraph'); add "
                        "a 'sentencizer' or a parser before this component to set them",
                        self.name)
        if not self._said_empty and any(not lay.num_tokens for lay in layouts):
            self._said_empty = True
            log.warning("%s: a Doc has no tokens (empty or only whitespace): it gets no "
                        "entities", self.name)

    def _set_annotations(self, doc: Doc, layout: DocLayout, result: "TaggedDocument") -> None:
        """Write one Doc's entities and ``doc._.docgraph`` from its tagged document, whose
        sentences are the layout's (numbered the same)."""
        n = len(doc)
        prunes = any(s.uncertainty is not None for s in result.sentences)
        tags = ["O"] * n
        uncertainty: list[float | None] | None = [None] * n if prunes else None
        pruned: list[bool | None] | None = [None] * n if prunes else None
        for sentence in result.sentences:
            where = layout.sentences[sentence.index]
            for k, i in enumerate(where):
                tags[i] = sentence.tags[k]
                if uncertainty is not None and pruned is not None and sentence.pruned:
                    uncertainty[i] = sentence.uncertainty[k]  # type: ignore[index]
                    pruned[i] = sentence.pruned[k]
        entities = [(e.type, layout.sentences[e.sentence][e.start],
                     layout.sentences[e.sentence][e.end - 1] + 1, e.score)
                    for e in result.entities]
        edges: list[tuple[int, int, float | None]] | None = None
        if self.tagger.has_graph:
            edges = [(layout.sentences[e.source[0]][e.source[1]],
                      layout.sentences[e.target[0]][e.target[1]], e.weight)
                     for e in result.edges or ()]
        if edges is not None:
            edges.sort(key=lambda e: (e[1], e[0]))
        ours = [Span(doc, start, end, label=label) for label, start, end, _ in entities]
        doc.spans[SPANS_KEY] = SpanGroup(doc, name=SPANS_KEY, spans=ours,
                                         attrs={"scores": [score for *_, score in entities]})
        if self.overwrite_ents:
            doc.ents = ours
        else:
            taken = {i for ent in doc.ents for i in range(ent.start, ent.end)}
            free = [s for s in ours if not any(i in taken for i in range(s.start, s.end))]
            doc.ents = sorted([*doc.ents, *free], key=lambda s: s.start)
        doc._.docgraph = {
            "model": str(self.model_path),
            "sentence_source": layout.source,
            "sentences": [[s[0], s[-1] + 1] for s in layout.sentences],
            "tags": tags, "uncertainty": uncertainty, "pruned": pruned,
            "edges": None if edges is None else [list(e) for e in edges],
            "threshold": self.tagger.threshold if prunes else None,
            "entities": [[start, end, label, score] for label, start, end, score in entities],
        }

    # ---------------------------------------------------------------------------- scoring
    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
        """``nlp.evaluate``'s entity scores (``ents_p``, ``ents_r``, ``ents_f``,
        ``ents_per_type``; spaCy's :func:`~spacy.scorer.get_ner_prf`)."""
        return get_ner_prf(examples)

    # ---------------------------------------------------------------------- serialisation
    def _state(self) -> dict[str, Any]:
        self._require_model()
        return {"model": str(self.model_path),
                "model_sha256": file_sha256(self.model_path / "model.pt")}

    def _check_state(self, state: dict[str, Any], where: str) -> None:
        if not isinstance(state, dict) or "model_sha256" not in state:
            raise DocgraphSpacyError(f"{where}: not a saved docgraph_ner component (expected "
                                     "a JSON object with 'model' and 'model_sha256')")

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> None:
        """Write the model directory's files into ``path/model`` and ``path/docgraph_ner.json``
        (where the model came from and its weights' SHA-256): the saved pipeline tags with
        its own copy."""
        path = Path(path)
        state = self._state()
        self.tagger.save(path / _MODEL_COPY, overwrite=True)
        atomic_write_json(path / _STATE_FILE, {**state, "copy": _MODEL_COPY})

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> "DocgraphNER":
        """Load the model copied into ``path/model`` by :meth:`to_disk` (unless the same files
        are loaded already). A pipeline saved without a copy keeps the model of its
        configuration and warns when its weights changed since saving."""
        path = Path(path)
        file = path / _STATE_FILE
        try:
            state = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise DocgraphSpacyError(f"{file}: unreadable saved docgraph_ner component ({err})"
                                     ) from err
        self._check_state(state, str(file))
        copy = path / str(state.get("copy", _MODEL_COPY))
        if "copy" in state:
            missing = [name for name in MODEL_FILES if not (copy / name).is_file()]
            if missing:
                raise DocgraphSpacyError(
                    f"{copy}: the saved pipeline's copy of its model lacks "
                    f"{', '.join(missing)} (docgraph_ner's to_disk writes "
                    f"{', '.join(MODEL_FILES)})")
            if self._missing is not None or _files_differ(self.model_path, copy):
                self._load(copy.resolve())
            return self
        self._require_model()
        self._warn_if_changed(state)
        return self

    def _warn_if_changed(self, state: dict[str, Any]) -> None:
        if state["model_sha256"] != file_sha256(self.model_path / "model.pt"):
            log.warning("%s: the weights of %s are not those the pipeline was saved with "
                        "(from %s): its tags may differ", self.name, self.model_path,
                        state.get("model"))

    def to_bytes(self, *, exclude: Iterable[str] = ()) -> bytes:
        """The model directory's path and its weights' SHA-256 as bytes (not the model)."""
        return json.dumps(self._state()).encode("utf-8")

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = ()) -> "DocgraphNER":
        """Check the bytes of :meth:`to_bytes` against the loaded model: a warning when its
        weights changed since."""
        try:
            state = json.loads(bytes_data.decode("utf-8"))
        except ValueError as err:
            raise DocgraphSpacyError(f"docgraph_ner: unreadable bytes ({err})") from err
        self._check_state(state, "docgraph_ner bytes")
        self._require_model()
        self._warn_if_changed(state)
        return self


def _files_differ(loaded: Path, copy: Path) -> bool:
    """Whether the model files of two directories differ (by SHA-256)."""
    names = [n for n in (*MODEL_FILES, *OPTIONAL_MODEL_FILES)
             if (loaded / n).is_file() or (copy / n).is_file()]
    return any(not (loaded / n).is_file() or not (copy / n).is_file()
               or file_sha256(loaded / n) != file_sha256(copy / n) for n in names)


@Language.factory(
    FACTORY,
    default_config={"overwrite_ents": False, "batch_tokens": None,
                    "mc_seed": _TAGGING.mc_seed, "device": _TAGGING.device,
                    "threshold": _TAGGING.threshold, "max_doc_tokens": _TAGGING.max_doc_tokens,
                    "threads": None, "precision": None, "speed": None,
                    "consistency": None},
    assigns=["doc.ents", "token.ent_iob", "token.ent_type", "doc._.docgraph"],
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0,
                           "ents_per_type": None},
)
def make_docgraph_ner(nlp: Language, name: str, model: str, overwrite_ents: bool,
                      batch_tokens: int | None, mc_seed: int, device: str,
                      threshold: float | None, max_doc_tokens: int | None,
                      threads: int | None, precision: str | None = None,
                      speed: str | None = None, consistency: bool | None = None
                      ) -> DocgraphNER:
    """The ``docgraph_ner`` factory (:class:`DocgraphNER`), registered with spaCy on import
    and through the ``spacy_factories`` entry point of ``pip install docgraph[spacy]``."""
    return DocgraphNER(nlp, name, model=model, overwrite_ents=overwrite_ents,
                       batch_tokens=batch_tokens, mc_seed=mc_seed, device=device,
                       threshold=threshold, max_doc_tokens=max_doc_tokens, threads=threads,
                       precision=precision, speed=speed, consistency=consistency)
