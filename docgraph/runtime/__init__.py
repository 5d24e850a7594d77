"""The process a run lives in: the machine, progress reporting, deterministic kernels,
process lifetimes (workers that end with their parent, SIGTERM taken as Ctrl-C) and files
written whole (atomic writes)."""
