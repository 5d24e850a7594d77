"""Speed benchmark: GCDoc vs the BiLSTM-CRF baseline on the same batches of real documents.

Usage::

    python scripts/benchmark.py --dataset conll03 --data-dir ../shared/data/conll2003 --quick
    python scripts/benchmark.py --dataset conll03 --data-dir DIR --threads 2 \\
        --out benchmarks/results/measurements/benchmark-speed/speed-2024-01-01.json
    python scripts/benchmark.py --dataset sample --quick --out /tmp/speed.json
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.benchmark import main

if __name__ == "__main__":
    sys.exit(main())
