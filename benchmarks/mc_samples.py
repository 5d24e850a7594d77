"""How many Monte-Carlo dropout passes T does the graph pruning need?

The study is :mod:`docgraph.tools.mc_samples`; this script is its command line:

    python benchmarks/mc_samples.py RUN_DIR --data-dir DIR --out OUT.json
"""

from docgraph.tools.mc_samples import main

if __name__ == "__main__":
    main()
