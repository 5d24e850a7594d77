"""GCDoc's document-graph module inside a model we did not write for it.

A small tagger -- word embeddings, a bidirectional GRU over each sentence, a linear softmax
layer (no CRF, no character encoder, no cross-sentence module) -- gets the paper's
contribution dropped in between the GRU and the output layer: uncertainty pruning,
"same entity type" edge weights and the gated graph layer (:class:`~docgraph.nn.
DocumentGraphModule`), called with what a PyG model has: node features, ``edge_index`` and
the sentence lengths. It trains a few steps on the bundled sample corpus:

    python examples/gru_document_graph.py --steps 30
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence
from torch_geometric.data import Batch

from docgraph.data.registry import load_dataset
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.nn import DocumentGraphModule


class GRUGraphTagger(nn.Module):
    """Embeddings -> BiGRU per sentence -> :class:`DocumentGraphModule` -> softmax tags."""

    def __init__(self, num_words: int, num_labels: int, dim: int = 64) -> None:
        super().__init__()
        self.embed = nn.Embedding(num_words, dim)
        self.gru = nn.GRU(dim, dim // 2, batch_first=True, bidirectional=True)
        self.graph = DocumentGraphModule(dim, token_channels=dim, num_labels=num_labels,
                                         num_samples=4)
        self.out = nn.Linear(dim, num_labels)

    def encode(self, x: Tensor, sent_len: Tensor) -> Tensor:
        """The BiGRU over every sentence of the flat tokens ``x``."""
        lengths = sent_len.tolist()
        packed = pack_sequence(list(x.split(lengths)), enforce_sorted=False)
        padded, _ = pad_packed_sequence(self.gru(packed)[0], batch_first=True)
        return torch.cat([row[:n] for row, n in zip(padded, lengths)])

    def forward(self, data: Batch) -> tuple[Tensor, Tensor]:
        """``(logits [N, C], loss)`` of a batch of document graphs."""
        x = self.embed(data.word)
        h = self.encode(x, data.sent_len)
        types = (data.y > 0).long()  # a coarse "entity or not" type for the edge classifier
        graph = self.graph(h, data.edge_index, x, data.sent_len, data.y, types)
        logits = self.out(graph.x)
        loss = F.cross_entropy(logits, data.y, reduction="sum") + graph.uncertainty_loss \
            + 0.1 * graph.relation_loss
        return logits, loss / data.num_nodes


def train(steps: int = 30, seed: int = 0) -> list[float]:
    """Train on the sample corpus, two documents a step; the loss of every step."""
    torch.manual_seed(seed)
    docs = load_dataset("sample", None, splits=("train",))["train"]
    vocabs = Vocabularies.build(docs)
    graphs = documents_to_graphs(docs, vocabs, GraphConfig())
    model = GRUGraphTagger(len(vocabs.words), len(vocabs.labels))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for step in range(steps):
        batch = Batch.from_data_list([graphs[(2 * step) % len(graphs)],
                                      graphs[(2 * step + 1) % len(graphs)]])
        _, loss = model(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    losses = train(args.steps)
    print(f"loss per token: first 5 steps {sum(losses[:5]) / 5:.3f}, "
          f"last 5 {sum(losses[-5:]) / 5:.3f}")
