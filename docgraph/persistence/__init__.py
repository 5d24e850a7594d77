"""What a run leaves on disk: checkpoints, model directories, run locks."""
