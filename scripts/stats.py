"""``python scripts/stats.py --help`` (or ``docgraph stats``): corpus and document-graph
statistics; see :func:`docgraph.cli.commands.stats`."""

import sys

from docgraph.cli import stats_main

if __name__ == "__main__":
    sys.exit(stats_main())
