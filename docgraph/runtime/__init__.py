"""The process a run lives in: the machine, progress reporting, deterministic kernels, and
process lifetimes (workers that end with their parent, SIGTERM taken as Ctrl-C)."""
