"""Every entity record (with scores) the service's pass function gives for the sample's texts in
passes of 1, 5, 16 and 64 sentences, 7 paragraphs and 2 long documents, as JSON on stdout: run
on two checkouts and compared byte for byte.

    PYTHONPATH=<checkout> python records.py > records.json
"""

import json
import sys

import torch

from docgraph.serve.batcher import PassDocument
from docgraph.serve.worker import tag_pass
from docgraph.tagging.tagger import Tagger
from docgraph_dev.serve_load import texts

torch.set_num_threads(1)
tagger = Tagger.load("conll03", threads=1)
found = []
for kind, size in (("sentence", 1), ("sentence", 5), ("sentence", 16), ("sentence", 64),
                   ("paragraph", 7), ("long", 2)):
    pool = texts(kind, 4 if kind == "long" else 128)
    for start in range(0, len(pool), size):
        found.append(tag_pass(tagger, [PassDocument(str(j), text, scores=True)
                                       for j, text in enumerate(pool[start:start + size])]))
json.dump(found, sys.stdout)
