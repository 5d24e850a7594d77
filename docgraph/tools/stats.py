"""Print corpus and document-graph statistics of a data set, split by split.

Usage::

    python scripts/stats.py --dataset conll03 --data-dir ../shared/data/conll2003
    python scripts/stats.py --dataset sample --json --neighbours 5 --seed 0
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from docgraph.cli.arguments import fail
from docgraph.data.document import Document
from docgraph.data.errors import CorpusFormatError
from docgraph.data.registry import DATASETS, load_dataset
from docgraph.data.stats import corpus_statistics

GRAPH_KEYS = ("recurrent_tokens", "edges_all", "edges_sampled")


def split_statistics(documents: list[Document], neighbours: int, seed: int) -> dict[str, Any]:
    """Corpus statistics of one split plus the size of its document graphs.

    Args:
        documents: The split.
        neighbours: ``p``, the number of sampled neighbours per node.
        seed: Seed of the neighbour sampling.

    Returns:
        :func:`~docgraph.data.stats.corpus_statistics` plus ``recurrent_tokens``,
        ``edges_all`` and ``edges_sampled``.
    """
    from docgraph.graph import graph_statistics  # lazy: needs torch

    stats = corpus_statistics(documents)
    graph = graph_statistics(documents, max_neighbours=neighbours, seed=seed)
    stats.update({key: graph[key] for key in GRAPH_KEYS})
    return stats


def format_split(split: str, stats: dict[str, Any]) -> str:
    """Human-readable lines for one split.

    Args:
        split: Split name.
        stats: Output of :func:`split_statistics`.

    Returns:
        The text, one quantity per line.
    """
    lines = [f"[{split}]"]
    labels = {
        "documents": "documents/parts",  # the graph unit: an OntoNotes part, a CoNLL document
        "source_documents": "source documents",
        "sentences": "sentences",
        "tokens": "tokens",
    }
    for key, label in labels.items():
        lines.append(f"  {label:<18}{stats[key]:>10,}")
    total = sum(stats["entities"].values())
    lines.append(f"  {'entities':<18}{total:>10,}")
    for typ, count in stats["entities"].items():
        lines.append(f"    {typ:<16}{count:>10,}")
    for key in GRAPH_KEYS:
        lines.append(f"  {key:<18}{stats[key]:>10,}")
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """Argument parser that reports errors in one line (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        """Print ``error: message`` on one line and exit with status 2."""
        fail(message)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line.

    Args:
        argv: Arguments without the program name (``None``: ``sys.argv[1:]``).

    Returns:
        The parsed arguments.
    """
    parser = _Parser(description="Corpus and document-graph statistics.")
    parser.add_argument("--dataset", required=True, choices=sorted(DATASETS))
    parser.add_argument("--data-dir", default=None, help="directory with the split files")
    parser.add_argument("--json", action="store_true", help="print one JSON object by split")
    parser.add_argument("--neighbours", type=int, default=5, help="sampled neighbours p")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    args = parser.parse_args(argv)
    if args.neighbours < 1:
        parser.error(f"--neighbours must be at least 1, got {args.neighbours}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the script.

    Args:
        argv: Arguments without the program name.

    Returns:
        0; bad arguments or data print one `error: ...` line and exit with status 2.
    """
    args = parse_args(argv)
    try:
        data = load_dataset(args.dataset, args.data_dir)
        stats = {
            split: split_statistics(docs, args.neighbours, args.seed)
            for split, docs in data.items()
        }
    except (ValueError, FileNotFoundError, CorpusFormatError) as exc:
        fail(str(exc))
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        print("\n".join(format_split(split, s) for split, s in stats.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
