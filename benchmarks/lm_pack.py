"""Packed ``--lm`` windows against one window per sentence: work, time and feature agreement.

The study is :mod:`docgraph_dev.lm_pack`; this script is its command line:

    python benchmarks/lm_pack.py --dataset conll03 --data-dir ../shared/data/conll2003 \\
        --split dev --lm MODEL_DIR --threads 1 --out benchmarks/results/measurements/lm-pack/X.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.lm_pack import main

if __name__ == "__main__":
    main()
