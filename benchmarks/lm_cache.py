"""Build time and size of the contextual-feature cache of a corpus (``--lm``).

Runs :func:`docgraph.data.contextual.cached_features` for every split, as ``run_experiment``
does, timing each split and recording the size of the ``.npy`` written; a second pass checks
that every split is then a cache hit.

    python benchmarks/lm_cache.py --dataset conll03 --data-dir DIR --lm MODEL_DIR \\
        --cache-dir /work/cache-lm --threads 1 --out OUT.json
"""
from __future__ import annotations

import argparse
import logging
import os
import platform
import time
from pathlib import Path

import torch

from docgraph.data.contextual import (
    ContextualEncoder,
    ContextualSettings,
    cache_path,
    cached_features,
)
from docgraph.data.registry import load_dataset
from docgraph.runtime.atomic import atomic_write_json


def main() -> None:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="conll03")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--lm", required=True)
    p.add_argument("--cache-dir", required=True)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--pack", action="store_true", help="packed windows (--lm-pack)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    torch.set_num_threads(args.threads)
    splits = load_dataset(args.dataset, args.data_dir)
    start = time.perf_counter()
    encoder = ContextualEncoder(args.lm, ContextualSettings(context=args.context, pack=args.pack))
    load_seconds = time.perf_counter() - start
    rows = {}
    for name, docs in splits.items():
        start = time.perf_counter()
        features = cached_features(docs, encoder, args.cache_dir, f"{args.dataset}-{name}",
                                   progress=True)
        seconds = time.perf_counter() - start
        path = cache_path(args.cache_dir, f"{args.dataset}-{name}", encoder.cache_key(docs))
        tokens = sum(len(encoder.tokenize(d).ids) for d in docs)
        rows[name] = {"documents": len(docs), "tokens": int(features.shape[0]),
                      "subwords": tokens, "dim": int(features.shape[1]),
                      "seconds": round(seconds, 1), "mib": round(path.stat().st_size / 2**20, 1),
                      "file": str(path)}
        logging.info("%s: %s", name, rows[name])
    start = time.perf_counter()
    for name, docs in splits.items():
        cached_features(docs, encoder, args.cache_dir, f"{args.dataset}-{name}")
    hit_seconds = time.perf_counter() - start
    atomic_write_json(args.out, {
        "dataset": args.dataset, "lm": str(Path(args.lm).resolve()),
        "model_hash": encoder.model_hash, "settings": encoder.settings.cache_dict(),
        "max_length": encoder.max_length, "threads": args.threads, "splits": rows,
        "total_seconds": round(sum(r["seconds"] for r in rows.values()), 1),
        "total_mib": round(sum(r["mib"] for r in rows.values()), 1),
        "model_load_seconds": round(load_seconds, 1), "cache_hit_seconds": round(hit_seconds, 2),
        "torch": torch.__version__, "machine": platform.processor() or platform.machine(),
        "load_average_at_end": os.getloadavg(),
    })


if __name__ == "__main__":
    main()
