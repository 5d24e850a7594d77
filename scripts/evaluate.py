"""``python scripts/evaluate.py --help`` — see the README."""

import sys

from docgraph.cli import evaluate_main

if __name__ == "__main__":
    sys.exit(evaluate_main())
