#!/usr/bin/env bash
# Tagging speed of two checkouts side by side: predict.py in one process on the same text,
# ROUNDS rounds alternating OLD and NEW (the order flipped every round), each run's wall and CPU
# time (user + system); with and without --scores. Usage:
#   bash speed.sh OLD NEW MODEL TEXT_FILE ROUNDS
set -euo pipefail
old=$1 new=$2 model=$3 text=$4 rounds=$5
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for round in $(seq 1 "$rounds"); do
  sides="old new"; [ $((round % 2)) -eq 0 ] && sides="new old"
  for side in $sides; do
    root=$old; [ "$side" = new ] && root=$new
    for flags in "" "--scores"; do
      (cd "$root" && PYTHONPATH=$root OMP_NUM_THREADS=1 /usr/bin/time -o "$out/time" -f "$side round $round predict${flags:+ $flags}: wall %e s, cpu %U+%S s" \
        python scripts/predict.py --model "$model" "$text" --quiet --processes 1 $flags --output "$out/$side.jsonl") > "$out/log" 2>&1 \
        || { echo "$side round $round predict${flags:+ $flags}: FAILED"; cat "$out/log" "$out/time"; }
      tail -1 "$out/time"
    done
  done
done
