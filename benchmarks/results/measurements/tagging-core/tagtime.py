"""CPU seconds of Tagger.predict on a text with one checkout's code, after loading and a
warm-up call: 2 calls with scores and 2 without, alternating. Usage:
    python tagtime.py CHECKOUT MODEL TEXT_FILE
"""

import json
import sys
import time
from pathlib import Path

root, model, text_path = sys.argv[1:4]
sys.path.insert(0, root)

import torch  # noqa: E402

from docgraph.tagging.tagger import Tagger  # noqa: E402

torch.set_num_threads(1)
tagger = Tagger.load(model)
text = Path(text_path).read_text(encoding="utf-8")
tagger.predict([text[:5000]])
out: dict[str, list[float]] = {"scores": [], "no_scores": []}
for scores in (True, False, False, True):
    start = time.process_time()
    entities = tagger.predict([text], scores=scores)
    out["scores" if scores else "no_scores"].append(round(time.process_time() - start, 3))
print(json.dumps({"root": root, **out, "entities": sum(len(e) for e in entities)}))
