"""What does the open vocabulary buy on words a model never saw?

The study is :mod:`docgraph_dev.open_vocab`; this script is its command line:

    python benchmarks/open_vocab.py RUN_DIR [--split test] [--out OUT.json]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.open_vocab import main

if __name__ == "__main__":
    sys.exit(main())
