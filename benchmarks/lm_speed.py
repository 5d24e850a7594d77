"""What contextual features (``--lm``) cost in training and in tagging, per token.

The study is :mod:`docgraph_dev.lm_speed`; this script is its command line:

    python benchmarks/lm_speed.py --dataset conll03 --data-dir ../shared/data/conll2003 \\
        --lm MODEL_DIR --cache-dir CACHE --threads 1 \\
        --out benchmarks/results/measurements/lm-speed/X.json
"""

import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.lm_speed import main

if __name__ == "__main__":
    start = time.perf_counter()
    main()
    logging.info("%.0f s", time.perf_counter() - start)
