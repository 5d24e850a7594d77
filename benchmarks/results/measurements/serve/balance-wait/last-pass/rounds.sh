#!/bin/bash
# Old (5411160: the balance wait counts the passes under way) against new (90cc8d8: and the last pass to end), the
# service on one-sentence requests, one worker (the default) and two, three rounds alternating the checkouts (reversed
# in round 2), each checkout read from its snapshot: bash rounds.sh /work/wt-5411160 /work/wt-90cc8d8 OUT
set -eu
old=$1; new=$2; out=$3
mkdir -p "$out"
for r in 1 2 3; do
  trees="old new"; [ $r = 2 ] && trees="new old"
  for name in $trees; do
    tree=$old; [ $name = new ] && tree=$new
    for workers in 1 2; do
      clients="16 32"; [ $workers = 2 ] && clients="8 32"
      (cd "$tree" && PYTHONPATH="$tree" python benchmarks/serve_load.py run --workers $workers --kinds sentence \
          --clients $clients --seconds 10 --phases serve --soak-seconds 0 --note "quiet; alternating rounds" \
          --out "$out/r$r-$name-w$workers") > "$out/r$r-$name-w$workers.log" 2>&1
    done
  done
done
