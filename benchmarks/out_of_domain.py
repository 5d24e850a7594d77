"""Shipped models and spaCy's en_core_web_sm on lowercased, uppercased and other-corpus text.

The study is :mod:`docgraph_dev.out_of_domain`; this script is its command line:

    python benchmarks/out_of_domain.py --models conll03 ontonotes --data-dir DIR --out OUT.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.out_of_domain import main

if __name__ == "__main__":
    sys.exit(main())
