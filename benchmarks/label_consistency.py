"""What label consistency in decoding (docgraph.tagging.consistency) changes, by its threshold.

Each model tags each form of a split once, with entity scores (gold tokens, whole documents);
the consistency step is then applied with each ``--min-votes`` (``inf``: relabel only) and
scored like benchmarks/out_of_domain.py (F1 and the repeated-name groups).

    python benchmarks/label_consistency.py --models conll03 --data-dir DIR --split dev \\
        --out benchmarks/results/measurements/novel-names/consistency-dev.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docgraph.runtime.atomic import atomic_write_json


def main(argv: list[str] | None = None) -> int:
    """Tag, apply the consistency step at each threshold, score, write the JSON record."""
    from docgraph.data.augment import case_variant
    from docgraph.data.registry import load_dataset
    from docgraph.data.tags import spans
    from docgraph.metrics import name_groups, score
    from docgraph.tagging.consistency import consistent_tagging
    from docgraph.tagging.result import Tagging
    from docgraph.tagging.tagger import Tagger
    from docgraph_dev.out_of_domain import invented_names

    p = argparse.ArgumentParser(prog="label_consistency.py", allow_abbrev=False,
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=["conll03"], help="names or directories")
    p.add_argument("--corpus", default="conll03", choices=("conll03", "ontonotes"))
    p.add_argument("--data-dir", required=True, help="directory of conll2003/ and ontonotes/")
    p.add_argument("--split", default="dev", choices=("dev", "test"))
    p.add_argument("--min-votes", nargs="+", type=float, default=[float("inf"), 0.5, 1.0, 2.0])
    p.add_argument("--relabel-below", nargs="+", type=float, default=[1.01],
                   help="a mention scored at least this keeps its type")
    p.add_argument("--out", required=True, help="JSON record")
    args = p.parse_args(argv)
    folder = {"conll03": "conll2003", "ontonotes": "ontonotes"}[args.corpus]
    documents = load_dataset(args.corpus, str(Path(args.data_dir) / folder),
                             splits=(args.split,))[args.split]
    forms = {"cased": documents, "lower": [case_variant(d, "lower") for d in documents],
             "novel names": invented_names(documents)}
    record: dict = {"command": "python benchmarks/label_consistency.py "
                               + " ".join(argv if argv is not None else sys.argv[1:]),
                    "models": {}}
    for model in args.models:
        tagger = Tagger.load(model, speed="faithful")
        rows: dict = {}
        for form, docs in forms.items():
            tokens = [[list(s.tokens) for s in d.sentences] for d in docs]
            gold = [[list(s.tags) for s in d.sentences] for d in docs]
            taggings = []
            for tagged in tagger.pipe(docs, scores=True):
                by_span = {(e.sentence, e.start, e.end): e.score for e in tagged.entities}
                tags = tagged.tags
                taggings.append(Tagging(tags, [[by_span[(k, a, b)] for _, a, b in spans(t)]
                                               for k, t in enumerate(tags)]))
            variants = {"none": [t.tags for t in taggings]}
            for votes in args.min_votes:
                for below in args.relabel_below:
                    variants[f"min_votes {votes:g}, relabel_below {below:g}"] = [
                        consistent_tagging(tok, t, votes, below).tags
                        for tok, t in zip(tokens, taggings)]
            rows[form] = {}
            for name, predicted in variants.items():
                scores = score([s for d in gold for s in d], [s for d in predicted for s in d])
                groups = name_groups(tokens, gold, predicted).to_dict()
                rows[form][name] = {"f1": scores.f1, "groups": groups}
                print(f"{model}: {args.split} {form}: {name}: F1 {scores.f1:.2f}, repeated "
                      f"names mixed or partly missed {groups['inconsistent_share']:.1f} %",
                      flush=True)
        record["models"][model] = rows
    atomic_write_json(Path(args.out), record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
