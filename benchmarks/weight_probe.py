"""Remedies for forgetting applied after a fine-tune, without training: interpolation towards
the starting model (WiSE-FT) and parts reset to its weights.

The study is :mod:`docgraph_dev.weight_probe`; this script is its command line:

    python benchmarks/weight_probe.py --runs DIR ... --alphas 0.5 0.75 --resets word_embedding \\
        --conll DIR/conll2003 --out OUT.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.weight_probe import main

if __name__ == "__main__":
    sys.exit(main())
