"""Print what the docgraph_ner spaCy component writes on the paragraphs of a text file, one
JSON line per Doc (entities with scores, doc._.docgraph): a record to compare byte for byte.
Usage: python spacy_outputs.py MODEL TEXT_FILE"""

import json
import sys

import spacy

model, path = sys.argv[1:3]
paragraphs = [p for p in open(path, encoding="utf-8").read().split("\n\n") if p.strip()]
nlp = spacy.blank("en")
nlp.add_pipe("sentencizer")
nlp.add_pipe("docgraph_ner", config={"model": model})
bare = spacy.blank("en")  # no sentence boundaries: docgraph's own rules
bare.add_pipe("docgraph_ner", config={"model": model, "max_doc_tokens": 30})
for pipeline in (nlp, bare):
    for doc in pipeline.pipe(paragraphs + ["", "   "], batch_size=2):
        record = dict(doc._.docgraph or {})
        record.pop("model", None)
        record["ents"] = [(e.start, e.end, e.label_, e._.score) for e in doc.ents]
        print(json.dumps(record))
