"""What each approximation of tagging costs in F1 and gains in speed (``--speed fast``).

The study is :mod:`docgraph_dev.fast_mode`; this script is its command line:

    python benchmarks/fast_mode.py --part quality --models conll03 ontonotes --split dev \
        --data-dir DIR --out OUT.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.fast_mode import main

if __name__ == "__main__":
    sys.exit(main())
