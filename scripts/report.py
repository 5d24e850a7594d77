"""Markdown results tables from run directories (never typed by hand).

Usage::

    python scripts/report.py benchmarks/results/conll03 [more dirs...] \\
        --out benchmarks/results/conll03/RESULTS.md \\
        --speed benchmarks/results/speed-*.json
"""

from __future__ import annotations

import sys

from docgraph.report import main

if __name__ == "__main__":
    sys.exit(main())
