"""Neural network building blocks of GCDoc (tensors and graphs only)."""

from docgraph.nn.conv import DocGraphConv
from docgraph.nn.crf import CRFDecoder
from docgraph.nn.cross_sentence import CrossSentenceEncoder
from docgraph.nn.document_graph import (
    DocumentGraphModule,
    DocumentGraphOutput,
    DocumentGraphPlan,
)
from docgraph.nn.encoders import CharEncoder, SequenceBiLSTM, pad_tokens, unpad_tokens
from docgraph.nn.relation import RelationClassifier, relation_loss
from docgraph.nn.uncertainty import MonteCarloKeys, UncertaintyTagger

__all__ = [
    "CRFDecoder",
    "CharEncoder",
    "CrossSentenceEncoder",
    "DocGraphConv",
    "DocumentGraphModule",
    "DocumentGraphOutput",
    "DocumentGraphPlan",
    "MonteCarloKeys",
    "RelationClassifier",
    "SequenceBiLSTM",
    "UncertaintyTagger",
    "pad_tokens",
    "relation_loss",
    "unpad_tokens",
]
