"""Packed ``--lm`` windows against one window per sentence: work, time and feature agreement.

The study is :mod:`docgraph.tools.lm_pack`; this script is its command line:

    python benchmarks/lm_pack.py --dataset conll03 --data-dir ../shared/data/conll2003 \\
        --split dev --lm MODEL_DIR --threads 1 --out benchmarks/results/measurements/lm-pack/X.json
"""

from docgraph.tools.lm_pack import main

if __name__ == "__main__":
    main()
