"""Write the 4-type corpus of CoNLL-2003 and OntoNotes 5.0 mapped (docgraph.tools.mixed_corpus).

    python benchmarks/mixed_corpus.py --data-dir ../shared/data --out /tmp/mixed
"""

import sys

from docgraph.tools.mixed_corpus import main

if __name__ == "__main__":
    sys.exit(main())
