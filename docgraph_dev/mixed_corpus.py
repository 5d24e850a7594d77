"""A 4-type training corpus of CoNLL-2003 and OntoNotes 5.0 together, written as CoNLL columns.

OntoNotes' 18 types are taken to CoNLL-2003's four by
:data:`~docgraph.data.type_maps.ONTONOTES_TO_CONLL` (numeric and temporal types become ``O``).
The splits, each a list of whole documents:

* ``train``: CoNLL-2003 train, then OntoNotes train mapped;
* ``dev``: CoNLL-2003 dev, the same lowercased, then OntoNotes dev mapped -- early stopping
  then weighs cased and lowercased news and the other genres together;
* ``test``: CoNLL-2003 test as it is (the other rows of the out-of-domain benchmark are scored
  by ``benchmarks/out_of_domain.py``).

Train with ``scripts/train.py --dataset column --data-dir OUT`` (``--init-from conll03`` to
start from the shipped model). The files hold the licensed corpora's words: write them outside
the repository.

    python benchmarks/mixed_corpus.py --data-dir ../shared/data --out /tmp/mixed
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

from docgraph.data.augment import case_variant
from docgraph.data.document import Document
from docgraph.data.type_maps import ONTONOTES_TO_CONLL, map_document
from docgraph_dev.adaptation import write_corpus

__all__ = ["main", "mixed_splits"]


def mixed_splits(conll: Mapping[str, Sequence[Document]],
                 ontonotes: Mapping[str, Sequence[Document]]) -> dict[str, list[Document]]:
    """The ``train``, ``dev`` and ``test`` splits of the mixed corpus (module docstring)."""
    mapped = {name: [map_document(d, ONTONOTES_TO_CONLL) for d in docs]
              for name, docs in ontonotes.items() if name in ("train", "dev")}
    return {
        "train": [*conll["train"], *mapped["train"]],
        "dev": [*conll["dev"], *(case_variant(d, "lower") for d in conll["dev"]),
                *mapped["dev"]],
        "test": list(conll["test"]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    from docgraph.data.registry import load_dataset

    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"),
                        help="the folder holding conll2003/ and ontonotes/")
    parser.add_argument("--out", type=Path, required=True, help="the folder to write")
    args = parser.parse_args(argv)
    splits = mixed_splits(load_dataset("conll03", args.data_dir / "conll2003"),
                          load_dataset("ontonotes", args.data_dir / "ontonotes"))
    write_corpus(args.out, splits)
    for name, docs in splits.items():
        tokens = sum(d.num_tokens for d in docs)
        print(f"{args.out / name}.txt: {len(docs)} documents, {tokens:,} tokens")
    return 0
