"""What contextual features (``--lm``) cost in training and in tagging, per token.

The study is :mod:`docgraph.tools.lm_speed`; this script is its command line:

    python benchmarks/lm_speed.py --dataset conll03 --data-dir ../shared/data/conll2003 \\
        --lm MODEL_DIR --cache-dir CACHE --threads 1 \\
        --out benchmarks/results/measurements/lm-speed/X.json
"""

import logging
import time

from docgraph.tools.lm_speed import main

if __name__ == "__main__":
    start = time.perf_counter()
    main()
    logging.info("%.0f s", time.perf_counter() - start)
