"""From documents to PyTorch Geometric graphs: the one bridge between ``docgraph.data`` and tensors.

GCDoc's document graph (paper, "Graph Construction") has one node per token and connects every
two tokens of the same document whose words are equal case-insensitively. Following the paper's
"Complexity Analysis", each node keeps a fixed-size neighbourhood of at most ``p`` neighbours
sampled uniformly during preprocessing, so message passing costs ``O(n p d^2)``.

Edges are directed, ``edge_index[0]`` is the source ``j`` and ``edge_index[1]`` the target ``i``
that receives the message; sampling limits the in-degree of each target. A sampled graph is
therefore not symmetric.

Long documents are first split into chunks of whole sentences
(:func:`~docgraph.data.chunking.split_long_documents`): a chunk is a document of its own, so
the edges between tokens of different chunks are lost.
"""

from __future__ import annotations

import hashlib
import string
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import torch
from torch_geometric.data import Data

from docgraph.config.graph import GraphConfig
from docgraph.data.chunking import split_long_documents
from docgraph.data.document import Document
from docgraph.data.tags import iob2_to_bioes
from docgraph.data.vocab import Vocab, Vocabularies

PUNCTUATION: frozenset[str] = frozenset(string.punctuation) | frozenset(
    {"``", "''", "--", "...", "-LRB-", "-RRB-", "-LSB-", "-RSB-", "-LCB-", "-RCB-"}
)
"""Tokens a :class:`GraphConfig` may leave out of the graph (``skip_tokens=PUNCTUATION``)."""

UNLABELLED_TAGS: frozenset[str] = frozenset({"", "_"})
"""Tags that mark a token without a gold label; a document whose tags are all such is unlabelled."""

_EMPTY_EDGES = torch.empty(2, 0, dtype=torch.long)


def _floyd_offsets(m: np.ndarray, p: int, u: np.ndarray) -> np.ndarray:
    """Uniform ``p``-subsets of ``range(m[r])`` for every row ``r`` (Floyd's algorithm).

    Args:
        m: ``[R]`` candidate counts, all ``> p``.
        p: Subset size.
        u: ``[R, p]`` uniform numbers in ``[0, 1)``.

    Returns:
        ``[R, p]`` distinct offsets per row.
    """
    chosen = np.empty((m.shape[0], p), dtype=np.int64)
    for step in range(p):  # p iterations, vectorised over all rows
        j = m - p + step
        t = np.minimum((u[:, step] * (j + 1)).astype(np.int64), j)
        taken = (chosen[:, :step] == t[:, None]).any(axis=1)
        chosen[:, step] = np.where(taken, j, t)
    return chosen


