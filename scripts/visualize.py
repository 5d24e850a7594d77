"""``python scripts/visualize.py --help`` (or ``docgraph visualize``): draw a document graph,
write the interactive HTML page or list the noisiest edges; see
:func:`docgraph.cli.commands.visualize`."""

import sys

from docgraph.cli import visualize_main

if __name__ == "__main__":
    sys.exit(visualize_main())
