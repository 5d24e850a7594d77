"""What checking a file's integrity at load costs: the CRC-32 of every record of a checkpoint
(:func:`~docgraph.persistence.archive.archive_damage`) and the seal of a JSON file
(:func:`~docgraph.runtime.integrity.read_json_file`), against reading the file with torch or
``json`` alone. Medians of ``--rounds`` reads, the file in the page cache.

    python benchmarks/integrity_cost.py conll03 ontonotes runs/X/last.pt
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def median_ms(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 2)


def main() -> None:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", help="shipped model names, model directories or .pt files")
    p.add_argument("--rounds", type=int, default=9)
    args = p.parse_args()
    import torch

    from docgraph.persistence.archive import archive_damage
    from docgraph.persistence.shipped import resolve_model
    from docgraph.runtime.integrity import read_json_file

    files: list[Path] = []
    for spec in args.paths:
        path = Path(spec)
        if path.suffix == ".pt":
            files.append(path)
        else:
            directory = resolve_model(spec)
            files += [directory / n for n in ("model.pt", "config.json", "vocab.json")]
    for path in files:
        path.read_bytes()  # into the page cache
        if path.suffix == ".pt":
            check = median_ms(lambda p=path: archive_damage(p), args.rounds)
            load = median_ms(lambda p=path: torch.load(p, map_location="cpu", weights_only=True),
                             args.rounds)
        else:
            check = median_ms(lambda p=path: read_json_file(p), args.rounds)
            load = median_ms(lambda p=path: json.loads(p.read_text(encoding="utf-8")),
                             args.rounds)
        print(f"{path}: {path.stat().st_size / 1e6:.1f} MB, check {check} ms, "
              f"plain read {load} ms", flush=True)


if __name__ == "__main__":
    main()
