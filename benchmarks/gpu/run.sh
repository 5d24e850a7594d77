#!/usr/bin/env bash
# The script of the GPU runs of 2026-11-26 and 2026-11-27 (benchmarks/results/runs/*/*-h100-s*,
# *-h200-s*); benchmarks/gpu/kit.sh supersedes it for new measurements. Runs on any CUDA machine,
# also one without network access, from the repository root with .offline-bundle/ (made by
# benchmarks/gpu/prepare_offline_bundle.py: corpora, pure-Python packages, GloVe subset) copied
# along. Trains every run of the job set JOBSET (below) side by side on one GPU, each process with
# one CPU thread (THREADS), until HARD_STOP seconds after the start, then packs the run
# directories (without weights) into $OUT/gpu-runs.tgz (default OUT=/tmp/out).
#
#   JOBSET=main bash benchmarks/gpu/run.sh [HARD_STOP_SECONDS]    # default 560
#
# Each run's --max-minutes is what is left of HARD_STOP after the smoke test, less 110 s for
# loading the data and the final evaluation (RESERVE).
set -u
# shellcheck source=benchmarks/gpu/jobs.sh
source "$(dirname "$0")/jobs.sh"
START=$(date +%s)
HARD_STOP=${1:-560}   # seconds after START by which every process must have ended
C=.offline-bundle
export PYTHONPATH=$PWD:$PWD/$C/pylib PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" logs runs/gpu
nvidia-smi -L
python3 -c "import torch, torch_geometric as g; print('torch', torch.__version__, 'pyg', g.__version__, torch.cuda.get_device_name())"

smoke() {
  timeout 90 python3 scripts/train.py --dataset sample --device cuda --epochs 1 --quiet \
    --embeddings none --threads 1 --output-dir /tmp/smoke > logs/smoke.log 2>&1
}
if nvidia-cuda-mps-control -d 2>/dev/null; then echo "MPS daemon started"; fi
if [ "${SMOKE:-1}" = 1 ] && ! smoke; then
  echo "smoke run failed with MPS; retrying without"; tail -20 logs/smoke.log
  echo quit | nvidia-cuda-mps-control 2>/dev/null; sleep 2
  if ! smoke; then echo "SMOKE FAILED"; cat logs/smoke.log; exit 1; fi
fi
if [ "${SMOKE:-1}" = 1 ]; then
  tail -2 logs/smoke.log
  echo "smoke ok after $(( $(date +%s) - START )) s"
fi

