"""Training: the loop, runs of one or several seeds, data-parallel processes."""
