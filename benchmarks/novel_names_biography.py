"""A biography full of invented names, tagged as a user would tag it (raw text, whole document).

The text (``benchmarks/data/novel-names/biography.jsonl``, span JSON lines with its gold
spans) follows an invented astronomer whose surname recurs on its own, an invented company and
an invented town. For each model: F1 on the gold spans, and how each repeated name's mentions
were tagged (the person by her surname alone, the company), with their scores.

    python benchmarks/novel_names_biography.py --models conll03 conll03-cased \\
        --out benchmarks/results/measurements/novel-names/biography.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docgraph.runtime.atomic import atomic_write_json
from docgraph_dev.out_of_domain import DECODING_SUFFIX, add_decoding_flags

BIOGRAPHY = Path(__file__).parent / "data" / "novel-names" / "biography.jsonl"


def tag_biography(model: str, path: Path = BIOGRAPHY, consistency: bool | None = None) -> dict:
    """The entities ``model`` finds in each document of ``path`` against its gold spans (label
    consistency in decoding on or off by ``consistency``; ``None``: the model's default)."""
    from docgraph.tagging.tagger import Tagger

    tagger = Tagger.load(model, consistency=consistency, speed="faithful")
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        text, gold = record["text"], {(s, e): t for s, e, t in record["spans"]}
        tagged = next(iter(tagger.tag_documents([text])))
        found = {(e.start_char, e.end_char): (e.type, e.score) for e in tagged.entities}
        correct = sum(found.get(span, (None,))[0] == t for span, t in gold.items())
        precision = correct / max(len(found), 1)
        recall = correct / max(len(gold), 1)
        names: dict[str, dict] = {}
        for (start, end), gold_type in gold.items():
            name = text[start:end]
            entry = names.setdefault(name, {"gold": gold_type, "tagged": Counter(), "scores": []})
            predicted = found.get((start, end))
            entry["tagged"][predicted[0] if predicted else "missed"] += 1
            if predicted:
                entry["scores"].append(round(predicted[1], 3))
        out[record.get("id", path.stem)] = {
            "f1": round(200 * precision * recall / max(precision + recall, 1e-9), 2),
            "repeated_names": {n: {**e, "tagged": dict(e["tagged"])}
                               for n, e in names.items() if sum(e["tagged"].values()) > 1},
        }
    return out


def main(argv: list[str] | None = None) -> int:
    """Tag the biography with every model and write the JSON record."""
    p = argparse.ArgumentParser(prog="novel_names_biography.py", allow_abbrev=False,
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=["conll03"], help="names or directories")
    add_decoding_flags(p)
    p.add_argument("--out", required=True, help="JSON record")
    args = p.parse_args(argv)
    record = {"command": "python benchmarks/novel_names_biography.py "
                         + " ".join(argv if argv is not None else sys.argv[1:]),
              "models": {}}
    for model in args.models:
        name = model + DECODING_SUFFIX[args.consistency]
        record["models"][name] = tag_biography(model, consistency=args.consistency)
        for doc, result in record["models"][name].items():
            print(f"{name}: {doc}: F1 {result['f1']:.2f}; " + "; ".join(
                f"{n} ({e['gold']}) {e['tagged']}" for n, e in result["repeated_names"].items()))
    atomic_write_json(Path(args.out), record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
