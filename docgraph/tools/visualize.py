"""``docgraph visualize`` (``python scripts/visualize.py``): draw a document graph or list the
noisiest edges.

Examples::

    python scripts/visualize.py --model runs/sample --split dev --doc 0 --out doc0.png
    python scripts/visualize.py --model runs/sample --split dev --doc 0 --word Ashdown --out a.svg
    python scripts/visualize.py --model runs/sample --split dev --noisy 20
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from docgraph.cli.arguments import add_mc_seed_argument, check_tagging_arguments, fail
from docgraph.data.registry import DATASETS


class _Parser(argparse.ArgumentParser):
    """Argument errors as one ``error: ...`` line on stderr, exit status 2."""

    def error(self, message: str) -> NoReturn:
        fail(message)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``scripts/visualize.py``."""
    p = _Parser(prog="visualize.py",
                description="Draw the document graph of a trained GCDoc model (uncertainty, "
                            "pruning, relation scores r_ij) or print its noisiest edges.")
    p.add_argument("--model", required=True, help="model directory written by train.py")
    p.add_argument("--dataset", choices=tuple(DATASETS), default=None,
                   help="corpus (default: the model's)")
    p.add_argument("--data-dir", default=None,
                   help="corpus directory (default: the model's, or $DOCGRAPH_DATA_DIR/<dataset>)")
    p.add_argument("--split", choices=("train", "dev", "test"), default="dev",
                   help="split of the corpus (default: dev)")
    p.add_argument("--doc", type=int, default=None,
                   help="index of the document (chunk) in the split; --out needs it")
    p.add_argument("--word", default=None,
                   help="draw only the tokens of this word (case-insensitive) and their edges")
    p.add_argument("--max-words", type=int, default=6, metavar="K",
                   help="without --word, draw only K repeated words when the document has "
                        "more: entities and predicted mentions, the most inconsistently tagged "
                        "first (default: 6; 0 draws every word)")
    p.add_argument("--layout", choices=("sentence", "word"), default="sentence",
                   help="nodes by sentence and position, or one column per word "
                        "(default: sentence)")
    p.add_argument("--out", default=None,
                   help="figure of document --doc N to write (.png or .svg)")
    p.add_argument("--html", default=None, metavar="FILE",
                   help="write an interactive page of the split's documents (or of --doc N): "
                        "predicted entities, errors, and each token's repeats with their edge "
                        "weights and pruning; opens from disk, no network")
    p.add_argument("--noisy", type=int, default=None, metavar="K",
                   help="print the K noisiest edges (of --doc, else of the whole split)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu",
                   help="device to tag on (default: cpu)")
    add_mc_seed_argument(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.out is None and args.noisy is None and args.html is None:
        fail("nothing to do: give --out FILE (with --doc), --html FILE and/or --noisy K")
    if args.out is not None:
        if args.doc is None:
            fail("--out needs --doc N")
        if Path(args.out).suffix.lower() not in (".png", ".svg"):
            fail(f"--out {args.out}: the figure must be a .png or .svg file")
    if args.noisy is not None and args.noisy < 1:
        fail(f"--noisy must be >= 1, got {args.noisy}")
    if args.doc is not None and args.doc < 0:
        fail(f"--doc must be >= 0, got {args.doc}")
    if args.word is not None and args.out is None:
        fail("--word needs --out FILE")
    if args.max_words < 0:
        fail(f"--max-words must be >= 0, got {args.max_words}")
    for flag, path in (("--out", args.out), ("--html", args.html)):
        if path is not None and Path(path).is_dir():
            fail(f"{flag} {path}: is a directory; expected a file to write")
    try:  # the model and the corpus directory, before torch is imported
        check_tagging_arguments(args)
    except ValueError as err:
        fail(str(err))

    from docgraph.data.errors import CorpusFormatError
    from docgraph.data.registry import load_dataset
    from docgraph.graph.splits import prepare_split
    from docgraph.persistence.checkpoint import CheckpointError
    from docgraph.persistence.model_dir import load_model_dir
    from docgraph.runtime.machine import resolve_device
    from docgraph.viz.draw import draw_document_graph
    from docgraph.viz.edges import format_edge_table, inspection_words, noisy_edges, repeated_words
    from docgraph.viz.networkx import inspect_documents

    try:
        device = resolve_device(args.device)
        model, vocabs, config = load_model_dir(args.model, device)
        dataset = args.dataset or config.dataset
        data_dir = args.data_dir if args.data_dir is not None else (
            config.data_dir if dataset == config.dataset else None)
        documents = load_dataset(dataset, data_dir, splits=(args.split,))[args.split]
        prepared = prepare_split(documents, vocabs, config)
        if args.doc is not None and args.doc >= len(prepared.graphs):
            fail(f"--doc {args.doc}: the {args.split} split has {len(prepared.graphs)} documents "
                 f"(0..{len(prepared.graphs) - 1})")
        indices = [args.doc] if args.doc is not None else range(len(prepared.graphs))
        graphs = inspect_documents(model, [prepared.graphs[i] for i in indices],
                                   [prepared.documents[i] for i in indices], vocabs,
                                   config.train.eval_batch_tokens, args.mc_seed)
        if args.out is not None:
            words = args.word
            repeated = repeated_words(graphs[0])
            if words is None and 0 < args.max_words < len(repeated):
                words = inspection_words(graphs[0], args.max_words) or None
                if words is None:
                    print("no repeated word is an entity or a predicted mention: drawing every "
                          "word")
                else:
                    print(f"drawing the {len(words)} of {len(repeated)} repeated words that are "
                          "entities or predicted mentions, most inconsistently tagged first "
                          f"({', '.join(words)}); --max-words 0 draws all, --word W one word")
            draw_document_graph(graphs[0], args.out, word=words, layout=args.layout)
        if args.html is not None:
            from docgraph.persistence.atomic import atomic_write_text
            from docgraph.viz.html import to_html

            graph_module = model.document_graph
            pruned = graph_module is not None and graph_module.uncertainty is not None
            threshold = config.model.threshold if pruned else None
            atomic_write_text(args.html, to_html(
                graphs, title=f"{Path(args.model).name}: {dataset} {args.split}",
                threshold=threshold, has_graph=graph_module is not None))
    except (ValueError, FileNotFoundError, CheckpointError, CorpusFormatError) as err:
        fail(str(err))
    if args.out is not None:
        print(f"wrote {args.out}")
    if args.html is not None:
        print(f"wrote {args.html} ({len(graphs)} documents)")
    if args.noisy is not None:
        print(format_edge_table(noisy_edges(graphs, args.noisy)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
