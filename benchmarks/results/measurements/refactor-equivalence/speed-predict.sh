#!/usr/bin/env bash
# predict.py in one process, ROUNDS times alternating two checkouts (OLD, NEW): the CPU time of
# each run (user + system). Usage: bash speed-predict.sh OLD NEW MODEL_DIR TEXT_FILE ROUNDS
set -euo pipefail
old=$1 new=$2 model=$3 text=$4 rounds=$5
for round in $(seq 1 "$rounds"); do
  for side in old new; do
    root=$old; [ "$side" = new ] && root=$new
    (cd "$root" && PYTHONPATH=$root /usr/bin/time -f "$side round $round predict --processes 1: wall %e s, cpu %U+%S s" \
      python scripts/predict.py --model "$model" "$text" --quiet --processes 1 --output /tmp/speed-$side.jsonl) 2>&1 | tail -1
  done
done
