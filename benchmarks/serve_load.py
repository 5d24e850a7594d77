"""Load test of ``docgraph serve`` (wrk on loopback) beside ``predict.py`` offline and a naive
one-request-at-a-time server.

The study is :mod:`docgraph_dev.serve_load`; this script is its command line:

    nice -n 15 python benchmarks/serve_load.py run --seconds 15 --soak-seconds 600 \\
        --out benchmarks/results/measurements/serve
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.serve_load import main

if __name__ == "__main__":
    sys.exit(main())