def recurrence_edges(
    words: Sequence[str],
    max_neighbours: int | None = None,
    generator: torch.Generator | None = None,
    lowercase: bool = True,
    skip: Iterable[str] = frozenset(),
) -> torch.Tensor:
    """Edges between the recurrent tokens of one document.

    Token ``i`` receives a message from every token ``j != i`` whose word is equal (after
    lowercasing when ``lowercase``); with ``max_neighbours = p`` each target keeps ``p`` of its
    candidates sampled uniformly without replacement (all of them when it has ``<= p``). The work
    is vectorised over groups of equal words; a group of size ``g`` costs ``O(g p)`` when sampling,
    never ``O(g^2)``.

    Args:
        words: The tokens of the document, in order.
        max_neighbours: ``p``; ``0`` or ``None`` keeps all neighbours.
        generator: Random source of the sampling (torch's global one when ``None``).
        lowercase: Compare words case-insensitively.
        skip: Words (exact or lowercased) that get no edges.

    Returns:
        ``[2, E]`` long tensor, row 0 the sources, row 1 the targets, sorted by
        ``(target, source)``; no self-loops.
    """
    keys = [w.lower() for w in words] if lowercase else list(words)
    ids_of: dict[str, int] = {}
    skip = frozenset(skip)
    if skip:
        ids_list = [
            -1 if (w in skip or k in skip) else ids_of.setdefault(k, len(ids_of))
            for w, k in zip(words, keys)
        ]
    else:
        ids_list = [ids_of.setdefault(k, len(ids_of)) for k in keys]
    if not ids_list:
        return _EMPTY_EDGES.clone()
    ids = np.asarray(ids_list, dtype=np.int64)
    kept = np.flatnonzero(ids >= 0)
    counts = np.bincount(ids[kept], minlength=len(ids_of))
    recurrent = kept[counts[ids[kept]] >= 2]
    if recurrent.size == 0:
        return _EMPTY_EDGES.clone()

    gid = ids[recurrent]
    order = np.argsort(gid, kind="stable")
    members = recurrent[order]  # token indices grouped by word, ascending within a group
    size = counts[gid[order]]  # group size of each member
    first = np.flatnonzero(np.r_[True, gid[order][1:] != gid[order][:-1]])
    start = np.repeat(first, np.diff(np.r_[first, members.size]))
    rank = np.arange(members.size) - start
    # A neighbour is described by an offset c in [0, g-1): source rank = (rank + 1 + c) mod g.

    p = max_neighbours or None
    full = np.ones(members.size, dtype=bool) if p is None else size - 1 <= p
    parts_tgt, parts_off = [], []
    full_pos = np.flatnonzero(full)
    if full_pos.size:
        n_cand = size[full_pos] - 1
        tgt = np.repeat(full_pos, n_cand)
        offset_start = np.repeat(np.cumsum(n_cand) - n_cand, n_cand)
        parts_tgt.append(tgt)
        parts_off.append(np.arange(tgt.size) - offset_start)
    sampled_pos = np.flatnonzero(~full)
    if sampled_pos.size:
        assert p is not None
        u = torch.rand((sampled_pos.size, p), generator=generator, dtype=torch.float64).numpy()
        off = _floyd_offsets(size[sampled_pos] - 1, p, u)
        parts_tgt.append(np.repeat(sampled_pos, p))
        parts_off.append(off.reshape(-1))
    tgt_pos = np.concatenate(parts_tgt)
    off = np.concatenate(parts_off)
    src_pos = start[tgt_pos] + (rank[tgt_pos] + 1 + off) % size[tgt_pos]
    src, tgt = members[src_pos], members[tgt_pos]
    perm = np.lexsort((src, tgt))
    return torch.from_numpy(np.stack([src[perm], tgt[perm]]))


def graph_statistics(
    documents: Iterable[Document],
    max_neighbours: int | None = 5,
    seed: int = 0,
    lowercase: bool = True,
) -> dict[str, int]:
    """Size of the document graphs of a corpus.

    Args:
        documents: The documents.
        max_neighbours: ``p`` for ``edges_sampled``.
        seed: Seed of the sampling.
        lowercase: Compare words case-insensitively.

    Returns:
        ``documents``, ``tokens``, ``recurrent_tokens`` (tokens whose word occurs again in their
        document), ``edges_all`` (directed edges without sampling) and ``edges_sampled``.
    """
    generator = torch.Generator().manual_seed(seed)
    stats = dict.fromkeys(
        ("documents", "tokens", "recurrent_tokens", "edges_all", "edges_sampled"), 0
    )
    for doc in documents:
        words = doc.tokens
        counts = Counter(w.lower() for w in words) if lowercase else Counter(words)
        stats["documents"] += 1
        stats["tokens"] += len(words)
        stats["recurrent_tokens"] += sum(c for c in counts.values() if c >= 2)
        stats["edges_all"] += sum(c * (c - 1) for c in counts.values())
        edges = recurrence_edges(words, max_neighbours, generator, lowercase)
        stats["edges_sampled"] += edges.shape[1]
    return stats


