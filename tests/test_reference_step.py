"""Today's model code against the reference computed before the lean training steps.

``tests/data/reference_step.pt`` holds what the model code of febcc04, the commit before the
lean-step rewrite of 80f2580 (per-bucket LSTM and CRF loops, pytorch-crf's own forward
algorithm) computed on one batch of the sample corpus in float64: losses, every gradient, the
Monte-Carlo uncertainties, the edge weights and the Viterbi tags, for GCDoc, the BiLSTM-CRF and
GCDoc with constrained decoding. The seeds are the same and the dropout and Monte-Carlo masks
are drawn in the same order, so the masks are equal and any difference is a changed
computation.

The file keys the gradients by the parameter names of the code that wrote it
(``grad.uncertainty.lin.weight``); the names of today's parameters are looked up with
:func:`docgraph.model.upgrade_state_dict_key` (``grad.document_graph.uncertainty.lin.weight``).

Tolerance: float64 rounding, ``|got - expected| <= ATOL + RTOL * |expected|`` element by element
with ``RTOL = 1e-10`` and ``ATOL = 1e-13`` for every quantity. Measured (CPU, torch 2.13): the
largest absolute difference is 1.1e-13 for the baseline and 4.5e-13 for GCDoc and constrained
decoding (``crf_loss`` and ``uncertainty_loss``, values ~3e3: 1.6e-16 relative); the largest
difference relative to its quantity's largest entry 9.0e-16 (baseline) and 5.9e-14 (GCDoc,
``grad.cross_sentence.lin_att_current.weight``); the largest element-wise relative difference
1.8e-12 (baseline) and 1.5e-11 (GCDoc, an entry of ``grad.char_encoder.embedding.weight`` of
1.1e-5). The worst element uses 0.6 % of the tolerance. (With the cross-sentence mean weights
stored as float32, as before, GCDoc's gradients differed by 4.7e-7: 2e-8 relative, which
``RTOL = 1e-10`` refuses.)

``tests/data/reference_step_fast.pt`` holds the same for ``train.py --fast`` and
``--window-encoding per_sentence`` (``FAST_CONFIGS``), computed by the code before their
padding, LSTM calls and window sums became host-planned gathers (commit 9df56ff). Measured
against it (CPU, torch 2.13), same tolerance: the largest absolute difference 2.8e-14, the
largest relative to its quantity's largest entry 5.4e-14
(``grad.cross_sentence.lin_att_current.weight``); the worst element uses 0.11 % of the
tolerance; the tags are equal.
"""

from __future__ import annotations

import pytest
import torch
from make_reference_step import CONFIGS, FAST_CONFIGS, FAST_OUT, OUT, compute, reference_batch

from docgraph.model import upgrade_state_dict_key

#: Float64 rounding (see the module's docstring for the measured differences).
RTOL, ATOL = 1e-10, 1e-13


def _todays_name(key: str) -> str:
    """The key of today's :func:`compute` for the reference file's ``key``."""
    if key.startswith("grad."):
        return "grad." + upgrade_state_dict_key(key[len("grad."):])
    return key


@pytest.fixture(scope="module")
def reference():
    saved = {**torch.load(OUT, weights_only=True), **torch.load(FAST_OUT, weights_only=True)}
    return {name: {_todays_name(k): v for k, v in values.items()}
            for name, values in saved.items()}


@pytest.fixture(scope="module")
def batch_and_vocabs():
    return reference_batch()


@pytest.mark.parametrize("name", sorted(CONFIGS) + sorted(FAST_CONFIGS))
def test_same_losses_gradients_and_tags_as_the_reference(name, reference, batch_and_vocabs):
    vocabs, batch = batch_and_vocabs
    expected = reference[name]
    got = compute(name, vocabs, batch)
    assert sorted(got) == sorted(expected)
    assert torch.equal(got["tags"], expected["tags"])
    for key, value in expected.items():
        if key == "tags":
            continue
        torch.testing.assert_close(got[key], value, rtol=RTOL, atol=ATOL, msg=key)
