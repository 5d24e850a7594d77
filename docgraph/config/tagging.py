"""Defaults of tagging with a trained model (torch-free)."""

from __future__ import annotations

from docgraph.config.train import TrainConfig

__all__ = ["DEFAULT_BATCH_TOKENS", "DEFAULT_MAX_DOC_TOKENS", "DOCUMENT_SPLITS"]

DEFAULT_BATCH_TOKENS: int = TrainConfig().eval_batch_tokens
"""Token budget of a tagging batch when none is given: the declared default of
``[train] eval_batch_tokens``, by which a run evaluates."""

DEFAULT_MAX_DOC_TOKENS = 2000
"""``predict.py --max-doc-tokens`` for a model trained without a limit: the OntoNotes preset's
(longer than every CoNLL-2003 document, 1,335 tokens at most, which are so tagged whole)."""

DOCUMENT_SPLITS = ("file", "paragraphs", "lines")
"""The values of ``predict.py --documents``: what a document of raw text is."""
