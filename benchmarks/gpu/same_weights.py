"""Whether two run directories hold bitwise-equal weights (the GPU kit's determinism check).

    python benchmarks/gpu/same_weights.py RUN_A RUN_B

Compares ``model.pt`` of both runs tensor by tensor (``weights_only`` loading) and prints one
line: ``equal`` or how many tensors differ and the largest absolute difference. Exits 0 when
equal, 1 when not, 2 when a file is missing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch


def weights(run: Path) -> dict[str, torch.Tensor]:
    """The state dict of ``run/model.pt`` (the best model a run keeps)."""
    state = torch.load(run / "model.pt", map_location="cpu", weights_only=True)
    return state.get("model", state) if isinstance(state, dict) else state


def main(argv: list[str]) -> int:
    """Compare the two runs named in ``argv`` and print the verdict."""
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    a, b = (Path(p) for p in argv)
    for run in (a, b):
        if not (run / "model.pt").is_file():
            print(f"{run}: no model.pt", file=sys.stderr)
            return 2
    wa, wb = weights(a), weights(b)
    differ = [k for k in wa if k not in wb or not torch.equal(wa[k], wb[k])]
    if not differ and wa.keys() == wb.keys():
        print(f"{a} and {b}: equal ({len(wa)} tensors)")
        return 0
    worst = max(((wa[k].double() - wb[k].double()).abs().max().item()
                 for k in differ if k in wb and wa[k].shape == wb[k].shape), default=0.0)
    print(f"{a} and {b}: {len(differ)} of {len(wa)} tensors differ (max |diff| {worst:.3g})")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
