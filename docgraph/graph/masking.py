"""Training-time masking of token features, with the document graph left as it was built.

Two corpus-side regularisers for names a tagger has never seen, both applied to a built
:class:`~docgraph.graph.build.DocumentGraph` so that its recurrence edges (built from the words)
survive:

* **word dropout** (Lample et al., NAACL 2016): a token's word id becomes the unknown word with
  probability ``p``; its characters stay, so the tagger learns to read a word it has no row for
  from its characters and context;
* **mention masking**: a token of an entity mention that repeats an earlier token of the
  document loses its word *and* its characters (each character becomes the unknown character)
  with probability ``p``. The first occurrence of a name is never masked, so a masked mention
  keeps an unmasked repeat whose evidence only the document graph can bring: the graph learns to
  carry a type to the mentions whose own words say nothing.
"""

from __future__ import annotations

import copy

import torch

from docgraph.graph.build import DocumentGraph

__all__ = ["mask_tokens", "mention_mask", "word_dropout_mask"]


def word_dropout_mask(graph: DocumentGraph, p: float, generator: torch.Generator) -> torch.Tensor:
    """``[N]`` bool: the tokens whose word id is dropped, each with probability ``p``."""
    return torch.rand(graph.num_nodes, generator=generator) < p


def mention_mask(graph: DocumentGraph, p: float, generator: torch.Generator,
                 outside: int = 0) -> torch.Tensor:
    """``[N]`` bool: tokens of entity mentions (label id not ``outside``) that receive a
    recurrence edge from an earlier token of the document, each drawn with probability ``p``.

    A token without such an edge (the first occurrence of its word, or a word that does not
    recur) is never drawn.
    """
    source, target = graph.edge_index
    repeats = torch.zeros(graph.num_nodes, dtype=torch.bool)
    repeats[target[source < target]] = True
    draw = torch.rand(graph.num_nodes, generator=generator) < p
    return draw & repeats & (graph.y != outside)


def mask_tokens(graph: DocumentGraph, words: torch.Tensor, chars: torch.Tensor,
                unknown_word: int, unknown_char: int) -> DocumentGraph:
    """A copy of ``graph`` whose tokens in ``words`` have the unknown word id and whose tokens in
    ``chars`` have every kept character replaced by the unknown character (lengths kept).

    Edges, labels and every other attribute are shared with ``graph``.
    """
    masked = copy.copy(graph)  # PyG copies the attribute store, not the tensors
    if bool(words.any()):
        masked.word = graph.word.masked_fill(words, unknown_word)
    if bool(chars.any()):
        kept = torch.arange(graph.chars.size(1)) < graph.char_len.unsqueeze(1)
        masked.chars = graph.chars.masked_fill(chars.unsqueeze(1) & kept, unknown_char)
    return masked
