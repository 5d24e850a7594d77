"""Short capitalised lines: the shipped models on headlines, in title case and in capitals.

``benchmarks/data/headlines/headlines.jsonl`` holds headlines written for this measurement
(one a line, CoNLL-2003's four types, character spans). Each case joins them with line
breaks into one raw text, as a user's file of headlines is read by ``predict.py`` (its
default ``--documents file``): ``title`` as written, ``caps`` in capitals (the same spans:
the headlines are ASCII). Every shipped model tags each text (:meth:`Tagger.predict
<docgraph.tagging.tagger.Tagger.predict>`); its entities are scored against the gold spans by
exact match of span and type (OntoNotes models: their types mapped by
:data:`~docgraph.data.type_maps.ONTONOTES_TO_CONLL`, those without a CoNLL type dropped).
It also counts the entities that span a line break. ``--lines-as-before`` measures the
sentence splitter without its headline rule (:func:`~docgraph.data.tokenize.is_headline`
never true: a line of 40 characters or more then runs on into the next), for comparison.

    python benchmarks/headlines.py --out results.json
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time
from collections import Counter
from pathlib import Path

from docgraph.data import tokenize
from docgraph.data.type_maps import ONTONOTES_TO_CONLL
from docgraph.persistence.shipped import shipped_models
from docgraph.tagging.tagger import Tagger

DATA = Path(__file__).parent / "data" / "headlines" / "headlines.jsonl"


def read_headlines(path: Path = DATA) -> list[dict]:
    """The headlines: ``{"id", "text", "label": [[start, end, type], ...]}`` per line."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def joined(headlines: list[dict], caps: bool) -> tuple[str, set[tuple[int, int, str]]]:
    """The headlines as one text, a line each, and their gold spans in it."""
    text, gold, offset = [], set(), 0
    for record in headlines:
        line = record["text"].upper() if caps else record["text"]
        if len(line) != len(record["text"]):
            raise ValueError(f"{record['id']}: its capitals change its length")
        gold |= {(offset + a, offset + b, kind) for a, b, kind in record["label"]}
        text.append(line)
        offset += len(line) + 1
    return "\n".join(text), gold


def score(found: set, gold: set) -> dict:
    """Precision, recall and F1 (in %) of exact spans with their types, overall and by type."""
    def prf(f: set, g: set) -> dict:
        tp = len(f & g)
        p = 100 * tp / len(f) if f else 0.0
        r = 100 * tp / len(g) if g else 0.0
        return {"precision": round(p, 2), "recall": round(r, 2),
                "f1": round(2 * p * r / (p + r), 2) if p + r else 0.0,
                "found": len(f), "gold": len(g), "correct": tp}

    kinds = sorted({k for *_, k in gold})
    return {"all": prf(found, gold),
            **{k: prf({e for e in found if e[2] == k}, {e for e in gold if e[2] == k})
               for k in kinds}}


def measure(name: str, headlines: list[dict]) -> dict:
    """One model's scores on both cases."""
    tagger = Tagger.load(name, speed="faithful")
    mapped = "PERSON" in tagger.entity_types
    out = {}
    for case in ("title", "caps"):
        text, gold = joined(headlines, caps=case == "caps")
        entities = tagger.predict([text])[0]
        found = set()
        for e in entities:
            kind = ONTONOTES_TO_CONLL.get(e.type) if mapped else e.type
            if kind is not None:
                found.add((e.start_char, e.end_char, kind))
        across = [e.text for e in entities if "\n" in e.text]
        out[case] = {**score(found, gold), "across_line_breaks": across,
                     "missed": sorted(text[a:b] + "/" + k for a, b, k in gold - found),
                     "wrong": sorted(text[a:b] + "/" + k for a, b, k in found - gold)}
        print(f"{name:16s} {case:5s} F1 {out[case]['all']['f1']:6.2f}  PER recall "
              f"{out[case].get('PER', {}).get('recall', 0):6.2f}  across line breaks "
              f"{len(across)}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=None,
                        help="shipped model names (default: every shipped model)")
    parser.add_argument("--out", type=Path, required=True, help="the JSON record to write")
    parser.add_argument("--lines-as-before", action="store_true",
                        help="split sentences without the headline rule, for comparison")
    args = parser.parse_args()
    if args.lines_as_before:
        tokenize.is_headline = lambda line: False
    headlines = read_headlines()
    kinds = Counter(k for r in headlines for *_, k in r["label"])
    started = time.time()
    record = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip(),
        "machine": platform.processor() or platform.machine(),
        "headline_rule": not args.lines_as_before, "headlines": len(headlines),
        "gold_entities": dict(sorted(kinds.items())),
        "models": {name: measure(name, headlines) for name in args.models or shipped_models()},
    }
    record["seconds"] = round(time.time() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
