"""Tagging a corpus on Ray (``docgraph tag-corpus``) against ``predict.py`` on this machine.

The study is :mod:`docgraph_dev.ray_corpus`; this script is its command line:

    python benchmarks/ray_corpus.py --work-dir /tmp/ray-corpus --compare-mb 0.5 --large-mb 4 \\
        --out benchmarks/results/measurements/ray/results.json
    python benchmarks/ray_corpus.py --keep-dir /work/corpus-1gb --large-mb 1000 --file-mb 2 \\
        --out benchmarks/results/measurements/ray/results-1gb.json   # again to resume
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.ray_corpus import main

if __name__ == "__main__":
    sys.exit(main())
