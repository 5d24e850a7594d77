"""Do the relation scores r_ij of a trained GCDoc separate same-type from different-type edges?

The study is :mod:`docgraph_dev.edge_weights`; this script is its command line:

    python benchmarks/edge_weights.py RUN_DIR [--split dev] [--data-dir DIR] [--out OUT.json]
        [--threshold T]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.edge_weights import main

if __name__ == "__main__":
    main()