GLOVE=$C/glove.6B.50d.subset.txt.gz
CONLL="--dataset conll03 --data-dir $C/data/conll2003"
ONTO="--dataset ontonotes --data-dir $C/data/ontonotes"
# Each job set is named after what it trains; the dates, machines and commits say when it ran.
# JOBSET=main: seeds, OntoNotes and the baseline sweep (run 2026-11-26 on an H200; runs
# committed in 1ef0cee and bcb5c8d);
# JOBSET=bt2000: the larger batch that won the sweep, on GCDoc too (run 2026-11-26 on an H200
# after main; runs in 1ef0cee, bcb5c8d and 7374846);
# JOBSET=preset: 3 seeds of both models with the presets (4000-token batches), fine-tuned and
# frozen embeddings, and OntoNotes at 4000 and 8000 tokens per batch (run 2026-11-26 on an H200;
# runs in 69704e1);
# JOBSET=onto-large (added in a261cab, 2026-11-26; not run): OntoNotes with 16000/32000-token
# batches, where a GPU epoch costs little more than at 4000, so more epochs fit the budget; lr
# scaled up to keep pace.
# JOBSET=ablations (run 2026-11-26 on an H100, 16 runs side by side; runs in 8f4b479): after the
# fixes of 4f65f20 and d5b1751 (tagger clipped apart, graph seed from the run seed), 3 seeds each
# of GCDoc, GCDoc with entity-only relation labels, GCDoc with a 2-epoch unpruned warm-up and the
# frozen-embedding baseline, and one seed of the Table 4/5 ablations; up to 60 epochs so that
# early stopping, not the epoch cap, ends every run.
# JOBSET=context-windows (added in cc4eb7d, 2026-11-26; not run on a GPU): the paper's Table 6 rows
# and Fig. 4 window sizes on CoNLL-2003, 3 seeds each (18 runs side by side; GCDoc epochs stay ~12 s
# on an H100 at that concurrency); give it >= 10 minutes so that early stopping (patience 6) can
# fire.
# JOBSET=graphmean-sweep (added in cc4eb7d, 2026-11-26; run 2026-11-27 on an H200 with SMOKE=0 and
# 570 s, runs in abd5d80; all 7 runs converged but lr 0.001, resumed to convergence by a second
# command): the plain-mean graph (best dev in Table 5) over 3 seeds and GCDoc's own small sweep
# (lr 0.001/0.004, dropout 0.3/0.4), one seed each.
# JOBSET=onto-alone (added in 94222d3, 2026-11-27; not run): the faithful OntoNotes GCDoc as ONE
# process with the whole GPU, to convergence (the GPU target for OntoNotes). Alone on an H200 a
# default (4000-token) epoch took 81 s (2026-11-27, ontonotes-gcdoc-alone-1epoch-h200-s1), so
# ~20 epochs need ~27 min; 16000-token batches (lr 0.004) cut the epoch count per pass. Run with
# THREADS=8 and a HARD_STOP of 1800 or more; a budget-stopped run resumes on the same machine (its
# checkpoints stay in runs/gpu/, they are not packed) with
#   python3 scripts/train.py --resume runs/gpu/ontonotes-gcdoc-alone-bt16000-s1 --max-minutes M
# and its wall time is the sum of the training loops of both commands (train_log.jsonl).
# JOBSET=threshold-sweep (added in 9861d76; run 2026-11-27 on an H200 with SMOKE=0 and 565 s, runs
# in 7cc2b85; 7 of 9 converged, two threshold-1.0 seeds budget-stopped and could not be resumed:
# their checkpoints were gone with the machine -- resume on the same machine or not at all): does
# GCDoc keep the plain mean's document consistency when pruning spares the entity tokens? (At the
# paper's threshold 0.5 the pruning removes 30% of entity tokens,
# benchmarks/results/measurements/edge-weights/.) 3 seeds each of the thresholds 1.0 and 1.5 and of
# the edge-weighted graph without pruning; give it >= 9 minutes.
if [ "${JOBSET:-main}" = onto-alone ]; then
  JOBS=("ontonotes-gcdoc-alone-bt16000-s1|$ONTO --seed 1 --batch-tokens 16000 --lr 0.004")
elif [ "${JOBSET:-main}" = threshold-sweep ]; then
  E="--epochs 60"
  JOBS=()
  for s in 1 2 3; do JOBS+=(
    "conll03-gcdoc-threshold1.0-bt4000-s$s|$CONLL --seed $s $E --threshold 1.0"
    "conll03-gcdoc-threshold1.5-bt4000-s$s|$CONLL --seed $s $E --threshold 1.5"
    "conll03-gcdoc-nopruning-bt4000-s$s|$CONLL --seed $s $E --no-pruning"
  ); done
elif [ "${JOBSET:-main}" = context-windows ]; then
  E="--epochs 60"
  JOBS=()
  for s in 1 2 3; do JOBS+=(
    "conll03-current-only-bt4000-s$s|$CONLL --seed $s $E --current-sentence-only"
    "conll03-previous-only-bt4000-s$s|$CONLL --seed $s $E --previous-only"
    "conll03-next-only-bt4000-s$s|$CONLL --seed $s $E --next-only"
    "conll03-window1-bt4000-s$s|$CONLL --seed $s $E --window 1"
    "conll03-window3-bt4000-s$s|$CONLL --seed $s $E --window 3"
    "conll03-window4-bt4000-s$s|$CONLL --seed $s $E --window 4"
  ); done
