"""Where tagging time goes, stage by stage (:mod:`docgraph_dev.tagging_profile`), for
shipped models on the raw text of OntoNotes test documents, one process:

    python benchmarks/tagging_profile.py --models conll03 ontonotes --data-dir DIR \\
        [--limit 100] [--threads 1] [--precision fp32 bf16] [--no-flops] --out OUT.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's docgraph_dev


def main() -> int:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="+", default=["conll03", "ontonotes"])
    p.add_argument("--data-dir", required=True, help="corpus directory of OntoNotes")
    p.add_argument("--limit", type=int, default=100, help="first N test documents (0: all)")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--precision", nargs="+", default=[None],
                   help="tagging precisions to profile each model in (auto, fp32, bf16; "
                        "default: predict.py's)")
    p.add_argument("--no-flops", action="store_true", help="time the stages only")
    p.add_argument("--out", default=None, help="JSON record")
    args = p.parse_args()
    import torch

    from docgraph.data.registry import load_dataset
    from docgraph.runtime.atomic import atomic_write_json
    from docgraph.runtime.machine import cpu_model
    from docgraph_dev.peer_speed import split_text
    from docgraph_dev.tagging_profile import format_profile, profile_tagging

    torch.set_num_threads(args.threads)
    documents = load_dataset("ontonotes", args.data_dir, splits=("test",))["test"]
    documents = documents[:args.limit] if args.limit else documents
    text, _ = split_text(documents)
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ontonotes-test.txt"
        path.write_text(text, encoding="utf-8")
        for model in args.models:
            for precision in args.precision:
                records.append(profile_tagging(model, path, precision=precision,
                                               count_flops=not args.no_flops))
                print(format_profile(records[-1]), flush=True)
    if args.out:
        atomic_write_json(args.out, {"command": " ".join(sys.argv), "cpu": cpu_model(),
                                     "threads": args.threads, "records": records})
    return 0


if __name__ == "__main__":
    sys.exit(main())
