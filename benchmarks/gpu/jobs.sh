# Sourced by lean.sh and run.sh (the earlier GPU scripts, which read .offline-bundle/): the one
# loop that trains every job side by side under the command's wall-clock budget.
#
#   run_jobs RUNS_DIR DEVICE THREADS GLOVE RESERVE JOB...
#
# Each JOB is "name|train.py flags". Every run gets --max-minutes = what is left of HARD_STOP
# (seconds after START, both set by the caller) less RESERVE seconds (loading the data, the
# final evaluation, packing), at least half a minute; each is killed at HARD_STOP at the latest.
# Logs go to logs/<name>.log, run directories to RUNS_DIR/<name>.
run_jobs() {
  local dir=$1 device=$2 threads=$3 glove=$4 reserve=$5
  shift 5
  local left minutes job name flags
  left=$(( HARD_STOP - ($(date +%s) - START) ))
  minutes=$(python3 -c "print(max(0.5, round(($left - $reserve) / 60, 2)))")
  echo "budget per run: $minutes min (hard stop in $left s)"
  for job in "$@"; do
    name=${job%%|*}; flags=${job#*|}
    # shellcheck disable=SC2086
    timeout "$left" python3 scripts/train.py $flags --embeddings "$glove" --device "$device" \
      --threads "$threads" --quiet --max-minutes "$minutes" \
      --output-dir "$dir/$name" > "logs/$name.log" 2>&1 &
  done
  wait
  echo "all runs ended after $(( $(date +%s) - START )) s"
  for job in "$@"; do name=${job%%|*}; echo "== $name"; tail -2 "logs/$name.log"; done
}
