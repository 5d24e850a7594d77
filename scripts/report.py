"""Results tables, the README's generated blocks and Fig. 4 from run directories (never typed
by hand).

Regenerate every committed document from the repository root with::

    python scripts/report.py            # the arguments recorded in benchmarks/results/report.args
    python scripts/report.py --check    # verify instead of writing (exit 1 when stale)

Give the arguments explicitly (directories, ``--out``, ``--readme``, ``--compare A B``, ...)
to make another report; a run that writes ``benchmarks/results/RESULTS.md`` records them.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev

from docgraph_dev.report import main

if __name__ == "__main__":
    sys.exit(main())
