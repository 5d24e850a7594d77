"""Tests of :class:`docgraph.nn.CRFDecoder` against brute-force enumeration."""

import itertools

import pytest
import torch

from docgraph.nn import CRFDecoder


def _score(crf, em, tags, trans=None, start=None, end=None):
    trans = crf.crf.transitions if trans is None else trans
    start = crf.crf.start_transitions if start is None else start
    end = crf.crf.end_transitions if end is None else end
    s = start[tags[0]] + em[0, tags[0]]
    for t in range(1, len(tags)):
        s = s + trans[tags[t - 1], tags[t]] + em[t, tags[t]]
    return s + end[tags[-1]]


def _setup():
    torch.manual_seed(0)
    crf = CRFDecoder(3)
    torch.nn.init.normal_(crf.crf.transitions)
    torch.nn.init.normal_(crf.crf.start_transitions)
    torch.nn.init.normal_(crf.crf.end_transitions)
    sent_len = torch.tensor([3, 4])
    em = torch.randn(7, 3)
    tags = torch.tensor([0, 2, 1, 1, 1, 0, 2])
    return crf, sent_len, em, tags


def test_nll_brute_force():
    crf, sent_len, em, tags = _setup()
    ref = []
    for e, y in zip(em.split(sent_len.tolist()), tags.split(sent_len.tolist())):
        all_scores = torch.stack(
            [_score(crf, e, list(p)) for p in itertools.product(range(3), repeat=len(y))]
        )
        ref.append(torch.logsumexp(all_scores, 0) - _score(crf, e, y.tolist()))
    ref = torch.stack(ref)
    torch.testing.assert_close(crf.nll(em, sent_len, tags), ref.sum())
    torch.testing.assert_close(crf.nll(em, sent_len, tags, reduction="none"), ref)
    torch.testing.assert_close(crf.nll(em, sent_len, tags, reduction="mean"), ref.mean())


def test_decode_brute_force():
    crf, sent_len, em, _ = _setup()
    out = crf.decode(em, sent_len)
    assert out.shape == (7,) and out.dtype == torch.long
    ref = []
    for e in em.split(sent_len.tolist()):
        best = max(
            itertools.product(range(3), repeat=e.size(0)),
            key=lambda p: float(_score(crf, e, p).detach()),
        )
        ref.extend(best)
    assert out.tolist() == ref
    # Agrees with torchcrf's own decoder.
    from docgraph.nn import pad_tokens

    padded, mask = pad_tokens(em, sent_len)
    assert [t for seq in crf.crf.decode(padded, mask) for t in seq] == ref


def test_constrained_decoding():
    crf, sent_len, _, _ = _setup()
    allowed = torch.tensor([[True, True, False], [True, True, True], [False, True, True]])
    allowed_start = torch.tensor([True, True, False])
    allowed_end = torch.tensor([True, False, True])
    cons = CRFDecoder(3, allowed, allowed_start, allowed_end)
    cons.crf.load_state_dict(crf.crf.state_dict())
    assert "constrained=True" in str(cons) and "constrained=False" in str(crf)
    torch.manual_seed(1)
    lens = torch.tensor([1, 2, 3, 4, 5])
    for _ in range(20):
        em = torch.randn(int(lens.sum()), 3) * 5
        out = cons.decode(em, lens)
        for seq in out.split(lens.tolist()):
            seq = seq.tolist()
            assert allowed_start[seq[0]] and allowed_end[seq[-1]]
            assert all(allowed[a, b] for a, b in itertools.pairwise(seq))
        # Brute force over allowed paths only, for the length-4 sentence.
        e = em[6:10]
        paths = [
            p
            for p in itertools.product(range(3), repeat=4)
            if allowed_start[p[0]]
            and allowed_end[p[-1]]
            and all(allowed[a, b] for a, b in itertools.pairwise(p))
        ]
        best = max(paths, key=lambda p: float(_score(cons, e, p).detach()))
        assert out[6:10].tolist() == list(best)
    # nll ignores the constraints.
    em = torch.randn(7, 3)
    tags = torch.tensor([0, 2, 1, 1, 1, 0, 2])
    torch.testing.assert_close(cons.nll(em, sent_len, tags), crf.nll(em, sent_len, tags))


