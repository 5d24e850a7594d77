"""Tests of the flat-layout encoders."""

import torch

from docgraph.nn import CharEncoder, SequenceBiLSTM, pad_tokens, unpad_tokens


def test_pad_unpad_round_trip():
    sent_len = torch.tensor([3, 1, 4])
    x = torch.arange(8 * 2, dtype=torch.float).view(8, 2)
    padded, mask = pad_tokens(x, sent_len)
    assert padded.shape == (3, 4, 2)
    assert mask.tolist() == [
        [True, True, True, False],
        [True, False, False, False],
        [True, True, True, True],
    ]
    assert torch.equal(padded[1, 0], x[3])
    assert torch.equal(padded[2, 3], x[7])
    assert padded[~mask].abs().sum() == 0
    assert torch.equal(unpad_tokens(padded, sent_len), x)
    # 1-D input and explicit max_len / padding value.
    y = torch.arange(8)
    p, _ = pad_tokens(y, sent_len, max_len=6, padding_value=-1)
    assert p.shape == (3, 6) and p[0, 3] == -1
    assert torch.equal(unpad_tokens(p, sent_len), y)


def test_sequence_bilstm_matches_per_sentence():
    torch.manual_seed(0)
    enc = SequenceBiLSTM(5, 4).eval()
    assert enc.out_channels == 8
    assert "SequenceBiLSTM(5, 4" in str(enc)
    sent_len = torch.tensor([2, 5, 1, 3])
    x = torch.randn(int(sent_len.sum()), 5)
    out = enc(x, sent_len)
    assert out.shape == (11, 8)
    ref = torch.cat([enc.lstm(chunk.unsqueeze(0))[0][0] for chunk in x.split(sent_len.tolist())])
    torch.testing.assert_close(out, ref)
    # Biases are zero after init.
    assert torch.count_nonzero(enc.lstm.bias_ih_l0) == 0


def test_sequence_bilstm_dropout_in_training():
    torch.manual_seed(0)
    enc = SequenceBiLSTM(5, 4, dropout=0.5)
    sent_len = torch.tensor([3, 2])
    x = torch.randn(5, 5)
    assert not torch.equal(enc(x, sent_len), enc(x, sent_len))
    enc.eval()
    assert torch.equal(enc(x, sent_len), enc(x, sent_len))


def _random_words(num_tokens: int, num_chars: int, max_chars: int, vocab: int = 40):
    gen = torch.Generator().manual_seed(0)
    words = torch.randint(1, num_chars, (vocab, max_chars), generator=gen)
    lengths = torch.randint(1, max_chars + 1, (vocab,), generator=gen)
    words[torch.arange(max_chars).unsqueeze(0) >= lengths.unsqueeze(1)] = 0
    pick = torch.randint(0, vocab, (num_tokens,), generator=gen)
    return words[pick], lengths[pick]


def test_char_encoder_unique_matches_plain():
    torch.manual_seed(0)
    enc = CharEncoder(20, char_dim=6, hidden_channels=5)
    assert enc.out_channels == 10
    chars, char_len = _random_words(200, 20, 7)
    out = enc(chars, char_len)
    enc.unique = False
    ref = enc(chars, char_len)
    assert out.shape == (200, 10)
    torch.testing.assert_close(out, ref)
    # The plain computation: final forward state and final backward state.
    i = 3
    seq = enc.embedding(chars[i, : char_len[i]]).unsqueeze(0)
    h, _ = enc.lstm(seq)
    H = enc.hidden_channels
    torch.testing.assert_close(out[i], torch.cat([h[0, -1, :H], h[0, 0, H:]]))


def test_char_encoder_gradients():
    enc = CharEncoder(20, char_dim=6, hidden_channels=5)
    chars, char_len = _random_words(50, 20, 7)
    enc(chars, char_len).sum().backward()
    assert enc.embedding.weight.grad is not None
    assert enc.embedding.weight.grad[0].abs().sum() == 0  # padding row


def test_pad_and_unpad_are_gathers_with_the_gradients_of_indexing():
    """pad_tokens / unpad_tokens differentiate like ``x[index]`` in float64 and run no
    accumulating index write (their backward is embedding's, not index_put's)."""
    from docgraph_dev.operator_counts import count_operators

    sent_len = torch.tensor([3, 1, 4])
    x = torch.randn(8, 2, dtype=torch.float64, requires_grad=True)
    torch.autograd.gradcheck(lambda t: pad_tokens(t, sent_len, padding_value=0.5)[0], (x,))
    padded = torch.randn(3, 5, 2, dtype=torch.float64, requires_grad=True)
    torch.autograd.gradcheck(lambda t: unpad_tokens(t, sent_len), (padded,))
    weights = torch.randn(3, 4, 2, dtype=torch.float64)

    def both():
        (pad_tokens(x, sent_len)[0] * weights).sum().backward()
        unpad_tokens(padded, sent_len).sum().backward()

    counted = count_operators(both)
    assert counted.accumulating_writes == 0 and counted.nondeterministic == 0, (
        counted.accumulating_by_name, counted.nondeterministic_by_name)
    # the gradient of a padded position's weight reaches its token only
    expected = torch.cat([w[:n] for w, n in zip(weights, sent_len.tolist())])
    torch.testing.assert_close(x.grad, expected, rtol=0, atol=0)
