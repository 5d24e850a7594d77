"""docgraph inside other libraries (spaCy)."""
