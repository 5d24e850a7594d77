"""The language model's arithmetic when a model with MiniLM features tags: float32, bfloat16
(``--precision bf16``) and int8 dynamic quantisation of its linear layers (per tensor, per
channel), the GCDoc network in float32 throughout so that only the features differ.

The first ``--limit`` CoNLL-2003 test documents are tagged as ``evaluate.py`` tags them (one
process, one thread, the variants in turn within one process); per variant the CPU seconds of
tagging (the MiniLM pass included), the test F1 and the tokens whose tags agree with float32's:

    python benchmarks/lm_precision.py --model conll03-lm --data-dir DIR [--limit 50] --out OUT.json
"""

from __future__ import annotations

import argparse
import sys
import time


def main() -> int:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--model", default="conll03-lm")
    p.add_argument("--data-dir", required=True, help="the CoNLL-2003 corpus directory")
    p.add_argument("--limit", type=int, default=50, help="first N test documents (0: all)")
    p.add_argument("--out", default=None, help="JSON record")
    args = p.parse_args()
    import torch
    from torch.ao.quantization import (
        default_dynamic_qconfig,
        per_channel_dynamic_qconfig,
        quantize_dynamic,
    )

    from docgraph.data.registry import load_dataset
    from docgraph.runtime.atomic import atomic_write_json
    from docgraph.runtime.machine import cpu_model
    from docgraph.tagging.tagger import Tagger

    torch.set_num_threads(1)
    documents = load_dataset("conll03", args.data_dir, splits=("test",))["test"]
    documents = documents[:args.limit] if args.limit else documents
    tagger = Tagger.load(args.model, precision="fp32")
    encoder = tagger.lm_encoder
    if encoder is None:
        raise SystemExit(f"{args.model}: a model without language-model features")
    float32 = encoder.model
    variants = {
        "fp32": (float32, "fp32"),
        "bf16": (float32, "bf16"),
        "int8 per tensor": (quantize_dynamic(float32, {torch.nn.Linear: default_dynamic_qconfig},
                                             dtype=torch.qint8), "fp32"),
        "int8 per channel": (quantize_dynamic(float32,
                                              {torch.nn.Linear: per_channel_dynamic_qconfig},
                                              dtype=torch.qint8), "fp32"),
    }
    records, reference = {}, None
    for name, (model, precision) in variants.items():
        encoder.model, encoder.precision = model, precision
        cpu = time.process_time()
        evaluation = tagger.evaluate(documents)
        cpu = time.process_time() - cpu
        tags = [t for doc in evaluation.predictions for sent in doc for t in sent]
        reference = tags if reference is None else reference
        agree = sum(a == b for a, b in zip(reference, tags))
        records[name] = {"cpu": cpu, "f1": evaluation.scores.f1, "tags_agree": agree,
                         "tokens": len(tags), "tokens_per_cpu_second": len(tags) / cpu}
        print(f"{name:<18} {cpu:7.1f} CPU s  {len(tags) / cpu:6.0f} tokens/s  F1 "
              f"{evaluation.scores.f1:.2f}  tags {agree:,} / {len(tags):,}", flush=True)
    if args.out:
        atomic_write_json(args.out, {"command": " ".join(sys.argv), "cpu": cpu_model(),
                                     "model": args.model, "documents": len(documents),
                                     "variants": records})
    return 0


if __name__ == "__main__":
    sys.exit(main())
