"""Batches of document graphs: token-budget sampling, host-side plans, collation and prefetching."""