elif [ "${JOBSET:-main}" = graphmean-sweep ]; then
  E="--epochs 60"
  JOBS=()
  for s in 1 2 3; do
    JOBS+=("conll03-graphmean-bt4000-s$s|$CONLL --seed $s $E --no-pruning --no-edge-weights")
  done
  JOBS+=(
    "sweep-gcdoc-lr0.001-s1|$CONLL --seed 1 $E --lr 0.001"
    "sweep-gcdoc-lr0.004-s1|$CONLL --seed 1 $E --lr 0.004"
    "sweep-gcdoc-dropout0.3-s1|$CONLL --seed 1 $E --dropout 0.3"
    "sweep-gcdoc-dropout0.4-s1|$CONLL --seed 1 $E --dropout 0.4"
  )
elif [ "${JOBSET:-main}" = ablations ]; then
  E="--epochs 60"
  JOBS=()
  for s in 1 2 3; do JOBS+=(
    "conll03-gcdoc-v2-bt4000-s$s|$CONLL --seed $s $E"
    "conll03-gcdoc-entityrel-bt4000-s$s|$CONLL --seed $s $E --relation-labels entity"
    "conll03-gcdoc-warmup2-bt4000-s$s|$CONLL --seed $s $E --unpruned-epochs 2"
    "conll03-baseline-frozen-e60-bt4000-s$s|$CONLL --seed $s $E --baseline --freeze-embeddings"
  ); done
  JOBS+=(
    "conll03-crossonly-bt4000-s1|$CONLL --seed 1 $E --no-graph"
    "conll03-graphonly-v2-bt4000-s1|$CONLL --seed 1 $E --no-cross-sentence"
    "conll03-graphmean-bt4000-s1|$CONLL --seed 1 $E --no-pruning --no-edge-weights"
    "conll03-graphpruned-bt4000-s1|$CONLL --seed 1 $E --no-edge-weights"
  )
elif [ "${JOBSET:-main}" = ablations-rerun ]; then
  # run right after ablations on the same H100 (2026-11-26, runs in 8f4b479): the main
  # configurations that the ablations' budget cut, rerun five at a time so that early stopping
  # can fire
  E="--epochs 60"
  JOBS=(
    "conll03-gcdoc-v2-bt4000-s2|$CONLL --seed 2 $E"
    "conll03-gcdoc-v2-bt4000-s3|$CONLL --seed 3 $E"
  )
  for s in 1 2 3; do
    JOBS+=("conll03-gcdoc-entityrel-bt4000-s$s|$CONLL --seed $s $E --relation-labels entity")
  done
