"""How do a trained GCDoc's F1 and document consistency move with the pruning threshold?

The study is :mod:`docgraph_dev.inference_threshold`; this script is its command line:

    python benchmarks/inference_threshold.py RUN_DIR [--split dev] [--thresholds 0.5 1.0 ...]
        [--data-dir DIR] [--seed 0] [--out OUT.json]

    python benchmarks/inference_threshold.py --summarize S1-dev.json S1-test.json ...
        [--baseline 0.5] [--against RUN_DIR ...]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.inference_threshold import main

if __name__ == "__main__":
    main()
