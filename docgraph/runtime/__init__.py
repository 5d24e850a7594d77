"""The process a run lives in: the machine, progress reporting, deterministic kernels."""
