"""What entity scores cost in ``predict.py``'s tagging speed.

The study is :mod:`docgraph_dev.score_speed`; this script is its command line:

    python benchmarks/score_speed.py --models conll03 ontonotes --limit 100 --rounds 3 --out OUT
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.score_speed import main

if __name__ == "__main__":
    sys.exit(main())
