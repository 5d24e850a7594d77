"""What does the open vocabulary buy on words a model never saw?

The study is :mod:`docgraph.tools.open_vocab`; this script is its command line:

    python benchmarks/open_vocab.py RUN_DIR [--split test] [--out OUT.json]
"""

import sys

from docgraph.tools.open_vocab import main

if __name__ == "__main__":
    sys.exit(main())
