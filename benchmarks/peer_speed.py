"""Tagging speed and F1 of docgraph's shipped models against spaCy's en_core_web_sm.

The study is :mod:`docgraph_dev.peer_speed`; this script is its command line:

    python benchmarks/peer_speed.py --models conll03 ontonotes --data-dir DIR --out OUT.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.peer_speed import main

if __name__ == "__main__":
    sys.exit(main())
