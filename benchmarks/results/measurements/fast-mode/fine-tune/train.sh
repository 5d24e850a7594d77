#!/bin/bash
# conll03 fine-tuned in its library fast mode's computation (cross-sentence windows per sentence, one Monte-Carlo pass),
# the recipe of the shipped conll03's own fine-tune otherwise; resumable with --resume
cd /work/main && . .venv/bin/activate
export DOCGRAPH_DATA_DIR=/work/shared/data
date -u +"start %FT%TZ $(git rev-parse --short HEAD) load $(cut -d' ' -f1-3 /proc/loadavg)"
python scripts/train.py --dataset conll03 --init-from conll03 --window-encoding per_sentence --samples 1 --epochs 30 --patience 4 --lowercase-share 0.3 --uppercase-share 0.2 --novel-name-share 0.3 --novel-name-cues 3 --mention-masking 0.3 --word-dropout 0.05 --selection robust_dev --processes 1 --seed 2 --output-dir runs/conll03-gcdoc-fastmode-ft-cpu-s2 "$@"
date -u +"done %FT%TZ rc $?"
