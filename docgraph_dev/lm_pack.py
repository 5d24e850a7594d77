"""Packed ``--lm`` windows against one window per sentence: work, time and feature agreement.

Encodes one split twice with the same encoder settings, once with one window per sentence
(``pack=False``, how every committed +LM run was trained) and once with consecutive sentences
sharing windows (``pack=True``, ``--lm-pack``), in one process at ``--threads`` threads, and
reports for each: windows, subwords fed to the transformer (special tokens included; a
machine-independent measure of the work), wall and CPU seconds, words per second. Then how far
the packed features are from the per-sentence ones, per word: cosine similarity (mean, 1st and
5th percentile, minimum) and relative L2 distance (mean). The two encodings run in the order
given by ``--order`` (default: unpacked first); ``--count-only`` counts the windows and
subwords of both without running the transformer.

    python benchmarks/lm_pack.py --dataset conll03 --data-dir ../shared/data/conll2003 \\
        --split dev --lm MODEL_DIR --threads 1 --out benchmarks/results/measurements/lm-pack/X.json
"""

from __future__ import annotations

import argparse
import datetime as _dt
import logging
import os
import time
from dataclasses import replace

import numpy as np
import torch

from docgraph.data.document import Document
from docgraph.data.lm_encoder import ContextualEncoder, ContextualSettings
from docgraph.data.registry import load_dataset
from docgraph.runtime.atomic import atomic_write_json
from docgraph.runtime.machine import cpu_model


def window_work(encoder: ContextualEncoder, documents: list[Document]) -> dict[str, int]:
    """Windows and subwords (special tokens included) that encoding ``documents`` runs."""
    windows = subwords = 0
    for i, doc in enumerate(documents):
        for w in encoder.windows(i, encoder.tokenize(doc)):
            windows += 1
            subwords += w.end - w.start + encoder.prefix + len(encoder.suffix_ids)
    return {"windows": windows, "subwords_encoded": subwords}


def agreement(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Per-row cosine similarity and relative L2 distance of ``b`` to ``a``."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    norm_a, norm_b = np.linalg.norm(a64, axis=1), np.linalg.norm(b64, axis=1)
    cosine = (a64 * b64).sum(1) / np.maximum(norm_a * norm_b, 1e-12)
    rel = np.linalg.norm(a64 - b64, axis=1) / np.maximum(norm_a, 1e-12)
    return {"cosine_mean": float(cosine.mean()), "cosine_p1": float(np.percentile(cosine, 1)),
            "cosine_p5": float(np.percentile(cosine, 5)), "cosine_min": float(cosine.min()),
            "relative_l2_mean": float(rel.mean()), "identical_rows": int((rel == 0).sum())}


def main(argv: list[str] | None = None) -> None:
    """Encode the split both ways and write the JSON of ``--out``."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="conll03")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--split", default="dev")
    p.add_argument("--lm", required=True, help="Hugging Face encoder directory")
    p.add_argument("--context", type=int, default=64, help="--lm-context")
    p.add_argument("--documents", type=int, default=0, help="first N documents (0: all)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--order", choices=("unpacked-first", "packed-first"),
                   default="unpacked-first")
    p.add_argument("--count-only", action="store_true",
                   help="count windows and subwords only (no transformer pass)")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    torch.set_num_threads(args.threads)
    documents = load_dataset(args.dataset, args.data_dir, splits=(args.split,))[args.split]
    if args.documents > 0:
        documents = documents[:args.documents]
    words = sum(d.num_tokens for d in documents)
    base = ContextualEncoder(args.lm, ContextualSettings(context=args.context))
    packed = ContextualEncoder(args.lm, replace(base.settings, pack=True))
    encoders = {"unpacked": base, "packed": packed}
    rows = {name: window_work(encoder, documents) for name, encoder in encoders.items()}
    result = {
        "dataset": args.dataset, "split": args.split, "documents": len(documents),
        "words": words, "context": args.context, "max_length": base.max_length,
        "encodings": rows, "work_ratio": round(rows["unpacked"]["subwords_encoded"]
                                               / rows["packed"]["subwords_encoded"], 2)}
    if not args.count_only:
        order = list(encoders) if args.order == "unpacked-first" else list(reversed(encoders))
        features, walls = {}, {}
        for name in order:
            wall, cpu = time.perf_counter(), time.process_time()
            features[name] = encoders[name].encode(documents, progress=True)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            walls[name] = max(wall, 1e-9)
            rows[name].update(seconds=round(wall, 1), cpu_seconds=round(cpu, 1),
                              words_per_s=round(words / walls[name], 1))
            logging.info("%s: %s", name, rows[name])
        result.update({
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="minutes"),
            "lm": str(base.model_dir.resolve()), "model_hash": base.model_hash,
            "threads": args.threads, "order": order,
            "speedup_wall": round(walls["unpacked"] / walls["packed"], 2),
            "agreement_packed_vs_unpacked": agreement(features["unpacked"],
                                                      features["packed"]),
            "torch": torch.__version__, "cpu": cpu_model(),
            "load_average_at_end": os.getloadavg(),
        })
    atomic_write_json(args.out, result)
    logging.info("%s", result)


if __name__ == "__main__":
    main()
