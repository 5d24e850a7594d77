"""Tests of :class:`docgraph.nn.UncertaintyTagger`."""

import pytest
import torch
import torch.nn.functional as F

from docgraph.nn import UncertaintyTagger, encoders


def _batch():
    torch.manual_seed(0)
    sent_len = torch.tensor([3, 5, 1, 4])
    x = torch.randn(int(sent_len.sum()), 6)
    return x, sent_len


def test_forward_and_loss():
    x, sent_len = _batch()
    tagger = UncertaintyTagger(6, 5, num_labels=4)
    assert "num_labels=4" in str(tagger)
    logits = tagger(x, sent_len)
    assert logits.shape == (13, 4)
    y = torch.randint(0, 4, (13,))
    torch.testing.assert_close(tagger.loss(logits, y), F.cross_entropy(logits, y))
    torch.testing.assert_close(
        tagger.loss(logits, y, reduction="sum"), F.cross_entropy(logits, y, reduction="sum")
    )
    tagger.loss(logits, y).backward()
    assert all(p.grad is not None for p in tagger.parameters())
    tagger.eval()
    assert torch.equal(tagger(x, sent_len), tagger(x, sent_len))
    with pytest.raises(TypeError):
        UncertaintyTagger(6, 5, 4)  # num_labels is keyword-only


def test_uncertainty_single_batched_call_and_entropy(monkeypatch):
    x, sent_len = _batch()
    tagger = UncertaintyTagger(6, 5, num_labels=4, num_samples=7).eval()
    calls = []
    real = encoders.run_bilstm

    def counting(lstm, x, layout, final_states=False):
        calls.append(layout)
        return real(lstm, x, layout, final_states)

    monkeypatch.setattr(encoders, "run_bilstm", counting)
    torch.manual_seed(3)
    u, probs = tagger.uncertainty(x, sent_len)
    assert len(calls) == 1
    assert calls[0].num_sequences == 7 * 4  # T copies of the 4 sentences
    assert u.shape == (13,) and probs.shape == (13, 4)
    assert not u.requires_grad and not probs.requires_grad
    torch.testing.assert_close(probs.sum(-1), torch.ones(13))
    ref_u = torch.tensor([-sum(p * torch.log(p) for p in row) for row in probs])
    torch.testing.assert_close(u, ref_u)
    assert (u >= 0).all() and (u <= torch.log(torch.tensor(4.0)) + 1e-6).all()

    # Same dropout masks, drawn per pass: reproduce the average by hand.
    torch.manual_seed(3)
    xr = F.dropout(x.repeat(7, 1), 0.5, True)
    h = tagger.encoder(xr, sent_len.repeat(7))
    logits = tagger.lin(F.dropout(h, 0.5, True))
    ref_p = logits.softmax(-1).view(7, 13, 4).mean(0)
    torch.testing.assert_close(probs, ref_p)


def test_dropout_active_in_eval():
    x, sent_len = _batch()
    tagger = UncertaintyTagger(6, 5, num_labels=4).eval()
    u1, _ = tagger.uncertainty(x, sent_len)
    u2, _ = tagger.uncertainty(x, sent_len)
    assert not torch.equal(u1, u2)
    assert not tagger.training


def test_no_dropout_gives_deterministic_single_pass():
    x, sent_len = _batch()
    tagger = UncertaintyTagger(6, 5, num_labels=4, dropout=0.0).eval()
    _, probs = tagger.uncertainty(x, sent_len)
    torch.testing.assert_close(probs, tagger(x, sent_len).softmax(-1))


def test_drop_mask():
    tagger = UncertaintyTagger(6, num_labels=4, threshold=0.5)
    u = torch.tensor([0.1, 0.5, 0.51, 1.2])
    assert tagger.drop_mask(u).tolist() == [False, False, True, True]


def test_output_mc_dropout_runs_the_bilstm_once(monkeypatch):
    x, sent_len = _batch()
    tagger = UncertaintyTagger(6, 5, num_labels=4, num_samples=7, mc_dropout="output").eval()
    assert "mc_dropout=output" in str(tagger)
    calls = []
    real = encoders.run_bilstm

    def counting(lstm, x, layout, final_states=False):
        calls.append(layout)
        return real(lstm, x, layout, final_states)

    monkeypatch.setattr(encoders, "run_bilstm", counting)
    torch.manual_seed(3)
    u, probs = tagger.uncertainty(x, sent_len)
    assert len(calls) == 1
    assert calls[0].num_sequences == 4  # the 4 sentences, once
    assert u.shape == (13,) and probs.shape == (13, 4)
    torch.testing.assert_close(probs.sum(-1), torch.ones(13))
    torch.testing.assert_close(u, -torch.special.xlogy(probs, probs).sum(-1))

    # One input mask and BiLSTM pass, then T output masks: reproduce by hand.
    torch.manual_seed(3)
    h = tagger.encoder(F.dropout(x, 0.5, True), sent_len)
    logits = tagger.lin(F.dropout(h.repeat(7, 1), 0.5, True))
    ref_p = logits.softmax(-1).view(7, 13, 4).mean(0)
    torch.testing.assert_close(probs, ref_p)

    # The passes differ (the output masks are re-sampled), and training is unchanged.
    assert not torch.allclose(logits[:13], logits[13:26])
    tagger.train()
    tagger.mc_dropout = "full"
    torch.manual_seed(5)
    full = tagger(x, sent_len)
    tagger.mc_dropout = "output"
    torch.manual_seed(5)
    assert torch.equal(tagger(x, sent_len), full)


def test_output_mc_dropout_without_dropout_and_errors():
    x, sent_len = _batch()
    tagger = UncertaintyTagger(6, 5, num_labels=4, dropout=0.0, mc_dropout="output").eval()
    _, probs = tagger.uncertainty(x, sent_len)
    torch.testing.assert_close(probs, tagger(x, sent_len).softmax(-1))
    with pytest.raises(ValueError):
        UncertaintyTagger(6, 5, num_labels=4, mc_dropout="input")