class DocumentGraph(Data):
    """A document as a graph: one node per token, edges between recurrent tokens.

    Attributes:
        word: ``[N]`` word ids.
        chars: ``[N, max_word_len]`` character ids, 0-padded.
        char_len: ``[N]`` number of characters kept (at least 1).
        y: ``[N]`` BIOES label ids (all ``"O"`` = 0 when ``has_labels`` is false).
        token_position: ``[N]`` position of the token in its sentence.
        token_sentence: ``[N]`` sentence of the token; offset by the number of sentences of the
            preceding graphs when batching, so it indexes ``sent_len`` of the batch.
        sent_len: ``[S]`` sentence lengths.
        edge_index: ``[2, E]`` recurrence edges (source, target).
        lm: ``[N, H]`` contextual word features (float16 or float32), only when the model uses
            a language model (:func:`attach_token_features`).
        doc_id: The document id.
        has_labels: Whether ``y`` holds gold labels.
        partial: ``[N]`` set where a token tagged ``O`` may carry the labels of types its
            document does not annotate (training only, :meth:`GCDoc.set_label_lattice
            <docgraph.model.GCDoc.set_label_lattice>`; absent otherwise).
        distilled: ``[N]`` set on the tokens the distillation term covers (training only,
            ``--distil-on rehearsal``, :class:`~docgraph.training.distil.Distiller`; absent:
            every token).
    """

    def __inc__(self, key: str, value, *args, **kwargs):
        if key == "token_sentence":
            return self.sent_len.numel()
        return super().__inc__(key, value, *args, **kwargs)


