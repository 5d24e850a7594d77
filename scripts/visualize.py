"""``python scripts/visualize.py --help`` (or ``docgraph visualize``): draw a document graph
or list the noisiest edges; see :mod:`docgraph.tools.visualize`."""

import sys

from docgraph.tools.visualize import main

if __name__ == "__main__":
    sys.exit(main())
