"""The paper's numbers (Wang et al., GCDoc), as printed: the overall test scores, the per-type
recall, the ablation Tables V, VI and VII, the points of Fig. 4 given in numbers and GCDoc
with BERT-large features. Data only: :mod:`~docgraph_dev.report.tables` puts them beside
ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

BASELINE_ROW = "BiLSTM-CRF"
GCDOC_ROW = "GCDoc"

PAPER_OVERALL: Mapping[str, Mapping[str, tuple[float, float, float]]] = MappingProxyType(
    {
        "conll03": MappingProxyType(
            {
                BASELINE_ROW: (90.96, 91.07, 91.01),
                GCDOC_ROW: (92.12, 92.33, 92.22),
            }
        ),
        "ontonotes": MappingProxyType(
            {
                BASELINE_ROW: (87.58, 87.70, 87.64),
                GCDOC_ROW: (87.90, 88.74, 88.32),
            }
        ),
    }
)
"""Paper test precision / recall / F1 per data set and model."""

PAPER_RECALL: Mapping[str, Mapping[str, Mapping[str, float]]] = MappingProxyType(
    {
        "conll03": MappingProxyType(
            {
                BASELINE_ROW: MappingProxyType(
                    {"PER": 95.18, "LOC": 94.12, "ORG": 88.44, "MISC": 80.91}
                ),
                GCDOC_ROW: MappingProxyType(
                    {"PER": 97.34, "LOC": 93.65, "ORG": 90.79, "MISC": 81.91}
                ),
            }
        ),
    }
)
"""Paper per-type test recall (CoNLL-2003 only)."""

CONLL_TYPES = ("PER", "LOC", "ORG", "MISC")
PAPER_EMBEDDINGS = "300d GloVe"


@dataclass(frozen=True)
class PaperTable:
    """One of the paper's ablation tables: rows are model variants, with the paper's F1."""

    key: str
    title: str
    rows: tuple[tuple[str, str], ...]
    """``(variant, row label)`` in the paper's order."""
    paper: Mapping[str, Mapping[str, tuple[float, float]]]
    """``dataset -> variant -> (F1, std)`` as printed in the paper."""


PAPER_TABLES: tuple[PaperTable, ...] = (
    PaperTable(
        "table4",
        "Table V: ablation of the overall architecture",
        (("baseline", "base model (BiLSTM-CRF)"),
         ("cross_only", "+ Cross-Sentence Module only"),
         ("graph_only", "+ Document Graph Module only"),
         ("full", "+ ALL (GCDoc)")),
        MappingProxyType({
            "conll03": MappingProxyType({"baseline": (91.01, 0.21), "cross_only": (91.53, 0.09),
                                         "graph_only": (91.86, 0.02), "full": (92.22, 0.02)}),
            "ontonotes": MappingProxyType({"baseline": (87.64, 0.23),
                                           "cross_only": (87.91, 0.21),
                                           "graph_only": (88.20, 0.11),
                                           "full": (88.32, 0.04)}),
        }),
    ),
    PaperTable(
        "table5",
        "Table VI: strategies of the document graph module",
        (("cross_only", "Base (cross-sentence module only)"),
         ("plain_graph", "+ Doc Graph (plain mean)"),
         ("pruning", "+ Pruning"),
         ("full", "+ Edge Weights (GCDoc)")),
        MappingProxyType({
            "conll03": MappingProxyType({"cross_only": (91.53, 0.09),
                                         "plain_graph": (92.00, 0.07),
                                         "pruning": (92.10, 0.03), "full": (92.22, 0.02)}),
        }),
    ),
    PaperTable(
        "table6",
        "Table VII: context of the cross-sentence module",
        (("current_only", "current sentence only (neither previous nor next)"),
         ("previous_only", "previous sentences only"),
         ("next_only", "next sentences only"),
         ("full", "previous and next (GCDoc)")),
        MappingProxyType({
            "conll03": MappingProxyType({"current_only": (91.92, 0.14),
                                         "previous_only": (92.04, 0.13),
                                         "next_only": (91.96, 0.18), "full": (92.22, 0.02)}),
        }),
    ),
)
"""The paper's Tables V, VI and VII (test F1 ± std; Table V on both corpora, VI and VII
CoNLL-2003)."""

WINDOW_VARIANTS: tuple[tuple[int, str], ...] = (
    (1, "window-1"), (2, "full"), (3, "window-3"), (4, "window-4"))
"""Fig. 4: window size k -> model variant (k = 2 is the full model)."""

PAPER_WINDOW: Mapping[int, tuple[float, float]] = MappingProxyType({2: (92.22, 0.02)})
"""Fig. 4 points the paper states in numbers: only k = 2 (its GCDoc result); the text says
k = 2 is best and larger k drops slightly, but the figure's other values are not given."""


PAPER_WITH_BERT: Mapping[str, tuple[float, float]] = MappingProxyType(
    {"conll03": (93.40, 0.02), "ontonotes": (90.49, 0.09)})
"""GCDoc + BERT-large features, test F1 ± std (Wang et al., Tables II and III); the paper has
no BiLSTM-CRF + BERT row."""
