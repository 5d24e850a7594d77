"""What contextual features (``--lm``) cost in training and in tagging, per token.

Two measurements on real documents, one process at ``--threads`` threads:

* **Training and batch inference with cached features** (what ``scripts/train.py --lm`` does
  each step: the features come from the on-disk cache, so only the wider input layer costs):
  the training sampler's first batches of the train split, with the features of the cache
  attached; BiLSTM-CRF and GCDoc, each without and with the features (``lm_dim`` = the
  encoder's width), timed interleaved (A B C D A B C D ...) so that their ratios hold on a
  shared machine. Untrained models: the cost of a step does not depend on the weights, except
  that an untrained GCDoc prunes more tokens (its graph, ~7 % of a step, gets cheaper).
* **Tagging end to end** (what :class:`docgraph.tagging.tagger.Tagger` and ``predict.py`` do: the
  transformer runs on the fly): :meth:`Tagger.tag` on the first ``--tag-documents`` documents of
  the dev split, GCDoc without and with the features, and the encoder alone on the same
  documents (its share of the tagging time).

Reports tokens per second (wall clock and process CPU time) and the ratios with / without.

    python benchmarks/lm_speed.py --dataset conll03 --data-dir ../shared/data/conll2003 \\
        --lm MODEL_DIR --cache-dir CACHE --threads 1 \\
        --out benchmarks/results/measurements/lm-speed/X.json
"""

from __future__ import annotations

import argparse
import datetime as _dt
import logging
import os
import platform
import time
from dataclasses import replace

import torch

from docgraph.config import ExperimentConfig
from docgraph.data.lm_cache import cached_features
from docgraph.data.lm_encoder import ContextualEncoder, ContextualSettings
from docgraph.data.registry import load_dataset
from docgraph.data.vocab import Vocabularies
from docgraph.graph.splits import prepare_split
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model
from docgraph.runtime.atomic import atomic_write_json
from docgraph.runtime.machine import cpu_model, peak_rss_mib
from docgraph.tagging.tagger import Tagger
from docgraph_dev.batches import select_batches
from docgraph_dev.flops import matmul_gflops
from docgraph_dev.throughput import inference_pass, training_pass
from docgraph_dev.timing import time_interleaved


def _rates(tokens: int, timing: tuple[float, float]) -> dict[str, float]:
    wall, cpu = timing
    return {"seconds": wall, "cpu_seconds": cpu, "tokens_per_s": tokens / wall,
            "tokens_per_cpu_s": tokens / cpu}


def main(argv: list[str] | None = None) -> None:
    """Run both measurements and write the JSON of ``--out``."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="conll03")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--lm", required=True, help="Hugging Face encoder directory")
    p.add_argument("--cache-dir", default=None, help="feature cache (computed when missing)")
    p.add_argument("--context", type=int, default=64, help="--lm-context of the features")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batches", type=int, default=6, help="training batches timed per repeat")
    p.add_argument("--batch-tokens", type=int, default=4000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--tag-documents", type=int, default=40,
                   help="dev documents tagged end to end")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    splits = load_dataset(args.dataset, args.data_dir, splits=("train", "dev"))
    encoder = ContextualEncoder(args.lm, ContextualSettings(context=args.context))
    vocabs = Vocabularies.build(splits["train"])
    config = ExperimentConfig(dataset=args.dataset, lm=args.lm, lm_context=args.context,
                              seed=args.seed)
    features = cached_features(splits["train"], encoder, args.cache_dir,
                               f"{args.dataset}-train", progress=True)
    graphs = prepare_split(splits["train"], vocabs, config, lm_features=features).graphs
    batches = select_batches(graphs, args.batch_tokens, args.batches, args.seed)
    tokens = sum(int(b.num_nodes) for b in batches)

    models = {}
    for name, cfg in (("baseline", GCDocConfig.baseline()), ("gcdoc", GCDocConfig())):
        for suffix, lm_dim in (("", 0), (" + lm", encoder.dim)):
            torch.manual_seed(args.seed)
            models[name + suffix] = build_model(replace(cfg, lm_dim=lm_dim), vocabs)
    train = time_interleaved({n: training_pass(m, batches, 2) for n, m in models.items()},
                             args.repeats)
    infer = time_interleaved({n: inference_pass(m, batches, 2) for n, m in models.items()},
                             args.repeats)
    steps = {n: {"parameters": sum(q.numel() for q in m.parameters()),
                 "train": _rates(tokens, train[n]), "infer": _rates(tokens, infer[n])}
             for n, m in models.items()}

    documents = splits["dev"][:args.tag_documents]
    tag_tokens = sum(d.num_tokens for d in documents)
    taggers = {
        "gcdoc": Tagger(models["gcdoc"].eval(), vocabs, replace(config, lm=None)),
        "gcdoc + lm": Tagger(models["gcdoc + lm"].eval(), vocabs, config, lm_encoder=encoder),
    }
    passes = {n: (lambda t=t: t.tag(documents)) for n, t in taggers.items()}
    passes["encoder alone"] = lambda: encoder.encode(documents)
    for fn in passes.values():  # warm-up
        fn()
    tagging = time_interleaved(passes, args.repeats)
    tag = {n: _rates(tag_tokens, tagging[n]) for n in passes}

    def ratio(a: dict, b: dict) -> float:
        return a["tokens_per_s"] / b["tokens_per_s"]

    result = {
        "dataset": args.dataset,
        "lm": args.lm,
        "lm_dim": encoder.dim,
        "model_hash": encoder.model_hash,
        "context": args.context,
        "threads": torch.get_num_threads(),
        "batch_tokens": args.batch_tokens,
        "batch_token_counts": [int(b.num_nodes) for b in batches],
        "timed_tokens_per_pass": tokens,
        "repeats": args.repeats,
        "steps": steps,
        "step_slowdown_with_lm": {
            f"{n}_{kind}": ratio(steps[n][kind], steps[f"{n} + lm"][kind])
            for n in ("baseline", "gcdoc") for kind in ("train", "infer")
        },
        "tag_documents": len(documents),
        "tag_tokens": tag_tokens,
        "tagging": tag,
        "tagging_slowdown_with_lm": ratio(tag["gcdoc"], tag["gcdoc + lm"]),
        "encoder_share_of_lm_tagging": (tag["encoder alone"]["seconds"]
                                        / tag["gcdoc + lm"]["seconds"]),
        "note": ("untrained models; step timings use the cached features (as training does), "
                 "tagging computes them on the fly (as Tagger and predict.py do); medians of "
                 "interleaved repeats"),
        "matmul_gflops_per_s": matmul_gflops(),
        "peak_rss_mib": peak_rss_mib(),
        "cpu": cpu_model(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "load_average_at_end": list(os.getloadavg()),
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
    }
    atomic_write_json(args.out, result)
    for n, s in steps.items():
        logging.info("%-16s train %7.0f tok/s  infer %7.0f tok/s", n,
                     s["train"]["tokens_per_s"], s["infer"]["tokens_per_s"])
    for n, s in tag.items():
        logging.info("tagging %-14s %7.0f tok/s", n, s["tokens_per_s"])
    logging.info("written %s", args.out)


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    logging.info("%.0f s", time.perf_counter() - start)
