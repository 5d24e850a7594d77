# Run from the repository root at the commit of command.txt; writes into this folder.
export DOCGRAPH_DATA_DIR=../shared/data
O=benchmarks/results/measurements/serve/threads
for r in 1 2; do
  for cfg in "2 1" "1 2"; do
    set -- $cfg
    phases="serve"; [ $r = 1 ] && [ $1 = 2 ] && phases="serve offline"
    python benchmarks/serve_load.py run --workers $1 --threads $2 --kinds sentence --clients 8 32 --seconds 10 --soak-seconds 0 --phases $phases --note "quiet: a corpus job stopped for it" --out $O/w$1t$2-r$r > $O/w$1t$2-r$r.log 2>&1
  done
done
