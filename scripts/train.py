"""Train GCDoc: ``python scripts/train.py --dataset ontonotes --data-dir DIR``.

Run ``python scripts/train.py --help`` for every option; see the README for presets.
"""

import sys

from docgraph.cli import train_main

if __name__ == "__main__":
    sys.exit(train_main())
