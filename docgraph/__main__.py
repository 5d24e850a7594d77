"""``python -m docgraph <command>``: the ``docgraph`` command (:mod:`docgraph.cli.console`)."""

import sys

from docgraph.cli.console import main

if __name__ == "__main__":
    sys.exit(main())
