"""Calibration of the entity scores of docgraph's models on their dev and test splits.

The study is :mod:`docgraph_dev.calibration`; this script is its command line:

    python benchmarks/calibration.py --models conll03 ontonotes --out OUT.json --png DIR
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.calibration import main

if __name__ == "__main__":
    sys.exit(main())
