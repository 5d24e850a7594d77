"""Training-time masking of token features (docgraph/graph/masking.py) on a hand-made graph."""

import torch

from docgraph.graph.build import DocumentGraph
from docgraph.graph.masking import mask_tokens, mention_mask, word_dropout_mask


def _graph() -> DocumentGraph:
    # tokens 0..5: "Quenby(PER) said Quenby(PER) and Quenby(PER) ." ; edges between the repeats
    repeats = [0, 2, 4]
    edges = [(j, i) for i in repeats for j in repeats if i != j]
    return DocumentGraph(word=torch.tensor([10, 11, 10, 12, 10, 13]),
                         chars=torch.arange(1, 25).view(6, 4),
                         char_len=torch.tensor([4, 3, 4, 2, 4, 1]),
                         y=torch.tensor([4, 0, 4, 0, 4, 0]),
                         edge_index=torch.tensor(edges).t(), num_nodes=6)


def test_mention_mask_draws_only_later_repeats_of_mentions():
    graph = _graph()
    always = mention_mask(graph, 1.0, torch.Generator().manual_seed(0))
    assert always.tolist() == [False, False, True, False, True, False]
    assert not mention_mask(graph, 0.0, torch.Generator().manual_seed(0)).any()
    half = torch.stack([mention_mask(graph, 0.5, torch.Generator().manual_seed(s))
                        for s in range(200)]).float().mean(0)
    assert 0.35 < half[2] < 0.65 and half[0] == 0


def test_word_dropout_rate():
    graph = _graph()
    drawn = torch.stack([word_dropout_mask(graph, 0.3, torch.Generator().manual_seed(s))
                         for s in range(300)]).float().mean()
    assert 0.25 < drawn < 0.35


def test_mask_tokens_replaces_words_and_kept_characters_and_leaves_the_graph():
    graph = _graph()
    words = torch.tensor([False, True, False, False, True, False])
    chars = torch.tensor([False, False, False, True, True, False])
    masked = mask_tokens(graph, words, chars, unknown_word=1, unknown_char=99)
    assert masked.word.tolist() == [10, 1, 10, 12, 1, 13]
    assert masked.chars[3].tolist() == [99, 99, 15, 16]  # two characters kept: both masked
    assert masked.chars[4].tolist() == [99, 99, 99, 99]
    assert torch.equal(masked.chars[:3], graph.chars[:3])
    assert masked.edge_index is graph.edge_index and torch.equal(masked.y, graph.y)
    assert graph.word.tolist() == [10, 11, 10, 12, 10, 13]  # the original is untouched
