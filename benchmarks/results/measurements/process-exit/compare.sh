#!/usr/bin/env bash
# Wall time of a two-process training run and of predict.py in two processes on the sample corpus,
# before (OLD) and after (NEW) workers leave without the interpreter's tear-down, alternating.
# Usage: OLD=<checkout> NEW=<checkout> PY=<python> bash compare.sh ROUNDS
set -euo pipefail
rounds=${1:-3}
text=$(mktemp); trap 'rm -f "$text"' EXIT
for i in 1 2 3 4 5 6; do awk '$1 != "-DOCSTART-" {print $1}' "$NEW/docgraph/data/sample/test.txt"; done | tr '\n' ' ' > "$text"
for round in $(seq "$rounds"); do
  for side in OLD NEW; do
    dir=${!side}; out=$(mktemp -d)
    start=$(date +%s.%N)
    (cd "$dir" && PYTHONPATH="$dir" "$PY" scripts/train.py --dataset sample --hidden 16 --char-hidden 8 \
      --sent-dim 16 --uncertainty-hidden 8 --samples 2 --embeddings none --threads 1 --device cpu \
      --quiet --processes 2 --epochs 1 --batch-tokens 500 --output-dir "$out/run" > /dev/null)
    mid=$(date +%s.%N)
    (cd "$dir" && PYTHONPATH="$dir" "$PY" scripts/predict.py --model "$out/run" "$text" --processes 2 \
      --device cpu --quiet --max-doc-tokens 500 > "$out/tags.jsonl")
    end=$(date +%s.%N)
    printf '%s round %s train %.2f s predict %.2f s\n' "$side" "$round" \
      "$(echo "$mid - $start" | bc)" "$(echo "$end - $mid" | bc)"
    rm -rf "$out"
  done
done
