#!/usr/bin/env bash
# Tagging speed of two checkouts side by side: predict.py (one process, two processes) on a long
# raw text and evaluate.py on the sample test split, each run ROUNDS times alternating OLD and
# NEW; prints the wall time and the CPU time of the process and its children (user + system).
# Usage: bash speed.sh OLD_CHECKOUT NEW_CHECKOUT MODEL_DIR TEXT_FILE ROUNDS
set -euo pipefail
old=$1 new=$2 model=$3 text=$4 rounds=$5
for round in $(seq 1 "$rounds"); do
  for side in old new; do
    root=$old; [ "$side" = new ] && root=$new
    for processes in 1 2; do
      (cd "$root" && PYTHONPATH=$root /usr/bin/time -f "$side round $round predict --processes $processes: wall %e s, cpu %U+%S s" \
        python scripts/predict.py --model "$model" "$text" --quiet --processes "$processes" --output /tmp/speed-$side.jsonl) 2>&1 | tail -1
    done
    (cd "$root" && PYTHONPATH=$root /usr/bin/time -f "$side round $round evaluate --processes 1: wall %e s, cpu %U+%S s" \
      python scripts/evaluate.py --model "$model" --split test --output-dir /tmp/speed-eval-$side --quiet --processes 1 > /dev/null) 2>&1 | tail -1
  done
done
