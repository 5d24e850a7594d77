"""An adaptation curve of a shipped model on an unseen OntoNotes genre: zero-shot, trained from
scratch and fine-tuned (``train.py --init-from``) on 5 / 20 / 80 documents of it.

The study is :mod:`docgraph_dev.adaptation`; this script is its command line:

    python benchmarks/adaptation.py --data-dir DIR/ontonotes --out OUT --runs zero-shot \\
        scratch-5 finetune-5 ...
    python benchmarks/adaptation.py --out OUT --summarise
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.adaptation import main

if __name__ == "__main__":
    sys.exit(main())
