"""RSS of one in-process tagging run of the shipped conll03 on the first 1.5 MB of the 10 MB paragraphs input, after each 400
paragraphs.  python bf16_cache_probe.py PRECISION [CAP]: CAP caps both oneDNN caches as predict.py does (bound_onednn_caches);
without it, the caches are as the environment sets them (ONEDNN_PRIMITIVE_CACHE_CAPACITY, LRU_CACHE_CAPACITY)."""
import resource
import sys

import torch

from docgraph.tagging.tagger import Tagger

torch.set_num_threads(1)
precision = sys.argv[1]
if len(sys.argv) > 2:
    from docgraph.tagging.pipeline import bound_onednn_caches
    bound_onednn_caches()
text = open("/tmp/pm/w/paragraphs-10MB.txt").read()[:1_500_000]
paragraphs = [p for p in text.split("\n\n") if p.strip()]
tagger = Tagger.load("conll03", precision=precision)


def rss() -> float:
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20


out = [f"{rss():.0f}"]
for i in range(0, len(paragraphs), 400):
    tagger.tag(paragraphs[i:i + 400])
    out.append(f"{rss():.0f}")
print(precision, "rss MB:", " ".join(out), "peak", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
