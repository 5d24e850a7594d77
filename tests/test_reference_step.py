"""Today's model code against the reference computed before the lean training steps.

``tests/data/reference_step.pt`` holds what the model code of the commit before issue 30's
rewrite (per-bucket LSTM and CRF loops, pytorch-crf's own forward algorithm) computed on one
batch of the sample corpus in float64: losses, every gradient, the Monte-Carlo uncertainties,
the edge weights and the Viterbi tags, for GCDoc, the BiLSTM-CRF and GCDoc with constrained
decoding. The seeds are the same and the dropout and Monte-Carlo masks are drawn in the same
order, so the masks are equal and any difference is a changed computation.

The file keys the gradients by the parameter names of the code that wrote it
(``grad.uncertainty.lin.weight``); the names of today's parameters are looked up with
:func:`docgraph.model.upgrade_state_dict_key` (``grad.document_graph.uncertainty.lin.weight``).
"""

from __future__ import annotations

import pytest
import torch
from make_reference_step import CONFIGS, OUT, compute, reference_batch

from docgraph.model import upgrade_state_dict_key


def _todays_name(key: str) -> str:
    """The key of today's :func:`compute` for the reference file's ``key``."""
    if key.startswith("grad."):
        return "grad." + upgrade_state_dict_key(key[len("grad."):])
    return key


@pytest.fixture(scope="module")
def reference():
    saved = torch.load(OUT, weights_only=True)
    return {name: {_todays_name(k): v for k, v in values.items()}
            for name, values in saved.items()}


@pytest.fixture(scope="module")
def batch_and_vocabs():
    return reference_batch()


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_same_losses_gradients_and_tags_as_the_reference(name, reference, batch_and_vocabs):
    vocabs, batch = batch_and_vocabs
    expected = reference[name]
    got = compute(name, vocabs, batch)
    assert sorted(got) == sorted(expected)
    assert torch.equal(got["tags"], expected["tags"])
    for key, value in expected.items():
        if key == "tags":
            continue
        torch.testing.assert_close(got[key], value, rtol=1e-5, atol=1e-5, msg=key)