def test_length_buckets_match_sentence_by_sentence():
    # Lengths spread over several buckets (factor 2): the bucketed NLL of every sentence and
    # its Viterbi path equal those of the sentence scored alone.
    torch.manual_seed(3)
    sent_len = torch.tensor([9, 1, 17, 2, 5, 3, 33, 4])
    num_labels = 5
    crf = CRFDecoder(num_labels)
    emissions = torch.randn(int(sent_len.sum()), num_labels)
    tags = torch.randint(0, num_labels, (int(sent_len.sum()),))
    per_sentence = crf.nll(emissions, sent_len, tags, reduction="none")
    decoded = crf.decode(emissions, sent_len)
    for i, (e, t, d) in enumerate(zip(emissions.split(sent_len.tolist()),
                                      tags.split(sent_len.tolist()),
                                      decoded.split(sent_len.tolist()))):
        one = torch.tensor([len(e)])
        torch.testing.assert_close(per_sentence[i], crf.nll(e, one, t, reduction="sum"))
        assert torch.equal(d, crf.decode(e, one)), i
    torch.testing.assert_close(crf.nll(emissions, sent_len, tags), per_sentence.sum())
    torch.testing.assert_close(crf.nll(emissions, sent_len, tags, reduction="token_mean"),
                               per_sentence.sum() / sent_len.sum())


def _random_case(seed: int, num_labels: int, lengths: list[int], scale: float):
    gen = torch.Generator().manual_seed(seed)
    crf = CRFDecoder(num_labels).double()
    with torch.no_grad():
        for p in crf.crf.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * scale)
    sent_len = torch.tensor(lengths)
    n = int(sent_len.sum())
    em = (torch.randn(n, num_labels, generator=gen, dtype=torch.float64) * scale
          ).requires_grad_(True)
    tags = torch.randint(0, num_labels, (n,), generator=gen)
    return crf, sent_len, em, tags


CASES = [  # (seed, labels, lengths, scale of the scores)
    (0, 3, [1], 1.0), (1, 4, [2, 1, 3], 1.0), (2, 3, [5, 4, 1, 2], 3.0),
    (3, 2, [6, 6], 10.0), (4, 5, [1, 1, 1], 0.1), (5, 4, [3, 5, 2, 4, 1], 5.0),
]


@pytest.mark.parametrize("seed,num_labels,lengths,scale", CASES)
def test_nll_and_gradients_equal_enumeration_over_random_cases(seed, num_labels, lengths,
                                                               scale):
    # Every path enumerated: the NLL and its gradients with respect to the emissions and all
    # three kinds of transition scores (start, end, transitions) equal the brute force.
    crf, sent_len, em, tags = _random_case(seed, num_labels, lengths, scale)
    got = crf.nll(em, sent_len, tags, reduction="none")
    ref = []
    for e, y in zip(em.split(lengths), tags.split(lengths)):
        all_scores = torch.stack([_score(crf, e, list(p))
                                  for p in itertools.product(range(num_labels), repeat=len(y))])
        ref.append(torch.logsumexp(all_scores, 0) - _score(crf, e, y.tolist()))
    ref = torch.stack(ref)
    torch.testing.assert_close(got, ref, rtol=1e-9, atol=1e-9)
    weights = torch.arange(1, len(lengths) + 1, dtype=torch.float64)  # distinct per sentence
    params = [em, crf.crf.start_transitions, crf.crf.end_transitions, crf.crf.transitions]
    grads = torch.autograd.grad((got * weights).sum(), params, allow_unused=True)
    expected = torch.autograd.grad((ref * weights).sum(), params, allow_unused=True)
    for name, p, g, e in zip(["emissions", "start", "end", "transitions"], params, grads,
                             expected):
        g = torch.zeros_like(p) if g is None else g
        e = torch.zeros_like(p) if e is None else e  # one-token sentences use no transition
        torch.testing.assert_close(g, e, rtol=1e-8, atol=1e-9, msg=name)


@pytest.mark.parametrize("seed,num_labels,lengths,scale", CASES)
def test_decode_equals_enumeration_over_random_cases(seed, num_labels, lengths, scale):
    crf, sent_len, em, _ = _random_case(seed, num_labels, lengths, scale)
    out = crf.decode(em.detach(), sent_len)
    ref = []
    for e in em.detach().split(lengths):
        best = max(itertools.product(range(num_labels), repeat=e.size(0)),
                   key=lambda p: float(_score(crf, e, p).detach()))
        ref.extend(best)
    assert out.tolist() == ref


