#!/bin/bash
# Where the two cores go while the service answers one-sentence requests at 32 clients: /proc/stat over 10 s of a
# 25 s wrk run (two workers; the cores' time by kind, as cores of the machine), and context switches per second.
# Run from a checkout with the serve extra installed: bash idle.sh [port]
set -e
PORT=${1:-8112}
WORK=$(mktemp -d); SRV=; WRK=
# the server and wrk end with the script on every path, a failed step included
trap 'set +e; kill $SRV $WRK 2> /dev/null; wait $SRV $WRK 2> /dev/null; rm -rf "$WORK"' EXIT
docgraph serve --model conll03 --workers 2 --port "$PORT" > "$WORK/server.log" 2>&1 &
SRV=$!
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$PORT/ready" > /dev/null && break; sleep 1; done
python - "$WORK/load.lua" <<'PY'
import json, sys
from docgraph_dev.serve_load import lua_script, texts
open(sys.argv[1], "w").write(lua_script([json.dumps({"text": t}) for t in texts("sentence", 512)], 10**6, 2))
PY
wrk -t 2 -c 32 -d 25s -s "$WORK/load.lua" "http://127.0.0.1:$PORT" > "$WORK/wrk.txt" 2>&1 &
WRK=$!
sleep 8; A=$(head -1 /proc/stat); CA=$(awk '/^ctxt/{print $2}' /proc/stat); sleep 10
B=$(head -1 /proc/stat); CB=$(awk '/^ctxt/{print $2}' /proc/stat)
wait $WRK; WRK=; kill -TERM $SRV; wait $SRV || true; SRV=
python - "$A" "$B" "$CA" "$CB" <<'PY'
import os, sys
names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
a, b = ([int(v) for v in s.split()[1:9]] for s in sys.argv[1:3])
d = [y - x for x, y in zip(a, b)]
cores = os.cpu_count()
print({n: round(v / sum(d) * cores, 3) for n, v in zip(names, d)}, f"cores of {cores}")
print("context switches/s", (int(sys.argv[4]) - int(sys.argv[3])) / 10)
PY
grep "Requests/sec" "$WORK/wrk.txt"
