#!/bin/bash
# The interleaved measurements of command.txt, one after another (PYTHONPATH: the checkout).
set -eu
. /work/main/.venv/bin/activate
export PYTHONPATH=$1:.
python interleaved.py --rounds 3 > interleaved-sentence.json
python interleaved.py --kind paragraph --sizes 1 4 16 64 --documents 256 --rounds 3 > interleaved-paragraph.json
python interleaved.py --kind long --sizes 1 2 --documents 8 --rounds 3 > interleaved-long.json
python interleaved.py --precision fp32 --sizes 1 16 256 --rounds 3 > interleaved-sentence-fp32.json
