#!/bin/sh
# The probes of tagging-speed/, each a fresh process, one thread; BEFORE and AFTER are trees
# (a directory holding a docgraph package), run from the repository root.
BEFORE=$1; AFTER=$2; MASKS=$3; D=benchmarks/results/measurements/tagging-speed/probes
export DOCGRAPH_DATA_DIR=../shared/data OMP_NUM_THREADS=1 ONEDNN_PRIMITIVE_CACHE_CAPACITY=64
PYTHONPATH=$BEFORE python $D/op_profile.py ontonotes > $D/op_profile.log 2>&1
PYTHONPATH=$BEFORE python $D/primitive_cache.py ontonotes > $D/primitive_cache.log 2>&1
PYTHONPATH=$AFTER python $D/grid_shapes.py ontonotes    > $D/grid_shapes.log 2>&1
python $D/mask_micro.py $BEFORE $MASKS > $D/mask_micro.log 2>&1
