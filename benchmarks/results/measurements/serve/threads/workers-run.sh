#!/bin/bash
cd "${TREE:-.}"
OUT=${OUT:-benchmarks/results/measurements/serve/threads}; mkdir -p $OUT
for r in 1 2 3; do
  order="2 3"; [ $((r % 2)) -eq 0 ] && order="3 2"
  for w in $order; do
    echo "round $r workers $w $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
    PYTHONPATH=. python benchmarks/serve_load.py run --workers $w --kinds sentence --clients 8 32 --seconds 10 --phases serve --soak-seconds 0 --note "quiet; alternating rounds" --out $OUT/r$r-w$w > $OUT/r$r-w$w.log 2>&1
  done
done
