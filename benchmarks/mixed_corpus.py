"""Write the 4-type corpus of CoNLL-2003 and OntoNotes 5.0 mapped (docgraph_dev.mixed_corpus).

    python benchmarks/mixed_corpus.py --data-dir ../shared/data --out /tmp/mixed
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.mixed_corpus import main

if __name__ == "__main__":
    sys.exit(main())
