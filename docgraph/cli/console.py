"""``docgraph <command> [options]``: one console entry point for the scripts.

``pip install`` puts ``docgraph`` on the ``PATH`` (``[project.scripts]`` in
``pyproject.toml``); ``docgraph train --dataset conll03`` is ``python scripts/train.py
--dataset conll03``, and so on for every command below. Nothing here imports torch: each
command's own parser answers ``--help`` and bad arguments before the work starts. The
measurement and report commands (``scripts/benchmark.py``, ``scripts/report.py``) belong to
the repository's development package ``docgraph_dev``, not to the installed library.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

__all__ = ["COMMANDS", "main"]

#: command -> (module, function taking the arguments and returning the exit status, help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "train": ("docgraph.cli", "train_main", "train GCDoc or an ablation / the baseline"),
    "evaluate": ("docgraph.cli", "evaluate_main", "score a trained model on a split or file"),
    "predict": ("docgraph.cli", "predict_main", "tag CoNLL or raw text files"),
    "visualize": ("docgraph.cli", "visualize_main",
                  "HTML view, graph drawing or noisiest edges of a trained model"),
    "stats": ("docgraph.cli", "stats_main", "corpus and document-graph statistics"),
    "serve": ("docgraph.cli.serve", "serve_main", "an HTTP service of a model's entities"),
    "tag-corpus": ("docgraph.integrations.tag_corpus", "main",
                   "tag a corpus on Ray, each input file once (docs/scale.md)"),
}


def usage() -> str:
    """The list of commands."""
    width = max(map(len, COMMANDS))
    lines = ["usage: docgraph <command> [options]   (docgraph <command> --help)", "",
             "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, _, text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``docgraph <command> ...``; returns the command's exit status (2 for an unknown
    command, 0 for ``--help``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"error: unknown command {name!r}; expected one of {', '.join(COMMANDS)}",
              file=sys.stderr)
        return 2
    module, function, _ = COMMANDS[name]
    return int(getattr(importlib.import_module(module), function)(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
