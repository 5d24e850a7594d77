#!/usr/bin/env bash
# Same outputs from two checkouts (OLD, NEW) of a refactoring: train, evaluate (one and two
# processes), predict (JSON lines, tokens, CoNLL, HTML; one and two processes) and visualize run
# on the sample corpus and a model of it, and every output is compared byte for byte (paths
# replaced). Usage: bash compare.sh OLD_CHECKOUT NEW_CHECKOUT MODEL_DIR OUT_DIR
set -euo pipefail
old=$1 new=$2 model=$3 out=$4
mkdir -p "$out"
printf 'Kestrel beat Carrow 2-1 on Saturday. Piet Rauch scored twice for Kestrel.\n\nShares in Harwick Mining rose in Veldania on Monday.\n' > "$out/in.txt"
for side in old new; do
  root=$old; [ "$side" = new ] && root=$new
  dir=$out/$side; mkdir -p "$dir"
  (cd "$root" && export PYTHONPATH=$root OMP_NUM_THREADS=1 && set +e  # exit statuses are compared too
   python scripts/evaluate.py --model "$model" --split dev --output-dir "$dir" --device cpu --quiet --processes 1 > "$dir/eval.out" 2>&1; echo "exit $?" >> "$dir/eval.out"
   python scripts/evaluate.py --model "$model" --split test --threshold 100 --output-dir "$dir/t100" --device cpu --quiet --processes 1 > "$dir/eval100.out" 2>&1; echo "exit $?" >> "$dir/eval100.out"
   python scripts/predict.py --model "$model" "$out/in.txt" --documents paragraphs --quiet --processes 1 > "$dir/pred.jsonl" 2>&1; echo "exit $?" >> "$dir/pred.jsonl"
   python scripts/evaluate.py --model "$model" --split test --output-dir "$dir/p2" --device cpu --quiet --processes 2 > "$dir/eval-p2.out" 2>&1; echo "exit $?" >> "$dir/eval-p2.out"
   python scripts/predict.py --model "$model" docgraph/data/sample/test.txt --format jsonl-tokens --max-doc-tokens 40 --quiet --processes 2 > "$dir/pred-tokens-p2.jsonl" 2>&1; echo "exit $?" >> "$dir/pred-tokens-p2.jsonl"
   python scripts/predict.py --model "$model" "$out/in.txt" --format conll --quiet --processes 1 > "$dir/pred.conll" 2>&1; echo "exit $?" >> "$dir/pred.conll"
   python scripts/predict.py --model "$model" "$out/in.txt" --format html --quiet > "$dir/pred.html" 2>&1; echo "exit $?" >> "$dir/pred.html"
   python scripts/visualize.py --model "$model" --split dev --noisy 8 --html "$dir/view.html" > "$dir/viz.out" 2>&1; echo "exit $?" >> "$dir/viz.out"
   python scripts/train.py --output-dir "$dir/run" --hidden 16 --char-hidden 8 --sent-dim 16 --uncertainty-hidden 8 --samples 2 --embeddings none --threads 1 --device cpu --quiet --epochs 2 --processes 1 > "$dir/train.out" 2>&1)
done
for f in eval.out eval100.out pred.jsonl eval-p2.out pred-tokens-p2.jsonl pred.conll pred.html viz.out train.out dev_metrics.json dev_predictions.conll t100/test_metrics.json t100/test_predictions.conll p2/test_metrics.json p2/test_predictions.conll view.html; do
  if [ ! -e "$out/old/$f" ] && [ ! -e "$out/new/$f" ]; then echo "neither   $f"
  elif diff <(sed "s#$out/old#OUT#g" "$out/old/$f") <(sed "s#$out/new#OUT#g" "$out/new/$f") > /dev/null 2>&1; then
    echo "same      $f"; else echo "DIFFERENT $f"; fi
done
(cd "$new" && PYTHONPATH=$new python - "$out" <<'PY'
import json, sys
import torch
out = sys.argv[1]
a, b = (json.load(open(f"{out}/{s}/run/metrics.json")) for s in ("old", "new"))
for m in (a, b):
    m["config"].pop("output_dir")
print("same      run config" if a["config"] == b["config"] else "DIFFERENT run config")
wa, wb = (torch.load(f"{out}/{s}/run/model.pt", weights_only=True)["model"] for s in ("old", "new"))
same = wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
print("same      trained weights (bitwise)" if same else "DIFFERENT trained weights")
PY
)
