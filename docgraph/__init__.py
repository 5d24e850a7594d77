"""docgraph: document-level named entity recognition with document graphs (GCDoc)."""

__version__ = "0.1.0"
