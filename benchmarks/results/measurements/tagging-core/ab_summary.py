"""Medians of the CPU seconds in an ab_rounds.sh log, old against new. Usage:
    python ab_summary.py LOG
"""

import json
import re
import statistics
import sys
from pathlib import Path

calls: dict[tuple[str, str], list[float]] = {}
for line in Path(sys.argv[1]).read_text(encoding="utf-8").splitlines():
    if m := re.match(r"round (\d+) (old|new) (\{.*\})", line):
        record = json.loads(m[3])
        for kind in ("scores", "no_scores"):
            calls.setdefault((m[2], kind), []).extend(record[kind])
for kind in ("scores", "no_scores"):
    old, new = calls[("old", kind)], calls[("new", kind)]
    o, n = statistics.median(old), statistics.median(new)
    print(f"{kind}: old median {o:.3f} s ({len(old)} calls), new median {n:.3f} s "
          f"({len(new)} calls): {100 * (n / o - 1):+.1f} %")
