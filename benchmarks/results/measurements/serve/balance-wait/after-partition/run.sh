#!/bin/bash
cd "${TREE:-.}"
OUT=${OUT:-out}; mkdir -p $OUT
for r in 1 2 3; do
  order="0 5 10"; [ $((r % 2)) -eq 0 ] && order="10 5 0"
  for b in $order; do
    echo "round $r balance $b $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
    PYTHONPATH=. python benchmarks/serve_load.py run --balance-wait-ms $b --kinds sentence paragraph --clients 8 32 --seconds 10 --phases serve --soak-seconds 0 --note "quiet; alternating rounds" --out $OUT/r$r-b$b > $OUT/r$r-b$b.log 2>&1
  done
done
