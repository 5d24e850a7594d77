"""Remedies for forgetting applied after a fine-tune, without training: the fine-tuned weights
moved back towards the starting model's.

Two probes of a run that added a type to a model (``train.py --init-from``), each scored on the
added-type corpus's dev or test documents (every type; the added type apart) and on CoNLL-2003
in the starting model's types (its other predictions count as ``O``), as
:mod:`docgraph_dev.adaptation` scores its runs:

- **interpolation** (WiSE-FT, Wortsman et al., CVPR 2022): every weight the starting model
  had becomes :math:`\\theta_0 + \\alpha(\\theta_1 - \\theta_0)`; the entries the fine-tune
  created (an added type's rows, added words and characters) keep their trained values;
- **reset**: the weights of some of the model's parts (``word_embedding``, ``context_encoder``,
  ...) put back to the starting model's, the rest as trained.

    python benchmarks/weight_probe.py --runs DIR ... --alphas 0.5 0.75 0.9 \\
        --resets word_embedding context_encoder --conll DIR/conll2003 --out OUT.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from torch import Tensor

from docgraph.runtime.atomic import atomic_write_json

__all__ = ["interpolated", "main", "start_in_shape"]


def start_in_shape(start: Mapping[str, Tensor], tuned: Mapping[str, Tensor], old_labels: Any,
                   new_labels: Any, words: int) -> dict[str, Tensor]:
    """The starting model's weights ``start`` in the shapes of the fine-tuned ``tuned`` (whose
    label vocabulary ``new_labels`` extends ``old_labels`` and whose word table appends rows to
    the first ``words``): what the fine-tune created is taken from ``tuned``."""
    from docgraph.training.init_from import WORDS, initial_state

    return initial_state(start, tuned, old_labels, new_labels,
                         tuned[WORDS][words:].clone(), char_unk=None)


def interpolated(start: Mapping[str, Tensor], tuned: Mapping[str, Tensor], alpha: float,
                 reset: Sequence[str] = ()) -> dict[str, Tensor]:
    """``start + alpha * (tuned - start)`` for every floating tensor, with the parts named in
    ``reset`` (the first component of a key) at ``start``; other tensors as ``tuned``."""
    out = {}
    for key, value in tuned.items():
        if not value.is_floating_point():
            out[key] = value.clone()
        elif key.split(".")[0] in reset:
            out[key] = start[key].clone()
        else:
            out[key] = start[key] + alpha * (value - start[key])
    return out


def _probe(run: Path, settings: Sequence[tuple[float, tuple[str, ...]]], split: str,
           conll_dir: Path, model: str) -> list[dict[str, Any]]:
    from docgraph.data.conll import read_conll
    from docgraph.data.registry import load_dataset
    from docgraph.persistence.model_dir import load_model_dir, save_model_dir
    from docgraph.tagging.tagger import Tagger
    from docgraph.training.init_from import WORDS, load_init_model
    from docgraph_dev.adaptation import test_scores

    init = load_init_model(model)
    network, vocabs, config = load_model_dir(run)
    tuned = {k: v.detach().clone().float() for k, v in network.state_dict().items()}
    start = start_in_shape(init.state, tuned, init.vocabs.labels, vocabs.labels,
                           init.state[WORDS].size(0))
    conll = load_dataset("conll03", conll_dir, splits=(split,))[split]
    own = read_conll(Path(config.data_dir) / f"{split}.txt")
    added = [t for t in {lab[2:] for lab in vocabs.labels if lab != "O" and "-" in lab}
             if t not in init.types]
    records = []
    with tempfile.TemporaryDirectory(prefix="weight-probe-") as work:
        for alpha, reset in settings:
            began = time.perf_counter()
            reference = network.state_dict()
            network.load_state_dict({k: v.to(reference[k].dtype) for k, v in
                                     interpolated(start, tuned, alpha, reset).items()})
            directory = Path(work) / "model"
            save_model_dir(directory, network, vocabs, config)
            # each sentence decoded alone, as every record of the adaptation curve
            tagger = Tagger.load(directory, speed="faithful", consistency=False)
            scores = test_scores(tagger, own)
            old = test_scores(tagger, conll, init.types)
            records.append({
                "run": run.name, "alpha": alpha, "reset": list(reset), "split": split,
                "f1": scores["f1"], "added_types": {
                    t: scores["per_type"].get(t, {}).get("f1", 0.0) for t in sorted(added)},
                "start_types_f1": old["f1"], "seconds": round(time.perf_counter() - began, 1)})
            print(json.dumps(records[-1]), flush=True)
    return records


def parser() -> argparse.ArgumentParser:
    """The command line of :func:`main`."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", nargs="+", required=True, help="fine-tuned run directories")
    p.add_argument("--model", default="conll03", help="the model they started from")
    p.add_argument("--alphas", nargs="*", type=float, default=[],
                   help="interpolation weights of the fine-tuned side")
    p.add_argument("--resets", nargs="*", default=[],
                   help="parts put back to the starting model's weights, one probe each")
    p.add_argument("--split", choices=("dev", "test"), default="dev")
    p.add_argument("--conll", required=True, help="the CoNLL-2003 directory")
    p.add_argument("--out", required=True, help="the JSON record to write")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the probes of the command line and write their record."""
    args = parser().parse_args(argv)
    for run in args.runs:
        if not (Path(run) / "model.pt").is_file():
            print(f"--runs {run}: no model.pt there", file=sys.stderr)
            return 2
    settings = [(1.0, ()), *((a, ()) for a in args.alphas),
                *((1.0, (part,)) for part in args.resets)]
    records = [r for run in args.runs
               for r in _probe(Path(run), settings, args.split, Path(args.conll), args.model)]
    atomic_write_json(Path(args.out), {"command": " ".join(sys.argv), "records": records})
    return 0
