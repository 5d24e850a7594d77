"""CPU time of a GCDoc training step with three ways of running the BiLSTMs.

``packed``: ``pack_padded_sequence`` (PyTorch's step-by-step CPU kernel); ``padded``: each
direction on the whole padded batch through oneDNN; ``bucketed``: the same per length bucket
(what :func:`docgraph.nn.encoders.run_packed_lstm` does on the CPU). All three are exact.

Historical: it swaps ``run_packed_lstm``, which the model called until the lean training steps
(80f2580); the model now runs its BiLSTMs through :func:`docgraph.nn.layout.run_bilstm`, so
the script measures what its log says only on commit 498d924 or earlier
(``git worktree add /tmp/before 498d924``). ``benchmarks/lean_steps.py`` compares the two.

    python benchmarks/lstm_padding.py ../shared/data/conll2003
"""

import sys
import time

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch_geometric.data import Batch

import docgraph.nn.cross_sentence as cross_sentence
import docgraph.nn.encoders as encoders
from docgraph.batching.sampler import TokenBudgetBatchSampler
from docgraph.config import ExperimentConfig
from docgraph.data.registry import load_dataset
from docgraph.graph.splits import build_vocabularies, prepare_split
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model


def packed(lstm, padded, lengths):
    seqs = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    out, _ = lstm(seqs)
    return pad_packed_sequence(out, batch_first=True, total_length=padded.size(1))[0]


def main(data_dir: str) -> None:
    torch.set_num_threads(1)
    config = ExperimentConfig(dataset="conll03", data_dir=data_dir)
    splits = load_dataset("conll03", data_dir, splits=("train",))
    vocabs, _, _ = build_vocabularies(splits, "none")
    prepared = prepare_split(splits["train"][:200], vocabs, config)
    torch.manual_seed(0)
    model = build_model(GCDocConfig(), vocabs)
    sampler = TokenBudgetBatchSampler([int(g.num_nodes) for g in prepared.graphs], 1000, seed=0)
    batches = [Batch.from_data_list([prepared.graphs[i] for i in idx])
               for idx in list(sampler)[:6]]
    variants = {"packed": packed, "padded": encoders._bidirectional,
                "bucketed": encoders.run_packed_lstm}
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(3):
        for name, run in variants.items():
            encoders.run_packed_lstm, cross_sentence.run_packed_lstm = run, run
            start = time.process_time()
            for batch in batches:
                out = model(batch)
                (out.loss / out.num_sentences).backward()
            times[name].append(time.process_time() - start)
            encoders.run_packed_lstm = cross_sentence.run_packed_lstm = variants["bucketed"]
    tokens = sum(int(b.num_nodes) for b in batches)
    print(f"{len(batches)} CoNLL-2003 train batches, {tokens} tokens, 1 thread, "
          "forward + backward, best of 3 (CPU seconds)")
    for name, values in times.items():
        print(f"{name:10s} {min(values):7.2f} s  {tokens / min(values):7.0f} tokens/CPU-s")


if __name__ == "__main__":
    main(sys.argv[1])