def test_nll_equals_pytorch_crf_on_long_sentences_and_large_scores():
    # Lengths up to 120 (several renormalisations of the exp-space recursion), 73 labels (the
    # OntoNotes BIOES set) and scores large enough to overflow a naive exp: equal to
    # pytorch-crf's own forward algorithm in float64, value and gradients, whether our CRF
    # runs in float64 or float32; Viterbi equals pytorch-crf's decoder.
    from docgraph.nn import pad_tokens

    crf, sent_len, em, tags = _random_case(11, 73, [120, 1, 37, 64, 2, 99], 8.0)
    padded, mask = pad_tokens(em, sent_len)
    padded_tags, _ = pad_tokens(tags, sent_len)
    ref = -crf.crf(padded, padded_tags, mask=mask, reduction="none")
    params = [em, *crf.crf.parameters()]
    expected = torch.autograd.grad(ref.sum(), params)
    for dtype, tol in ((torch.float64, 1e-9), (torch.float32, 2e-5)):
        ours = CRFDecoder(73).to(dtype)
        ours.crf.load_state_dict(crf.crf.state_dict())
        x = em.detach().to(dtype).requires_grad_(True)
        got = ours.nll(x, sent_len, tags, reduction="none")
        torch.testing.assert_close(got.double(), ref.detach(), rtol=tol, atol=tol)
        for g, e in zip(torch.autograd.grad(got.sum(), [x, *ours.crf.parameters()]), expected):
            torch.testing.assert_close(g.double(), e, rtol=tol, atol=tol * 10)
        decoded = ours.decode(x.detach(), sent_len)
        assert decoded.tolist() == [t for seq in crf.crf.decode(padded.detach(), mask)
                                    for t in seq]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_path_log_probs_equal_enumeration(seed):
    """A labelled span's marginal against the enumeration of every label sequence: the mass
    of the paths that carry those labels at those positions."""
    torch.manual_seed(seed)
    labels = 3
    crf = CRFDecoder(labels)
    for p in (crf.crf.transitions, crf.crf.start_transitions, crf.crf.end_transitions):
        torch.nn.init.normal_(p)
    sent_len = torch.tensor([4, 1, 3, 5])
    em = torch.randn(int(sent_len.sum()), labels) * 2
    spans = [(0, 1, [2, 0]), (0, 0, [1]), (1, 0, [2]), (2, 0, [0, 1, 2]), (3, 3, [1, 1]),
             (3, 0, [0, 0, 0, 0, 0]), (2, 2, [2])]
    width = max(len(y) for _, _, y in spans)
    padded = torch.tensor([y + [-1] * (width - len(y)) for _, _, y in spans])
    got = crf.path_log_probs(em, sent_len, torch.tensor([s for s, _, _ in spans]),
                             torch.tensor([f for _, f, _ in spans]), padded)
    sentences = em.split(sent_len.tolist())
    for k, (s, first, y) in enumerate(spans):
        e = sentences[s]
        paths = list(itertools.product(range(labels), repeat=e.size(0)))
        scores = torch.stack([_score(crf, e, p) for p in paths]).double()
        inside = torch.tensor([list(p[first:first + len(y)]) == y for p in paths])
        expected = torch.logsumexp(scores[inside], 0) - torch.logsumexp(scores, 0)
        torch.testing.assert_close(got[k], expected.detach(), rtol=1e-6, atol=1e-6)


