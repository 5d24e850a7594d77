"""The on-disk cache of contextual features: one float16 ``.npy`` file per corpus split.

Features of a corpus split are computed once (:func:`cached_features`) and read back
memory-mapped; the file's name holds :meth:`ContextualEncoder.cache_key
<docgraph.data.lm_encoder.ContextualEncoder.cache_key>`, a hash of the model directory's files,
the settings and the corpus text, so any change of them is a cache miss. The cache lives under
:func:`default_cache_dir` unless a directory is given (``--lm-cache-dir``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from docgraph.data.document import Document
from docgraph.data.lm_encoder import ContextualEncoder
from docgraph.runtime.atomic import atomic_write, atomic_write_json

log = logging.getLogger("docgraph")

CACHE_ENV_VAR = "DOCGRAPH_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$DOCGRAPH_CACHE_DIR/lm`` when set, else ``~/.cache/docgraph/lm``."""
    root = os.environ.get(CACHE_ENV_VAR)
    return (Path(root) if root else Path.home() / ".cache" / "docgraph") / "lm"


def cache_path(cache_dir: str | Path, name: str, key: str) -> Path:
    """The ``.npy`` file of split ``name`` under ``key``."""
    return Path(cache_dir) / f"{name}-{key[:24]}.npy"


def cached_features(documents: Sequence[Document], encoder: ContextualEncoder,
                    cache_dir: str | Path | None = None, name: str = "split",
                    progress: bool = False) -> np.ndarray:
    """Features of a corpus split, computed once and read back memory-mapped.

    The file ``<cache_dir>/<name>-<key>.npy`` (float16 ``[T, H]``) and a JSON sidecar describing
    it are written atomically; ``key`` is :meth:`ContextualEncoder.cache_key`, so a change of
    the model files, the settings or the words of the corpus makes a new file.

    Args:
        documents: The split (whole documents, before any chunking).
        encoder: The encoder.
        cache_dir: Cache directory (:func:`default_cache_dir` when ``None``).
        name: Prefix of the file, e.g. ``"conll03-train"``.
        progress: Show a progress bar while computing.

    Returns:
        A copy-on-write memory map ``[T, H]`` float16.
    """
    from numpy.lib.format import open_memmap

    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = encoder.cache_key(documents)
    path = cache_path(cache_dir, name, key)
    total = sum(d.num_tokens for d in documents)
    expected = (total, encoder.dim)
    if path.is_file():
        try:
            features = np.load(path, mmap_mode="c")
            if features.shape == expected and features.dtype == np.float16:
                log.info("lm features: reusing the cached %s (%d words of %s)", path, total,
                         name)
                return features
            log.warning("%s: shape %s, expected %s; recomputing", path, features.shape, expected)
        except (OSError, ValueError) as err:
            log.warning("%s: unreadable cache file (%s); recomputing", path, err)

    def write(tmp: str) -> None:
        array = open_memmap(tmp, mode="w+", dtype=np.float16, shape=expected)
        encoder.encode(documents, out=array, progress=progress)
        array.flush()
        del array

    atomic_write(path, write)
    atomic_write_json(path.with_suffix(".json"), {
        "name": name, "key": key, "shape": list(expected), "dtype": "float16",
        "model_dir": str(encoder.model_dir.resolve()), "model_hash": encoder.model_hash,
        "settings": encoder.settings.cache_dict(), "max_length": encoder.max_length,
        "documents": len(documents),
    })
    size = path.stat().st_size
    log.info("lm features: wrote %s (%d tokens x %d, %.1f MiB)", path, total, encoder.dim,
             size / 2**20)
    return np.load(path, mmap_mode="c")