elif [ "${JOBSET:-main}" = onto-large ]; then JOBS=(
  "ontonotes-gcdoc-bt16000-s1|$ONTO --seed 1 --batch-tokens 16000"
  "ontonotes-gcdoc-bt16000-lr0.004-s1|$ONTO --seed 1 --batch-tokens 16000 --lr 0.004"
  "ontonotes-gcdoc-bt32000-lr0.004-s1|$ONTO --seed 1 --batch-tokens 32000 --lr 0.004"
  "ontonotes-gcdoc-bt32000-lr0.008-s1|$ONTO --seed 1 --batch-tokens 32000 --lr 0.008"
  "ontonotes-baseline-bt16000-s1|$ONTO --seed 1 --baseline --batch-tokens 16000"
  "ontonotes-baseline-bt16000-lr0.004-s1|$ONTO --seed 1 --baseline --batch-tokens 16000 --lr 0.004"
  "ontonotes-baseline-bt32000-lr0.004-s1|$ONTO --seed 1 --baseline --batch-tokens 32000 --lr 0.004"
  "ontonotes-baseline-bt32000-lr0.008-s1|$ONTO --seed 1 --baseline --batch-tokens 32000 --lr 0.008"
)
elif [ "${JOBSET:-main}" = preset ]; then JOBS=(
  "conll03-gcdoc-bt4000-s1|$CONLL --seed 1"
  "conll03-gcdoc-bt4000-s2|$CONLL --seed 2"
  "conll03-gcdoc-bt4000-s3|$CONLL --seed 3"
  "conll03-baseline-bt4000-s1|$CONLL --seed 1 --baseline"
  "conll03-baseline-bt4000-s2|$CONLL --seed 2 --baseline"
  "conll03-baseline-bt4000-s3|$CONLL --seed 3 --baseline"
  "conll03-gcdoc-frozen-bt4000-s1|$CONLL --seed 1 --freeze-embeddings"
  "conll03-gcdoc-frozen-bt4000-s2|$CONLL --seed 2 --freeze-embeddings"
  "conll03-gcdoc-frozen-bt4000-s3|$CONLL --seed 3 --freeze-embeddings"
  "conll03-baseline-frozen-bt4000-s1|$CONLL --seed 1 --baseline --freeze-embeddings"
  "conll03-baseline-frozen-bt4000-s2|$CONLL --seed 2 --baseline --freeze-embeddings"
  "conll03-baseline-frozen-bt4000-s3|$CONLL --seed 3 --baseline --freeze-embeddings"
  "ontonotes-gcdoc-bt4000-s1|$ONTO --seed 1"
  "ontonotes-baseline-bt4000-s1|$ONTO --seed 1 --baseline"
  "ontonotes-gcdoc-bt8000-s1|$ONTO --seed 1 --batch-tokens 8000"
  "ontonotes-baseline-bt8000-s1|$ONTO --seed 1 --baseline --batch-tokens 8000"
)
elif [ "${JOBSET:-main}" = bt2000 ]; then JOBS=(
  "conll03-gcdoc-bt2000-s1|$CONLL --seed 1 --batch-tokens 2000"
  "conll03-gcdoc-bt2000-s2|$CONLL --seed 2 --batch-tokens 2000"
  "conll03-gcdoc-bt2000-s3|$CONLL --seed 3 --batch-tokens 2000"
  "conll03-gcdoc-bt4000-s1|$CONLL --seed 1 --batch-tokens 4000"
  "sweep-baseline-bt2000-s2|$CONLL --seed 2 --baseline --batch-tokens 2000"
  "sweep-baseline-bt2000-s3|$CONLL --seed 3 --baseline --batch-tokens 2000"
  "sweep-baseline-bt4000|$CONLL --seed 1 --baseline --batch-tokens 4000"
)
else JOBS=(
  "conll03-gcdoc-s1|$CONLL --seed 1"
  "conll03-gcdoc-s2|$CONLL --seed 2"
  "conll03-gcdoc-s3|$CONLL --seed 3"
  "ontonotes-gcdoc-s1|$ONTO --seed 1"
  "ontonotes-baseline-s1|$ONTO --seed 1 --baseline"
  "conll03-baseline-s1|$CONLL --seed 1 --baseline"
  "conll03-baseline-s2|$CONLL --seed 2 --baseline"
  "conll03-baseline-s3|$CONLL --seed 3 --baseline"
  "conll03-gcdoc-fast-s1|$CONLL --seed 1 --fast"
  "sweep-baseline-lr0.001|$CONLL --seed 1 --baseline --lr 0.001"
  "sweep-baseline-lr0.004|$CONLL --seed 1 --baseline --lr 0.004"
  "sweep-baseline-bt500|$CONLL --seed 1 --baseline --batch-tokens 500"
  "sweep-baseline-bt2000|$CONLL --seed 1 --baseline --batch-tokens 2000"
  "sweep-baseline-sgd-paper|$CONLL --seed 1 --baseline --optimizer sgd --lr 0.01 --loss-reduction sum --batch-tokens 300"
)
fi
run_jobs runs/gpu cuda "${THREADS:-1}" "$GLOVE" "${RESERVE:-110}" "${JOBS[@]}"
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv
cp logs/*.log runs/gpu/ 2>/dev/null
tar czf "$OUT/gpu-runs.tgz" --exclude='*.pt' runs/gpu
echo quit | nvidia-cuda-mps-control 2>/dev/null
true
