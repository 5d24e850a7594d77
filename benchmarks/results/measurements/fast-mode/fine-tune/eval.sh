#!/bin/bash
# after train.sh: the fine-tuned model (its trained computation is the approximate one) on every row, dev and test, and
# the dev rows with seeds 1 and 2 of invented names
while pgrep -f "fast-ft/train.sh" >/dev/null; do sleep 10; done
cd /work/main && . .venv/bin/activate
export DOCGRAPH_DATA_DIR=/work/shared/data
M=runs/conll03-gcdoc-fastmode-ft-cpu-s2; O=runs/fast-ft
for split in dev test; do
date -u +"start $split %FT%TZ $(git rev-parse --short HEAD) load $(cut -d' ' -f1-3 /proc/loadavg)"
python benchmarks/fast_mode.py --part quality --models $M --split $split --variants faithful --data-dir /work/shared/data --out $O/quality-$split-fastmode-ft.json || exit 1
done
for seed in 1 2; do
date -u +"start seed $seed %FT%TZ load $(cut -d' ' -f1-3 /proc/loadavg)"
python benchmarks/fast_mode.py --part quality --models $M --split dev --novel-seed $seed --variants faithful --data-dir /work/shared/data --out $O/quality-dev-fastmode-ft-seed$seed.json || exit 1
done
date -u +"done %FT%TZ"
