"""The cross-sentence windows of a batch plan: the *previous* window of a sentence holds the
sentences before it, the *next* window those after it, never across documents.

A swapped pair (the previous windows planned from the next sentences or the other way round)
keeps every shape, so only tests that know which tokens each window should hold can see it.
"""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Batch

from docgraph.batching.plan import plan_batch
from docgraph.config import ExperimentConfig
from docgraph.data.document import Document, make_document
from docgraph.graph.splits import build_vocabularies, prepare_split
from docgraph.model import GCDocConfig
from docgraph.nn.layout import WindowPlan
from docgraph.persistence.model_dir import build_model

#: Sentence lengths of the hand-made documents (two documents, the second with a one-token
#: sentence): every token is named after its document and sentence, e.g. ``"d0s2t1"``.
LENGTHS = ((2, 3, 1, 2, 2), (1, 2, 3))


def _document(doc: int, lengths: tuple[int, ...], rename: int | None = None) -> Document:
    """Document ``doc``; sentence ``rename`` (if any) has other words of the same lengths."""
    sentences = []
    for s, n in enumerate(lengths):
        word = "other" if s == rename else f"d{doc}s{s}"
        sentences.append(([f"{word}t{t}" for t in range(n)], ["B-PER"] + ["I-PER"] * (n - 1)))
    return make_document(f"doc{doc}", sentences)


def _prepare(docs: list[Document], vocab_docs: list[Document]):
    vocabs, _, _ = build_vocabularies({"train": vocab_docs, "dev": [], "test": []}, "none")
    graphs = prepare_split(docs, vocabs, ExperimentConfig()).graphs
    return Batch.from_data_list(graphs), vocabs


def _window_tokens(plan: WindowPlan, tokens: list[str]) -> dict[int, list[str]]:
    """The tokens of every sentence's window, by sentence (sentences without one left out)."""
    assert plan.layout is not None
    rows = plan.layout.crf_index[plan.layout.crf_mask]
    lengths = plan.layout.crf_mask.sum(dim=1).tolist()
    windows, start = {}, 0
    for sentence, n in zip(plan.present.tolist(), lengths, strict=True):
        windows[sentence] = [tokens[i] for i in rows[start:start + n].tolist()]
        start += n
    return windows


def _expected(window: int, side: str) -> dict[int, list[str]]:
    expected, sentence = {}, 0
    for doc, lengths in enumerate(LENGTHS):
        for s in range(len(lengths)):
            chosen = (range(max(0, s - window), s) if side == "previous"
                      else range(s + 1, min(len(lengths), s + window + 1)))
            if chosen:
                expected[sentence] = [f"d{doc}s{q}t{t}" for q in chosen
                                      for t in range(lengths[q])]
            sentence += 1
    return expected


@pytest.mark.parametrize("window", [1, 2])
def test_previous_window_holds_the_sentences_before_and_next_those_after(window):
    docs = [_document(d, lengths) for d, lengths in enumerate(LENGTHS)]
    batch, _ = _prepare(docs, docs)
    tokens = [t for doc in docs for t in doc.tokens]
    plan = plan_batch(batch, GCDocConfig(window=window, window_encoding="concat"))
    assert plan.previous is not None and plan.next is not None
    previous = _window_tokens(plan.previous, tokens)
    following = _window_tokens(plan.next, tokens)
    assert previous == _expected(window, "previous")
    assert following == _expected(window, "next")
    # first sentences of the documents have no previous window, last ones no next window
    assert plan.previous.has_window.tolist() == [s not in (0, 5) for s in range(8)]
    assert plan.next.has_window.tolist() == [s not in (4, 7) for s in range(8)]


@pytest.mark.parametrize(("use_previous", "changed", "unchanged", "moved"), [
    # past context only: renaming the last sentence of document 0 moves nothing before it
    (True, 4, range(0, 4), 3),
    # future context only: renaming its first sentence moves nothing after it
    (False, 0, range(1, 5), 1),
])
def test_a_model_reads_only_the_side_it_is_given(use_previous, changed, unchanged, moved):
    """Through the whole model (no graph): with one side of the cross-sentence context, a
    sentence's emissions do not depend on the sentences of the other side."""
    docs = [_document(d, lengths) for d, lengths in enumerate(LENGTHS)]
    renamed = [_document(0, LENGTHS[0], rename=changed), docs[1]]
    batch, vocabs = _prepare(docs, docs + renamed)
    other, _ = _prepare(renamed, docs + renamed)

    def emissions(config: GCDocConfig, data: Batch) -> torch.Tensor:
        torch.manual_seed(0)
        model = build_model(config, vocabs).eval()
        with torch.no_grad():
            return model(data, compute_loss=False).emissions

    starts = [0]
    for n in LENGTHS[0] + LENGTHS[1]:
        starts.append(starts[-1] + n)

    def tokens_of(sentences) -> slice:
        sentences = list(sentences)
        return slice(starts[sentences[0]], starts[sentences[-1] + 1])

    tiny = dict(hidden=16, char_hidden=8, sent_dim=16, graph=False, window=1,
                window_encoding="concat")
    one_side = GCDocConfig(**tiny, use_previous=use_previous, use_next=not use_previous)
    a, b = emissions(one_side, batch), emissions(one_side, other)
    torch.testing.assert_close(a[tokens_of(unchanged)], b[tokens_of(unchanged)])
    torch.testing.assert_close(a[starts[5]:], b[starts[5]:])  # the other document
    assert not torch.allclose(a[tokens_of([changed])], b[tokens_of([changed])])
    # with both sides, the renamed sentence's neighbour does move (the check above can fail)
    both = GCDocConfig(**tiny)
    a, b = emissions(both, batch), emissions(both, other)
    assert not torch.allclose(a[tokens_of([moved])], b[tokens_of([moved])])
