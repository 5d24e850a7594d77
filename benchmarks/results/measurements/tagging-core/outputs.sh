#!/usr/bin/env bash
# Every user-facing output of tagging from one checkout, for a before/after comparison of the
# tagging core (compare.sh): evaluate (one and two processes), predict in each output format
# (with and without --scores, one and two processes, raw text, CoNLL and span JSON lines input,
# paragraphs, --tokenized, chunks), visualize (HTML page, noisiest edges), the spaCy component,
# and a seeded 2-epoch training. Usage: bash outputs.sh CHECKOUT MODEL INPUTS_DIR OUT_DIR
set -uo pipefail
root=$1 model=$2 in=$3 out=$4
mkdir -p "$out"
cd "$root"
export PYTHONPATH=$root OMP_NUM_THREADS=1
run() {  # run NAME COMMAND...: stdout+stderr and the exit status into $out/NAME
  local name=$1; shift
  "$@" > "$out/$name" 2>&1; echo "exit $?" >> "$out/$name"
}
P="python scripts/predict.py --model $model --quiet"
run eval-p1.out python scripts/evaluate.py --model "$model" --data "$in/test.txt" --output-dir "$out/e1" --device cpu --quiet --processes 1
run eval-p2.out python scripts/evaluate.py --model "$model" --data "$in/test.txt" --output-dir "$out/e2" --device cpu --quiet --processes 2
for fmt in jsonl jsonl-tokens conll spans spacy html; do
  run "pred-$fmt.out" $P "$in/news.txt" --format "$fmt" --output "$out/pred.$fmt" --processes 1
done
run pred-scores.out $P "$in/news.txt" --scores --output "$out/pred-scores.jsonl" --processes 1
run pred-scores-p2.out $P "$in/news.txt" --scores --output "$out/pred-scores-p2.jsonl" --processes 2
run pred-min-score.out $P "$in/news.txt" --min-score 0.6 --output "$out/pred-min-score.jsonl" --processes 1
run pred-scores-html.out $P "$in/news.txt" --format html --scores --output "$out/pred-scores.html"
run pred-paragraphs.out $P "$in/news.txt" --documents paragraphs --format jsonl-tokens --output "$out/pred-paragraphs.jsonl" --processes 1
run pred-tokenized.out $P "$in/news.txt" --tokenized --documents lines --scores --output "$out/pred-tokenized.jsonl" --processes 1
run pred-conll-in.out $P "$in/test.txt" --scores --max-doc-tokens 40 --output "$out/pred-conll-in.jsonl" --processes 2
run pred-conll-in-conll.out $P "$in/test.txt" --format conll --max-doc-tokens 40 --output "$out/pred-conll-in.conll" --processes 1
run pred-spans-in.out $P "$in/spans.jsonl" --format spans --output "$out/pred-spans-in.jsonl" --processes 1
run pred-stdout.out $P "$in/news.txt" --scores --processes 1
run viz.out python scripts/visualize.py --model "$model" --data "$in/test.txt" --noisy 8 --html "$out/view.html"
run viz-scores.out python scripts/visualize.py --model "$model" --data "$in/test.txt" --scores --html "$out/view-scores.html"
run spacy.out python "$(dirname "$0")/spacy_outputs.py" "$model" "$in/news.txt"
run train.out python scripts/train.py --output-dir "$out/run" --hidden 16 --char-hidden 8 --sent-dim 16 --uncertainty-hidden 8 --samples 2 --embeddings none --threads 1 --device cpu --quiet --epochs 2 --processes 1
