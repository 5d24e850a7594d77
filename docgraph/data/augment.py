"""Case augmentation: training documents seen lowercased or uppercased, whole, per epoch.

Mayhew et al. (EMNLP 2019, "ner and pos when nothing is capitalized") train on cased and
uncased copies of the data, which makes a tagger nearly case-blind at little cost on cased text.
Here every epoch a seeded share of the training documents is seen lowercased, another share
uppercased; a document is transformed whole, so the document graph (which links repeats
case-insensitively) and the cross-sentence windows are those of the original. Tags never change.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from docgraph.data.document import Document, Sentence

__all__ = ["CASES", "augmented_words", "case_variant", "epoch_cases", "variants_needed"]

#: The case transforms, ``"cased"`` (the document as it is) first.
CASES = ("cased", "lower", "upper")


def case_variant(document: Document, case: str) -> Document:
    """``document`` with every token lowercased (``"lower"``), uppercased (``"upper"``) or as
    it is (``"cased"``); tags, ids and sentence order kept."""
    if case == "cased":
        return document
    if case not in CASES:
        raise ValueError(f"unknown case {case!r}: expected one of {', '.join(CASES)}")
    change = str.lower if case == "lower" else str.upper
    return Document(
        document.doc_id,
        tuple(Sentence(tuple(change(t) for t in s.tokens), s.tags, s.doc_id, s.index)
              for s in document.sentences),
        document.source_scheme,
    )


def epoch_cases(num_documents: int, lowercase_share: float, uppercase_share: float,
                seed: int, epoch: int, novel_share: float = 0.0) -> list[str]:
    """The form in which each of ``num_documents`` training documents is seen in ``epoch``.

    ``round(share * num_documents)`` documents are lowercased, as many uppercased and as many
    seen with invented names (``"novel"``, :mod:`docgraph.data.novel_names`), drawn without
    overlap by a generator seeded with ``(seed, epoch)`` alone, so every process of a
    data-parallel run, and a resumed run, draws the same. Without ``novel_share`` the draw is
    the case augmentation's alone.
    """
    if min(lowercase_share, uppercase_share, novel_share) < 0 or \
            lowercase_share + uppercase_share + novel_share > 1:
        raise ValueError(f"shares {lowercase_share}, {uppercase_share} and {novel_share}: "
                         "expected shares >= 0 whose sum is at most 1")
    order = list(range(num_documents))
    random.Random(f"case-augmentation:{seed}:{epoch}").shuffle(order)
    cases = ["cased"] * num_documents
    taken = 0
    for form, share in (("lower", lowercase_share), ("upper", uppercase_share),
                        ("novel", novel_share)):
        count = min(round(share * num_documents), num_documents - taken)
        for i in order[taken:taken + count]:
            cases[i] = form
        taken += count
    return cases


def variants_needed(lowercase_share: float, uppercase_share: float) -> tuple[str, ...]:
    """The cases a run with these shares trains on, ``"cased"`` first."""
    return ("cased",) + (("lower",) if lowercase_share > 0 else ()) + \
        (("upper",) if uppercase_share > 0 else ())


def augmented_words(documents: Sequence[Document], cases: Sequence[str]) -> list[str]:
    """The words of ``documents`` in each of ``cases`` other than ``"cased"``, in order (for
    the word vocabulary: every form a training step can meet gets a trainable row)."""
    return [w for case in cases if case != "cased"
            for d in documents for w in case_variant(d, case).tokens]
