"""Write ``tests/data/reference_step.pt``: what the model code computed on fixed batches.

Run once with the code whose behaviour is the reference (febcc04, the commit before the lean
training steps of 80f2580); ``tests/test_reference_step.py`` checks that today's code computes
the same losses, gradients, uncertainties, edge weights and tags, with the same dropout and
Monte-Carlo masks (the same seed, and the masks drawn in the same order). Float64, so that the
test's tolerance (rtol 1e-10, atol 1e-13) is float64 rounding and any changed arithmetic
exceeds it::

    python tests/make_reference_step.py

``--fast`` writes ``tests/data/reference_step_fast.pt`` instead: the configurations of
:data:`FAST_CONFIGS` (``train.py --fast``: per-sentence windows, output-only Monte-Carlo
dropout), computed by the code before their gathers and padding were rewritten (commit
9df56ff: ``pad_tokens``, ``run_packed_lstm``, ``window_sums``)::

    python tests/make_reference_step.py --fast
"""

from __future__ import annotations

import sys
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
#: name -> model switches of ``train.py --fast`` (and ``--window-encoding per_sentence``).
FAST_CONFIGS = {
    "fast": {"window_encoding": "per_sentence", "mc_dropout": "output", "threshold": 2.482},
    "per_sentence": {"window_encoding": "per_sentence", "threshold": 2.482},
}
FAST_OUT = Path(__file__).parent / "data" / "reference_step_fast.pt"
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
    model = build_model(GCDocConfig(**SMALL, **{**CONFIGS, **FAST_CONFIGS}[name]), vocabs).double()
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


def main(fast: bool = False) -> None:
    vocabs, batch = reference_batch()
    configs, out = (FAST_CONFIGS, FAST_OUT) if fast else (CONFIGS, OUT)
    reference = {name: compute(name, vocabs, batch) for name in configs}
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(reference, out)
    print(f"wrote {out}: " + ", ".join(f"{k} ({len(v)} tensors)" for k, v in reference.items()))


if __name__ == "__main__":
    main(fast="--fast" in sys.argv[1:])
