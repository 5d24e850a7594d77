"""``python scripts/stats.py --help`` (or ``docgraph stats``): corpus and document-graph
statistics; see :mod:`docgraph.tools.stats`."""

import sys

from docgraph.tools.stats import main

if __name__ == "__main__":
    sys.exit(main())
