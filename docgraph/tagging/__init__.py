"""Tagging with a trained model: the Tagger, evaluation, streams of raw text and their outputs."""
