"""CRF cost with and without length buckets, on synthetic 4000-token batches.

Sentence lengths are drawn from Gamma distributions shaped like CoNLL-2003 (17 BIOES labels,
mean ~14 tokens) and OntoNotes (73 labels, mean ~18, tail to 150). The negative log-likelihood
of pytorch-crf (forward + backward) is timed on the whole padded batch ("plain") and bucketed
by length within factors 1.25 / 1.5 / 2 (what :class:`docgraph.nn.CRFDecoder` does), as the
median process CPU time of 5 runs at one thread (CPU time, so a loaded machine matters less).
The bucketed NLL is checked equal to the plain one.

    python benchmarks/crf_buckets.py
"""

from __future__ import annotations

import statistics
import time

import torch
from torchcrf import CRF

from docgraph.nn.encoders import length_buckets, pad_segments, pad_tokens


def sentence_lengths(tokens: int, shape: float, mean: float, seed: int = 1) -> torch.Tensor:
    """Gamma-distributed lengths (at least 1, at most 150) until ``tokens`` are reached."""
    gen = torch.Generator().manual_seed(seed)
    draws = torch._standard_gamma(torch.full((4 * tokens,), shape), generator=gen)
    lengths = (draws * mean / shape).long().clamp(max=149) + 1
    return lengths[: int((lengths.cumsum(0) < tokens).sum()) + 1]


def bucketed_nll(crf: CRF, em: torch.Tensor, sent_len: torch.Tensor, tags: torch.Tensor,
                 factor: float) -> torch.Tensor:
    """Summed NLL over length buckets."""
    starts = torch.cumsum(sent_len, 0) - sent_len
    total = em.new_zeros(())
    for index in length_buckets(sent_len, factor):
        padded, mask = pad_segments(em, starts[index], sent_len[index])
        padded_tags, _ = pad_segments(tags, starts[index], sent_len[index])
        total = total - crf(padded, padded_tags, mask=mask, reduction="sum")
    return total


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    for name, labels, shape, mean in (("conll-like", 17, 1.5, 14.0),
                                      ("ontonotes-like", 73, 2.0, 18.0)):
        sent_len = sentence_lengths(4000, shape, mean)
        n = int(sent_len.sum())
        crf = CRF(labels, batch_first=True)
        em = torch.randn(n, labels, requires_grad=True)
        tags = torch.randint(0, labels, (n,))

        def plain(crf=crf, em=em, sent_len=sent_len, tags=tags) -> torch.Tensor:
            padded, mask = pad_tokens(em, sent_len)
            padded_tags, _ = pad_tokens(tags, sent_len)
            return -crf(padded, padded_tags, mask=mask, reduction="sum")

        variants = {"plain": plain}
        for factor in (1.25, 1.5, 2.0):
            variants[f"buckets x{factor}"] = (
                lambda f=factor, c=crf, e=em, n=sent_len, t=tags: bucketed_nll(c, e, n, t, f))
        reference = plain()
        for label, fn in variants.items():
            torch.testing.assert_close(fn(), reference, rtol=1e-4, atol=1e-3)
            times = []
            for _ in range(5):
                start = time.process_time()
                fn().backward()
                times.append(time.process_time() - start)
            print(f"{name:15} C={labels:3} sentences={sent_len.numel():4} "
                  f"max_len={int(sent_len.max()):4} {label:14} "
                  f"{1000 * statistics.median(times):7.1f} ms CPU (fwd+bwd)")


if __name__ == "__main__":
    main()
