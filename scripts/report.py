"""Results tables, the README's summary block and Fig. 4 from run directories (never typed by
hand).

The committed documents are regenerated from the repository root with the command written at
the top of ``benchmarks/results/RESULTS.md``::

    python scripts/report.py benchmarks/results/conll03 benchmarks/results/ontonotes \\
        --speed 'benchmarks/results/speed-*.json' \\
        --compare conll03-gcdoc-bt4000-h200 conll03-baseline-frozen-bt4000-h200 \\
        --compare conll03-gcdoc-frozen-bt4000-h200 conll03-baseline-bt4000-h200 \\
        --out benchmarks/results/RESULTS.md \\
        --readme README.md \\
        --figure benchmarks/results/fig4-window.png

Add ``--check`` to verify instead of writing (exit 1 when a document is stale).
"""

from __future__ import annotations

import sys

from docgraph.report import main

if __name__ == "__main__":
    sys.exit(main())
