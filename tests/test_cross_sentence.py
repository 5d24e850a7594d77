"""Tests of :class:`docgraph.nn.CrossSentenceEncoder` against a per-sentence loop."""

import numpy as np
import pytest
import torch

from docgraph.nn import CrossSentenceEncoder
from docgraph.nn.cross_sentence import sentence_window_plan, window_rows, window_sums
from docgraph.nn.layout import SequenceLayout


def _batch():
    torch.manual_seed(0)
    # Documents with 1, 3 and 5 sentences.
    sent_len = torch.tensor([4, 2, 5, 3, 1, 6, 2, 3, 4])
    sentence_doc = torch.tensor([0, 1, 1, 1, 2, 2, 2, 2, 2])
    x = torch.randn(int(sent_len.sum()), 7)
    return x, sent_len, sentence_doc


def _pool(lstm, tokens):
    return lstm(tokens.unsqueeze(0))[0][0].mean(0)


def _reference(enc: CrossSentenceEncoder, x, sent_len, sentence_doc):
    """Loop over sentences, concatenating the window tokens by hand."""
    sents = list(x.split(sent_len.tolist()))
    docs = sentence_doc.tolist()
    out, attn, lam = [], [], []
    for s in range(len(sents)):
        s_c = _pool(enc.enc_current, sents[s])
        prev = [q for q in range(s - enc.window, s) if q >= 0 and docs[q] == docs[s]]
        nxt = [q for q in range(s + 1, s + 1 + enc.window) if q < len(sents) and docs[q] == docs[s]]
        scores, ctx = [], []
        if enc.use_previous and prev:
            s_p = _pool(enc.enc_previous, torch.cat([sents[q] for q in prev]))
            scores.append(enc.score(s_c[None], s_p[None])[0])
            ctx.append(s_p)
        if enc.use_next and nxt:
            s_f = _pool(enc.enc_next, torch.cat([sents[q] for q in nxt]))
            scores.append(enc.score(s_c[None], s_f[None])[0])
            ctx.append(s_f)
        if not ctx:
            out.append(s_c)
            continue
        a = torch.softmax(torch.stack(scores), 0)
        s_tilde = sum(w * c for w, c in zip(a, ctx))
        g = torch.sigmoid(
            enc.lin_gate_out.weight
            @ torch.tanh(enc.lin_gate_context.weight @ s_tilde + enc.lin_gate_current.weight @ s_c)
        )
        out.append(g * s_c + (1 - g) * s_tilde)
        attn.append(a)
        lam.append(g)
    return torch.stack(out)


@pytest.mark.parametrize("window", [1, 2])
@pytest.mark.parametrize("sides", [(True, True), (True, False), (False, True)])
def test_matches_reference(window, sides):
    x, sent_len, sentence_doc = _batch()
    enc = CrossSentenceEncoder(
        7, sent_channels=8, window=window, use_previous=sides[0], use_next=sides[1]
    ).eval()
    out = enc(x, sent_len, sentence_doc)
    assert out.shape == (9, 8)
    torch.testing.assert_close(out, _reference(enc, x, sent_len, sentence_doc))


def test_masking_and_single_sentence():
    x, sent_len, sentence_doc = _batch()
    enc = CrossSentenceEncoder(7, sent_channels=8, window=2).eval()
    with torch.no_grad():
        out, attn, lam = enc(x, sent_len, sentence_doc, return_attention=True)
        s_c = enc.enc_current(x[:4].unsqueeze(0))[0][0].mean(0)
    assert attn.shape == (9, 2) and lam.shape == (9, 8)
    # One-sentence document: s' = s_c, no attention, lambda = 1.
    torch.testing.assert_close(out[0], s_c)
    assert attn[0].tolist() == [0.0, 0.0] and torch.all(lam[0] == 1)
    # First sentence of a document: only the future side.
    for s in (1, 4):
        assert attn[s, 0] == 0 and attn[s, 1] == pytest.approx(1.0)
    # Last sentence of a document: only the past side.
    for s in (3, 8):
        assert attn[s, 1] == 0 and attn[s, 0] == pytest.approx(1.0)
    # Middle sentences: proper distribution over both sides.
    for s in (2, 5, 6, 7):
        assert (attn[s] > 0).all()
        assert attn[s].sum() == pytest.approx(1.0)


