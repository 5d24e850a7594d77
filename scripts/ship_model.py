"""``python scripts/ship_model.py --help``: pack a trained run as a shipped model and measure
what packing changed; see :mod:`docgraph.tools.ship`."""

import sys

from docgraph.tools.ship import main

if __name__ == "__main__":
    sys.exit(main())
