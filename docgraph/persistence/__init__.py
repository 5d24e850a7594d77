"""What a run leaves on disk: atomic writes, checkpoints, model directories."""
