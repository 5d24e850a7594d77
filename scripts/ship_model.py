"""``python scripts/ship_model.py --help``: pack a trained run as a shipped model and measure
what packing changed; see :mod:`docgraph_dev.ship`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.ship import main

if __name__ == "__main__":
    sys.exit(main())
