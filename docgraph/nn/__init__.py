"""Neural network building blocks of GCDoc (tensors and graphs only)."""