def test_window_tokens_do_not_cross_documents():
    """Changing another document's tokens must not change a document's output."""
    x, sent_len, sentence_doc = _batch()
    enc = CrossSentenceEncoder(7, sent_channels=8, window=2).eval()
    out = enc(x, sent_len, sentence_doc)
    x2 = x.clone()
    x2[:4] += 1.0  # document 0
    x2[-15:] -= 1.0  # document 2
    out2 = enc(x2, sent_len, sentence_doc)
    torch.testing.assert_close(out[1:4], out2[1:4])


def test_gradients_and_errors():
    x, sent_len, sentence_doc = _batch()
    enc = CrossSentenceEncoder(7, sent_channels=8, window=2, activation="relu", dropout=0.1)
    assert "window=2" in str(enc) and "activation=relu" in str(enc)
    x = x.requires_grad_()
    enc(x, sent_len, sentence_doc).sum().backward()
    for name, p in enc.named_parameters():
        assert p.grad is not None, name
    assert x.grad is not None
    with pytest.raises(ValueError):
        CrossSentenceEncoder(7, window=0)
    with pytest.raises(ValueError):
        CrossSentenceEncoder(7, sent_channels=7)


def test_current_sentence_only_is_the_mean_pooled_sentence():
    # Table VII, first row: neither previous nor next sentences, s' = s_c.
    x, sent_len, sentence_doc = _batch()
    enc = CrossSentenceEncoder(7, sent_channels=8, window=2, use_previous=False, use_next=False)
    enc.eval()
    assert enc.enc_previous is None and enc.enc_next is None
    s_prime, attn, lam = enc(x, sent_len, sentence_doc, return_attention=True)
    expected = torch.stack([enc.enc_current(s.unsqueeze(0))[0][0].mean(0)
                            for s in x.split(sent_len.tolist())])
    torch.testing.assert_close(s_prime, expected, rtol=1e-5, atol=1e-6)
    assert torch.all(attn == 0) and torch.all(lam == 1)
    x = x.clone().requires_grad_()
    enc.train()
    enc(x, sent_len, sentence_doc).sum().backward()
    # every parameter stays in the graph (DDP needs no unused parameters)
    assert all(p.grad is not None for p in enc.parameters())


def _per_sentence_reference(enc: CrossSentenceEncoder, x, sent_len, sentence_doc):
    """Loop over sentences: every sentence read alone, windows pooled over their tokens."""
    sents = list(x.split(sent_len.tolist()))
    docs = sentence_doc.tolist()
    zero = x.new_zeros(enc.sent_channels)

    def states(lstm, q):
        return lstm(sents[q].unsqueeze(0))[0][0]  # [len, d_s]

    def window_mean(lstm, qs):
        if lstm is None or not qs:
            return zero, False
        return torch.cat([states(lstm, q) for q in qs]).mean(0), True

    out, attn, lam = [], [], []
    for s in range(len(sents)):
        s_c = _pool(enc.enc_current, sents[s])
        prev = [q for q in range(s - enc.window, s) if q >= 0 and docs[q] == docs[s]]
        nxt = [q for q in range(s + 1, s + 1 + enc.window) if q < len(sents) and docs[q] == docs[s]]
        s_p, has_p = window_mean(enc.enc_previous, prev)
        s_f, has_f = window_mean(enc.enc_next, nxt)
        o, a, g = enc.fuse(s_c[None], s_p[None], s_f[None], torch.tensor([has_p]),
                           torch.tensor([has_f]))
        out.append(o[0])
        attn.append(a[0])
        lam.append(g[0])
    return torch.stack(out), torch.stack(attn), torch.stack(lam)


