"""What does the open vocabulary buy on words a model never saw?

Scores a run's split twice, with the closed vocabulary (every word outside the saved one is
``<unk>``) and with the open one (such a word gets its pretrained vector,
:mod:`docgraph.data.open_vocab`), and counts the split's tokens that are ``<unk>`` each way.
Meant for a run trained with ``--training-words-only``, whose vocabulary holds no dev/test
word: the difference is then what the pretrained vectors of unseen words are worth.

    python benchmarks/open_vocab.py RUN_DIR [--split test] [--data-dir DIR] [--out OUT.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from docgraph.runtime.atomic import atomic_write_json


def parser() -> argparse.ArgumentParser:
    """The command line of ``benchmarks/open_vocab.py``."""
    p = argparse.ArgumentParser(
        allow_abbrev=False, prog="open_vocab.py", description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", help="a trained run directory")
    p.add_argument("--split", default="test", choices=("dev", "test"))
    p.add_argument("--data-dir", default=None, help="corpus directory (default: the run's)")
    p.add_argument("--out", default=None, help="JSON record")
    return p


def measure(run_dir: str | Path, split: str = "test", data_dir: str | None = None
            ) -> dict[str, Any]:
    """Scores and ``<unk>`` shares of ``split`` with the closed and the open vocabulary."""
    from docgraph.data.open_vocab import unknown_share
    from docgraph.data.registry import load_dataset
    from docgraph.tagging.tagger import Tagger

    out: dict[str, Any] = {"run_dir": str(run_dir), "split": split}
    documents = None
    for name, opened in (("closed", False), ("open", True)):
        tagger = Tagger.load(run_dir, open_vocabulary=opened)
        if documents is None:
            config = tagger.config
            out["vocab_eval_words"] = config.vocab_eval_words
            out["vocabulary"] = len(tagger.vocabs.words)
            documents = load_dataset(config.dataset, data_dir or config.data_dir,
                                     splits=(split,))[split]
            out["tokens"] = sum(d.num_tokens for d in documents)
        tokens = [w for d in documents for w in d.tokens]
        evaluation = tagger.evaluate(documents)
        out[name] = {"unk_share": 100.0 * unknown_share(tagger.vocabs.words, tokens),
                     "f1": evaluation.scores.f1, "precision": evaluation.scores.precision,
                     "recall": evaluation.scores.recall,
                     "per_type_f1": {t: s.f1 for t, s in evaluation.scores.per_type.items()}}
    out["f1_gain"] = out["open"]["f1"] - out["closed"]["f1"]
    return out


def main(argv: list[str] | None = None) -> int:
    """``benchmarks/open_vocab.py``: print (and write) the record of :func:`measure`."""
    args = parser().parse_args(argv)
    record = measure(args.run_dir, args.split, args.data_dir)
    print(json.dumps(record, indent=2))
    if args.out:
        atomic_write_json(args.out, record)
    return 0


__all__ = ["main", "measure", "parser"]
