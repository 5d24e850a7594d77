"""``docgraph tag-corpus INPUT... --output DIR``: tag a corpus on Ray, each input file once
(:mod:`docgraph.integrations.ray`; docs/scale.md).

The arguments, the inputs, the model and the output directory are checked before Ray or torch
is imported; a job that leaves inputs untagged lists them and exits with status 1. The command
sits beside the integration it runs, above ``cli/`` (whose argument helpers it uses): ``cli/``
imports no integration, and ``docgraph tag-corpus`` finds it by name (:mod:`docgraph.cli.console`).
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

from docgraph.cli.arguments import OneLineParser, add_setting_flag, fail, setup_logging
from docgraph.config.corpus import MISSING_FILE, CorpusConfig
from docgraph.config.errors import DocgraphError
from docgraph.config.fields import UsageError, settings_of
from docgraph.data.corpus_files import corpus_inputs
from docgraph.persistence.run_lock import busy_message
from docgraph.persistence.shipped import resolve_model
from docgraph.runtime.lifetime import exit_status, interruption, stop_on_signals

__all__ = ["main", "tag_corpus_parser"]

log = logging.getLogger("docgraph")

#: Seconds between two progress lines.
PROGRESS_SECONDS = 30.0


def tag_corpus_parser() -> argparse.ArgumentParser:
    """The parser of ``docgraph tag-corpus``: INPUT and ``--output``, and a flag per field of
    :class:`~docgraph.config.corpus.CorpusConfig`, made from its declaration."""
    p = OneLineParser(
        prog="docgraph tag-corpus",
        description="Tag a corpus on Ray Data: one output file per input file, each input "
                    "tagged once; a job run again tags only what is missing (docs/scale.md).")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="input files, folders (every file under it) or globs: text, span JSON "
                        "lines, CoNLL, spaCy DocBin (.spacy) or Parquet with a text column")
    p.add_argument("--output", required=True, metavar="DIR",
                   help="output directory: one file per input, named after it")
    p.add_argument("--quiet", action="store_true", help="only errors and the summary")
    defaults = CorpusConfig()
    for name, setting in settings_of(CorpusConfig):
        add_setting_flag(p, name, setting, getattr(defaults, name))
    return p


def _check(args: argparse.Namespace) -> tuple[CorpusConfig, list[Path]]:
    """The job's settings and input files, every argument checked (torch-free, Ray-free).

    Raises:
        UsageError: A bad input, model or output directory.
    """
    config = CorpusConfig(**{f.name: getattr(args, f.name) for f in fields(CorpusConfig)})
    if not _ray_installed():
        raise UsageError("needs Ray: pip install 'docgraph[ray]'", "--engine", config.engine)
    if config.object_store_memory is not None and config.address is not None:
        raise UsageError("sizes the object store of a local Ray; a cluster joined with "
                         "--address has its own (ray start --object-store-memory)",
                         "--object-store-memory", config.object_store_memory)
    resolve_model(config.model)
    output = Path(args.output)
    if output.exists() and not output.is_dir():
        raise UsageError("is a file; expected a directory", "--output", args.output)
    busy = busy_message(output)
    if busy is not None:
        raise UsageError(busy)
    return config, corpus_inputs(args.inputs)


def _left_untagged(output: Path) -> str:
    """What an interrupted job leaves: the outputs written are whole, the rest is listed."""
    listed = output / MISSING_FILE
    count = len(listed.read_text().splitlines()) if listed.is_file() else 0
    return (f"every output in {output} is whole; {count} inputs not tagged (listed in "
            f"{listed}); run the same command again to tag them")


def _ray_installed() -> bool:
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):  # an import hook that refuses it, a half-removed module
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``docgraph tag-corpus``; 0 when every input is tagged, 1 when some are missing (listed
    on stderr and in ``DIR/_missing.txt``), 2 for a bad argument."""
    args = tag_corpus_parser().parse_args(argv)
    setup_logging(args.quiet)
    try:
        config, inputs = _check(args)
    except (DocgraphError, ValueError) as err:
        fail(str(err))
    from docgraph.integrations.ray import tag_corpus  # Ray and torch, once the arguments passed

    last = [time.monotonic()]

    def progress(report) -> None:
        if time.monotonic() - last[0] >= PROGRESS_SECONDS:
            last[0] = time.monotonic()
            log.info("tag-corpus: %d of %d inputs tagged, %s tokens", report.tagged,
                     report.inputs - report.done_before, f"{report.tokens:,}")

    try:
        with stop_on_signals():
            report = tag_corpus(inputs, args.output, config, progress=progress)
    except (DocgraphError, ValueError) as err:
        fail(str(err))
    except KeyboardInterrupt:
        print(f"\ntag-corpus: {interruption()}: {_left_untagged(Path(args.output))}",
              file=sys.stderr)
        return exit_status()
    rate = report.tokens / max(report.seconds, 1e-9)
    print(f"tag-corpus: {report.inputs} inputs: {report.done_before} done before, "
          f"{report.tagged} tagged now ({report.documents:,} documents, {report.tokens:,} "
          f"tokens, {report.entities:,} entities, {rate:,.0f} tokens/s) -> {args.output}",
          file=sys.stderr)
    if not report.missing:
        return 0
    print(f"tag-corpus: {len(report.missing)} of {report.inputs} inputs not tagged (listed in "
          f"{Path(args.output) / '_missing.txt'}; run the same command again to tag them):",
          file=sys.stderr)
    for name, why in report.missing[:20]:
        print(f"  {name}: {why}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
