"""Medians of speed.sh's log: per side and flags, the median wall and CPU seconds.
Usage: python summarize_speed.py LOG"""

import re
import statistics
import sys
from collections import defaultdict

runs = defaultdict(lambda: {"wall": [], "cpu": []})
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"(old|new) round \d+ (predict[^:]*): wall ([\d.]+) s, cpu ([\d.]+)\+([\d.]+) s", line)
    if m:
        key = (m[2], m[1])
        runs[key]["wall"].append(float(m[3]))
        runs[key]["cpu"].append(float(m[4]) + float(m[5]))
for (what, side), t in sorted(runs.items()):
    print(f"{what:18s} {side}: median wall {statistics.median(t['wall']):.2f} s, median cpu "
          f"{statistics.median(t['cpu']):.2f} s over {len(t['wall'])} runs")
