#!/usr/bin/env bash
# Same outputs from two checkouts (OLD, NEW) of the tagging core (outputs.sh on each), compared
# byte for byte (the output directory's path replaced), the trained weights bitwise.
# Usage: bash compare.sh OLD_CHECKOUT NEW_CHECKOUT MODEL OUT_DIR [old|new|both]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
old=$1 new=$2 model=$3 out=$4 sides=${5:-both}
mkdir -p "$out/in"
cp "$old/docgraph/data/sample/test.txt" "$here/news.txt" "$out/in/"
python - "$out/in" <<'PY'
import json, sys
text = open(f"{sys.argv[1]}/news.txt", encoding="utf-8").read()
with open(f"{sys.argv[1]}/spans.jsonl", "w", encoding="utf-8") as f:
    for k, p in enumerate(q for q in text.split("\n\n") if q.strip()):
        f.write(json.dumps({"id": f"par-{k}", "text": p, "spans": []}) + "\n")
PY
[ "$sides" = new ] || bash "$here/outputs.sh" "$old" "$model" "$out/in" "$out/old"
[ "$sides" = old ] || bash "$here/outputs.sh" "$new" "$model" "$out/in" "$out/new"
[ -d "$out/old" ] && [ -d "$out/new" ] || exit 0
cd "$out/old"
for f in $(find . -type f ! -path './run/*' | sort); do
  f=${f#./}
  if [ ! -e "$out/new/$f" ]; then echo "MISSING   $f"
  elif cmp -s <(sed "s#$out/old#OUT#g" "$out/old/$f") <(sed "s#$out/new#OUT#g" "$out/new/$f"); then
    echo "same      $f"; else echo "DIFFERENT $f"; fi
done 2>/dev/null
(cd "$new" && PYTHONPATH=$new python - "$out" <<'PY'
import sys
import torch
out = sys.argv[1]
wa, wb = (torch.load(f"{out}/{s}/run/model.pt", weights_only=True)["model"] for s in ("old", "new"))
same = wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
print("same      trained weights (bitwise)" if same else "DIFFERENT trained weights")
PY
)
