"""How many Monte-Carlo dropout passes T does the graph pruning need?

The study is :mod:`docgraph_dev.mc_samples`; this script is its command line:

    python benchmarks/mc_samples.py RUN_DIR --data-dir DIR --out OUT.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.mc_samples import main

if __name__ == "__main__":
    main()
