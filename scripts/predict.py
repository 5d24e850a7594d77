"""``python scripts/predict.py --help`` — see the README."""

import sys

from docgraph.cli import predict_main

if __name__ == "__main__":
    sys.exit(predict_main())
