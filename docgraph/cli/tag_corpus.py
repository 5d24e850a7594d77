import sys

from docgraph.integrations.tag_corpus import main

if __name__ == "__main__":
    sys.exit(main())