def test_path_log_probs_of_every_label_at_a_token_sum_to_one():
    torch.manual_seed(3)
    crf = CRFDecoder(4)
    sent_len = torch.tensor([6, 2])
    em = torch.randn(8, 4)
    probs = crf.path_log_probs(em, sent_len, torch.zeros(4, dtype=torch.long),
                               torch.full((4,), 2), torch.arange(4).unsqueeze(1)).exp()
    torch.testing.assert_close(probs.sum(), torch.tensor(1.0, dtype=torch.float64))


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.5])
def test_path_log_probs_with_temperature_and_constraints_equal_enumeration(temperature):
    """The tempered marginal equals the enumeration over scores divided by the temperature,
    with the BIOES masks of constrained decoding and emissions large enough to underflow a
    naive exponent."""
    from docgraph.model import bioes_transition_masks

    torch.manual_seed(7)
    names = ["O", "B-X", "I-X", "E-X", "S-X"]
    crf = CRFDecoder(len(names), *bioes_transition_masks(names))
    for p in (crf.crf.transitions, crf.crf.start_transitions, crf.crf.end_transitions):
        torch.nn.init.normal_(p)
    sent_len = torch.tensor([5, 3])
    em = torch.randn(int(sent_len.sum()), len(names)) * 40
    spans = [(0, 1, [1, 2, 3]), (0, 0, [4]), (1, 0, [0]), (1, 1, [1, 3])]
    width = max(len(y) for _, _, y in spans)
    padded = torch.tensor([y + [-1] * (width - len(y)) for _, _, y in spans])
    got = crf.path_log_probs(em, sent_len, torch.tensor([s for s, _, _ in spans]),
                             torch.tensor([f for _, f, _ in spans]), padded,
                             temperature=temperature)
    start, end, trans = crf._scores()
    for k, (s, first, y) in enumerate(spans):
        e = em.split(sent_len.tolist())[s]
        paths = list(itertools.product(range(len(names)), repeat=e.size(0)))
        scores = torch.stack([_score(crf, e, p, trans, start, end) for p in paths]).double()
        scores = scores / temperature
        inside = torch.tensor([list(p[first:first + len(y)]) == y for p in paths])
        expected = torch.logsumexp(scores[inside], 0) - torch.logsumexp(scores, 0)
        torch.testing.assert_close(got[k], expected.detach(), rtol=1e-6, atol=1e-6)


def test_path_log_probs_refuse_a_temperature_that_is_not_positive():
    crf, sent_len, em, _ = _setup()
    with pytest.raises(ValueError, match="temperature must be > 0"):
        crf.path_log_probs(em, sent_len, torch.tensor([0]), torch.tensor([0]),
                           torch.tensor([[0]]), temperature=0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_partial_nll_and_gradients_equal_enumeration_over_the_allowed_paths(seed):
    # Partial annotation: the numerator is the log-sum over every path whose labels are
    # allowed token by token (here some tokens fixed, others free among two labels).
    gen = torch.Generator().manual_seed(seed)
    labels, lengths = 4, [3, 1, 4]
    crf = CRFDecoder(labels)
    with torch.no_grad():
        for p in (crf.crf.transitions, crf.crf.start_transitions, crf.crf.end_transitions):
            p.copy_(torch.randn(p.shape, generator=gen))
    em = torch.randn(sum(lengths), labels, generator=gen, requires_grad=True)
    allowed = torch.zeros(sum(lengths), labels, dtype=torch.bool)
    free = torch.rand(sum(lengths), generator=gen) < 0.6
    fixed = torch.randint(labels, (sum(lengths),), generator=gen)
    allowed[torch.arange(sum(lengths)), fixed] = True
    allowed[free, 0] = True
    allowed[free, 3] = True
    sent_len = torch.tensor(lengths)
    ref = []
    for e, a in zip(em.split(lengths), allowed.split(lengths)):
        paths = list(itertools.product(range(labels), repeat=e.size(0)))
        every = torch.stack([_score(crf, e, list(p)) for p in paths])
        kept = torch.stack([_score(crf, e, list(p)) for p in paths
                            if all(a[t, q] for t, q in enumerate(p))])
        ref.append(torch.logsumexp(every, 0) - torch.logsumexp(kept, 0))
    ref = torch.stack(ref)
    out = crf.nll(em, sent_len, fixed, reduction="none", allowed=allowed)
    torch.testing.assert_close(out, ref)
    grads = torch.autograd.grad(out.sum(), [em, crf.crf.transitions, crf.crf.start_transitions])
    expected = torch.autograd.grad(ref.sum(), [em, crf.crf.transitions,
                                               crf.crf.start_transitions])
    for got, want in zip(grads, expected):
        torch.testing.assert_close(got, want)
    # one allowed label per token is the fully annotated loss
    one = torch.zeros_like(allowed)
    one[torch.arange(sum(lengths)), fixed] = True
    torch.testing.assert_close(crf.nll(em, sent_len, fixed, reduction="none", allowed=one),
                               crf.nll(em, sent_len, fixed, reduction="none"))
    # free tokens lower the loss (more gold paths), never raise it
    assert (out <= crf.nll(em, sent_len, fixed, reduction="none") + 1e-6).all()