@pytest.mark.parametrize("window", [1, 2, 3])
@pytest.mark.parametrize("sides", [(True, True), (True, False), (False, True)])
def test_per_sentence_matches_reference(window, sides):
    x, sent_len, sentence_doc = _batch()
    enc = CrossSentenceEncoder(
        7, sent_channels=8, window=window, use_previous=sides[0], use_next=sides[1],
        window_encoding="per_sentence",
    ).eval()
    assert "window_encoding=per_sentence" in str(enc)
    out, attn, lam = enc(x, sent_len, sentence_doc, return_attention=True)
    ref_out, ref_attn, ref_lam = _per_sentence_reference(enc, x, sent_len, sentence_doc)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(attn, ref_attn)
    torch.testing.assert_close(lam, ref_lam)
    # The current-sentence side and the masking are those of "concat".
    enc.window_encoding = "concat"
    _, attn_concat, _ = enc(x, sent_len, sentence_doc, return_attention=True)
    assert torch.equal(attn > 0, attn_concat > 0)


def test_per_sentence_single_sentence_windows_equal_concat():
    """With k = 1 each window is one sentence: both encodings coincide."""
    x, sent_len, sentence_doc = _batch()
    enc = CrossSentenceEncoder(7, sent_channels=8, window=1).eval()
    out = enc(x, sent_len, sentence_doc)
    enc.window_encoding = "per_sentence"
    torch.testing.assert_close(enc(x, sent_len, sentence_doc), out)


def test_per_sentence_gradients_and_errors():
    x, sent_len, sentence_doc = _batch()
    enc = CrossSentenceEncoder(7, sent_channels=8, window=2, dropout=0.1,
                               window_encoding="per_sentence")
    x = x.requires_grad_()
    enc(x, sent_len, sentence_doc).sum().backward()
    for name, p in enc.named_parameters():
        assert p.grad is not None, name
    assert x.grad is not None
    with pytest.raises(ValueError):
        CrossSentenceEncoder(7, window_encoding="mean")


def test_window_rows_and_sums_match_a_loop_over_sentences():
    """window_rows: the previous / next k sentences of the same document, nearest first, S
    where there are none; window_sums adds the rows in that order and its gradient is the
    loop's (float64 gradcheck)."""
    docs = np.array([0, 0, 0, 1, 2, 2, 2, 2])
    num = docs.size
    for window in (1, 2, 3, 10):
        previous, following = window_rows(docs, window)
        width = min(window, num - 1)
        assert previous.shape == following.shape == (num, width)
        for s in range(num):
            before = [q for q in range(s - 1, s - 1 - width, -1) if q >= 0 and docs[q] == docs[s]]
            after = [q for q in range(s + 1, s + 1 + width) if q < num and docs[q] == docs[s]]
            assert previous[s].tolist() == before + [num] * (width - len(before))
            assert following[s].tolist() == after + [num] * (width - len(after))
    previous, _ = window_rows(docs, 2)
    values = torch.randn(num, 3, dtype=torch.float64, requires_grad=True)
    sums = window_sums(values, torch.from_numpy(previous))
    for s in range(num):
        expected = sum((values[q] for q in previous[s] if q < num), torch.zeros(3).double())
        torch.testing.assert_close(sums[s], expected, rtol=0, atol=0)
    torch.autograd.gradcheck(lambda v: window_sums(v, torch.from_numpy(previous)), (values,))
    assert window_rows(np.array([4]), 2)[0].shape == (1, 0)  # one sentence: no window


def test_per_sentence_step_writes_nothing_at_indices():
    """The per-sentence windows run through gathers and host-planned layouts: no accumulating
    index write, nothing documented as non-deterministic, nothing read back."""
    from docgraph_dev.operator_counts import count_operators

    x, sent_len, sentence_doc = _batch()
    enc = CrossSentenceEncoder(7, sent_channels=8, window=2, dropout=0.1,
                               window_encoding="per_sentence")
    windows = sentence_window_plan(sent_len, sentence_doc, 2)
    layout = SequenceLayout.from_lengths(sent_len)
    x = x.requires_grad_()
    counted = count_operators(lambda: enc(x, sent_len, sentence_doc, layout=layout,
                                          windows=windows).sum().backward())
    assert counted.accumulating_writes == 0, counted.accumulating_by_name
    assert counted.nondeterministic == 0, counted.nondeterministic_by_name
    assert counted.synchronising == 0 and counted.read_backs == 0
