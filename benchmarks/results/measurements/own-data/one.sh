#!/bin/bash
# one.sh NAME [train.py flags...]: train on runs/own30, then score on CoNLL-2003 dev and test
set -u
cd /work/main && . .venv/bin/activate
name=$1; shift
out=runs/own30-runs/$name
python scripts/train.py --dataset column --data-dir runs/own30 --output-dir $out --overwrite --quiet "$@" > $out.train.log 2>&1
echo "train rc $?" >> $out.train.log
for split in dev test; do
  python scripts/evaluate.py --model $out --dataset conll03 --data-dir /work/shared/data/conll2003 --split $split --output-dir $out/conll03 --processes 1 --quiet > $out.$split.log 2>&1
done