class CharIdTable:
    """Character ids of words, cached per word type.

    Args:
        chars: The character vocabulary (with an unknown entry).
        max_word_len: Characters kept per word.
    """

    def __init__(self, chars: Vocab, max_word_len: int) -> None:
        self.chars = chars
        self.max_word_len = max_word_len
        self._row_of: dict[str, int] = {}
        self._table = np.zeros((0, max_word_len), dtype=np.int64)
        self._lens = np.zeros(0, dtype=np.int64)

    def _add(self, new_words: list[str]) -> None:
        """Append the rows of ``new_words`` to the cache table (amortised doubling)."""
        size = len(self._row_of)
        need = size + len(new_words)
        if need > self._table.shape[0]:
            capacity = max(need, 2 * self._table.shape[0], 1024)
            table = np.zeros((capacity, self.max_word_len), dtype=np.int64)
            lens = np.zeros(capacity, dtype=np.int64)
            table[:size], lens[:size] = self._table[:size], self._lens[:size]
            self._table, self._lens = table, lens
        for k, word in enumerate(new_words, start=size):
            ids = self.chars.indices(word[: self.max_word_len])
            self._table[k, : len(ids)] = ids
            self._lens[k] = max(len(ids), 1)
            self._row_of[word] = k

    def encode(self, words: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``chars [N, max_word_len]`` and ``char_len [N]`` for ``words``."""
        row_of = self._row_of
        new = [w for w in dict.fromkeys(words) if w not in row_of]
        if new:
            self._add(new)
        rows = np.asarray([row_of[w] for w in words], dtype=np.int64)
        return torch.from_numpy(self._table[rows]), torch.from_numpy(self._lens[rows])


def _label_ids(doc: Document, labels: Vocab) -> tuple[list[int], bool]:
    """BIOES label ids of the document's tokens and whether it has labels."""
    tags = doc.tags
    if tags and all(t in UNLABELLED_TAGS for t in tags):
        return [0] * len(tags), False
    ids: list[int] = []
    for sent in doc.sentences:
        try:
            bioes = iob2_to_bioes(sent.tags)
        except ValueError as err:
            raise ValueError(f"document {doc.doc_id!r}, sentence {sent.index}: {err}") from err
        try:
            ids += labels.indices(bioes)
        except KeyError:
            label = next(lab for lab in bioes if lab not in labels)
            raise ValueError(
                f"document {doc.doc_id!r}: label {label!r} is not in the label vocabulary"
            ) from None
    return ids, True


def document_to_graph(
    doc: Document,
    vocabs: Vocabularies,
    config: GraphConfig | None = None,
    generator: torch.Generator | None = None,
    char_ids: CharIdTable | None = None,
) -> DocumentGraph:
    """Turn one document into a :class:`DocumentGraph`.

    The document is not split (see :func:`~docgraph.data.chunking.split_long_documents`).

    Args:
        doc: The document (IOB2 tags, converted to BIOES per sentence).
        vocabs: Word, character and label vocabularies.
        config: Graph options (defaults of :class:`GraphConfig` when ``None``).
        generator: Random source of the neighbour sampling.
        char_ids: A shared :class:`CharIdTable` to reuse its cache across documents.

    Returns:
        The graph.

    Raises:
        ValueError: For a label missing from ``vocabs.labels`` (naming the document and label)
            or a malformed tag.
    """
    config = config or GraphConfig()
    if char_ids is None:
        char_ids = CharIdTable(vocabs.chars, config.max_word_len)
    words = doc.tokens
    labels, has_labels = _label_ids(doc, vocabs.labels)
    sent_len = torch.tensor([len(s) for s in doc.sentences], dtype=torch.long)
    n = len(words)
    token_sentence = torch.repeat_interleave(torch.arange(sent_len.numel()), sent_len)
    starts = torch.cumsum(sent_len, 0) - sent_len
    token_position = torch.arange(n) - starts[token_sentence]
    chars, char_len = char_ids.encode(words)
    edge_index = recurrence_edges(
        words, config.max_neighbours, generator, config.lowercase, config.skip_tokens
    )
    return DocumentGraph(
        word=torch.tensor(vocabs.words.indices(words), dtype=torch.long),
        chars=chars,
        char_len=char_len,
        y=torch.tensor(labels, dtype=torch.long),
        token_position=token_position,
        token_sentence=token_sentence,
        sent_len=sent_len,
        edge_index=edge_index,
        doc_id=doc.doc_id,
        has_labels=has_labels,
        num_nodes=n,
    )


def documents_to_graphs(
    documents: Iterable[Document],
    vocabs: Vocabularies,
    config: GraphConfig | None = None,
) -> list[DocumentGraph]:
    """Graphs of many documents, deterministic for ``config.seed``.

    Documents are first split with ``config.max_doc_tokens``; each document (or chunk) samples
    its neighbours from its own generator, seeded by ``config.seed`` (``0`` when ``None``:
    resolve it to the run's seed first with :meth:`GraphConfig.resolve`) and its words
    (:func:`document_generator`), so that its graph is the same in any list of documents (one
    process or several, any order). Character ids are cached per word type across documents.

    Args:
        documents: The documents.
        vocabs: The vocabularies.
        config: Graph options.

    Returns:
        One graph per document or chunk.
    """
    config = config or GraphConfig()
    char_ids = CharIdTable(vocabs.chars, config.max_word_len)
    seed = 0 if config.seed is None else config.seed
    return [
        document_to_graph(doc, vocabs, config, document_generator(doc.tokens, seed), char_ids)
        for doc in split_long_documents(documents, config.max_doc_tokens)
    ]


def document_generator(words: Sequence[str], seed: int) -> torch.Generator:
    """A CPU generator seeded by ``seed`` and a hash of the document's ``words``: the random
    source of the document's neighbour sampling in :func:`documents_to_graphs`."""
    digest = hashlib.blake2b(int(seed).to_bytes(8, "little", signed=True), digest_size=8)
    digest.update("\x1f".join(words).encode("utf-8"))
    return torch.Generator().manual_seed(int.from_bytes(digest.digest(), "little") >> 1)


def attach_token_features(graphs: Sequence[DocumentGraph], features: np.ndarray | torch.Tensor,
                          key: str = "lm") -> None:
    """Slice a per-token feature table over graphs, in order, and set it as ``graph[key]``.

    The rows of ``features`` follow the tokens of the documents the graphs were made from, so
    chunks of a split document (:func:`~docgraph.data.chunking.split_long_documents`)
    take consecutive rows. A NumPy
    array (e.g. a copy-on-write memory map) is shared, not copied.

    Args:
        graphs: The graphs, in the order of their tokens in ``features``.
        features: ``[T, H]`` with ``T`` the total number of tokens of ``graphs``.
        key: Attribute name (``"lm"`` is what :class:`~docgraph.model.GCDoc` reads).

    Raises:
        ValueError: If the number of rows is not the number of tokens.
    """
    total = sum(int(g.num_nodes) for g in graphs)
    if features.ndim != 2 or features.shape[0] != total:
        raise ValueError(
            f"token features of shape {tuple(features.shape)} do not fit {len(graphs)} graphs "
            f"with {total} tokens (expected [{total}, H])"
        )
    table = torch.from_numpy(features) if isinstance(features, np.ndarray) else features
    offset = 0
    for graph in graphs:
        n = int(graph.num_nodes)
        graph[key] = table[offset:offset + n]
        offset += n
