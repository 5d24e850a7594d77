#!/usr/bin/env bash
# Tagging speed in one warm process, two checkouts side by side: ROUNDS rounds of tagtime.py,
# OLD and NEW alternating (the order flipped every round). Usage:
#   bash ab_rounds.sh OLD NEW MODEL TEXT_FILE ROUNDS
set -euo pipefail
old=$1 new=$2 model=$3 text=$4 rounds=$5
here=$(cd "$(dirname "$0")" && pwd)
for r in $(seq 1 "$rounds"); do
  sides="old new"; [ $((r % 2)) -eq 0 ] && sides="new old"
  for side in $sides; do
    root=$old; [ "$side" = new ] && root=$new
    OMP_NUM_THREADS=1 python "$here/tagtime.py" "$root" "$model" "$text" | sed "s/^/round $r $side /"
  done
done
