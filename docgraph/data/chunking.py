"""Long documents in chunks of whole sentences (``max_doc_tokens``).

GCDoc's graph and cross-sentence windows span a whole document; a document longer than a
token budget is cut into chunks of whole sentences, each a :class:`Document` of its own, so
the graph edges between tokens of different chunks are lost. Torch-free: training, tagging
(:mod:`docgraph.tagging`) and the spaCy component chunk alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from docgraph.data.document import Document, Sentence


def pack_sentences(sentences: Sequence[Sentence], max_tokens: int) -> list[list[Sentence]]:
    """Groups of consecutive sentences of at most ``max_tokens`` tokens, packed greedily in
    order; a sentence longer than ``max_tokens`` is a group on its own.

    Args:
        sentences: The sentences, in order.
        max_tokens: Token budget per group (``>= 1``).

    Returns:
        The groups, in order; ``[[]]`` for no sentences.
    """
    groups: list[list[Sentence]] = [[]]
    used = 0
    for sent in sentences:
        if groups[-1] and used + len(sent) > max_tokens:
            groups.append([])
            used = 0
        groups[-1].append(sent)
        used += len(sent)
    return groups


def chunk_document(doc: Document, k: int, sentences: Sequence[Sentence]) -> Document:
    """Chunk ``k`` of ``doc``: id ``f"{doc_id}#{k}"``, its ``sentences`` renumbered from 0."""
    chunk_id = f"{doc.doc_id}#{k}"
    return Document(
        doc_id=chunk_id,
        sentences=tuple(replace(s, doc_id=chunk_id, index=j) for j, s in enumerate(sentences)),
        source_scheme=doc.source_scheme,
    )


def split_long_documents(documents: Iterable[Document], max_tokens: int | None) -> list[Document]:
    """Split documents longer than ``max_tokens`` into chunks of whole sentences.

    Sentences are packed greedily in order; a sentence longer than ``max_tokens`` is a chunk on
    its own. Chunks get ids ``f"{doc_id}#{k}"`` and renumbered sentences; documents that fit are
    returned unchanged. Graph edges between tokens of different chunks are lost.

    Args:
        documents: The documents.
        max_tokens: Token budget per chunk; ``None`` or ``0`` disables splitting.

    Returns:
        The documents and chunks, in order.
    """
    out: list[Document] = []
    for doc in documents:
        if not max_tokens or doc.num_tokens <= max_tokens:
            out.append(doc)
            continue
        out.extend(chunk_document(doc, k, group)
                   for k, group in enumerate(pack_sentences(doc.sentences, max_tokens)))
    return out
