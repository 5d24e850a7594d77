"""Write ``tests/data/reference_step.pt``: what the model code computed on fixed batches.

Run once with the code whose behaviour is the reference (febcc04, the commit before the lean
training steps of 80f2580); ``tests/test_reference_step.py`` checks that today's code computes
the same losses, gradients, uncertainties, edge weights and tags, with the same dropout and
Monte-Carlo masks (the same seed, and the masks drawn in the same order). Float64, so that the
test's tolerance (rtol 1e-10, atol 1e-13) is float64 rounding and any changed arithmetic
exceeds it::

    python tests/make_reference_step.py
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch_geometric.data import Batch

from docgraph.data.registry import load_dataset
from docgraph.graph import GraphConfig, document_to_graph
from docgraph.graph.splits import build_vocabularies
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model

OUT = Path(__file__).parent / "data" / "reference_step.pt"
SMALL = {"hidden": 12, "char_hidden": 6, "sent_dim": 10, "uncertainty_hidden": 6,
         "num_samples": 3, "word_dim": 8, "char_dim": 5}
#: name -> model switches; "gcdoc" is the full model at a threshold that prunes some tokens.
CONFIGS = {
    "gcdoc": {"threshold": 2.482},
    "baseline": {"cross_sentence": False, "graph": False},
    "constrained": {"constrained_decoding": True, "threshold": 2.482},
}
SEED = 7


def reference_batch() -> Batch:
    """Eight documents of the sample corpus's train split as one batch."""
    splits = load_dataset("sample")
    vocabs, _, _ = build_vocabularies(splits, "none")
    # the neighbours sampled as the reference's code did: one generator for the whole list
    # (documents_to_graphs now seeds one per document)
    generator = torch.Generator().manual_seed(3)
    graphs = [document_to_graph(doc, vocabs, GraphConfig(seed=3), generator)
              for doc in splits["train"][:8]]
    return vocabs, Batch.from_data_list(graphs)


def compute(name: str, vocabs, batch: Batch) -> dict[str, torch.Tensor]:
    """Losses, gradients and tags of configuration ``name`` on ``batch`` (seeded)."""
    torch.manual_seed(SEED)
    model = build_model(GCDocConfig(**SMALL, **CONFIGS[name]), vocabs).double()
    model.train()
    torch.manual_seed(SEED + 1)
    out = model(batch)
    out.loss.backward()
    result = {"loss": out.loss.detach(), "crf_loss": out.crf_loss.detach(),
              "emissions": out.emissions.detach()}
    for key in ("relation_loss", "uncertainty_loss", "uncertainty", "edge_weight"):
        value = getattr(out, key)
        if value is not None:
            result[key] = value.detach()
    for pname, param in model.named_parameters():
        if param.grad is not None:
            result[f"grad.{pname}"] = param.grad.detach().clone()
    torch.manual_seed(SEED + 2)
    # the reference drew the tagging masks from the global stream (mc_seed=None today); the
    # per-document masks of today's default are tested in tests/test_batch_independence.py
    result["tags"] = model.predict(batch, mc_seed=None)
    return result


def main() -> None:
    vocabs, batch = reference_batch()
    reference = {name: compute(name, vocabs, batch) for name in CONFIGS}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    torch.save(reference, OUT)
    print(f"wrote {OUT}: " + ", ".join(f"{k} ({len(v)} tensors)" for k, v in reference.items()))


if __name__ == "__main__":
    main()
