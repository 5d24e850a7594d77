"""Calibration of the entity scores of docgraph's models on their dev and test splits.

The study is :mod:`docgraph.tools.calibration`; this script is its command line:

    python benchmarks/calibration.py --models conll03 ontonotes --out OUT.json --png DIR
"""

import sys

from docgraph.tools.calibration import main

if __name__ == "__main__":
    sys.exit(main())
