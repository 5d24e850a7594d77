"""Packed model directories: small, checked copies of a trained model to ship.

:func:`pack_model_dir` writes a model directory that tags as its source does with fewer bytes:

- **Pretrained rows left out.** A word whose embedding row is still exactly its pretrained
  vector (a dev/test word never trained, or any row of frozen embeddings) is dropped from the
  vocabulary and the weights: the open vocabulary (:mod:`docgraph.data.open_vocab`) gives it
  that same vector at load, from the same table (the configuration's ``embeddings``).
- **16-bit tensors.** Floating-point tensors are stored as ``float16`` (or ``bfloat16``), those
  named in ``keep_float32`` as they are; loading copies them into the float32 parameters.
- **8-bit word rows, on request.** With ``int8_embeddings`` the word embedding is stored as
  ``int8`` rows with a scale each (:mod:`docgraph.persistence.quantize`): half the bytes of
  the largest tensor, not an exact copy (``scripts/ship_model.py`` measures the tags).
- **Checksums.** ``manifest.json`` lists the SHA-256 of every file;
  :func:`~docgraph.persistence.manifest.verify_manifest` checks them when the directory is
  loaded, so a damaged file is an error naming it.

Saved files are byte-identical for equal tensors and metadata
(:func:`~docgraph.persistence.checkpoint.checkpoint_bytes`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import torch

from docgraph.data.embeddings import load_embeddings
from docgraph.data.open_vocab import PretrainedTable
from docgraph.data.vocab import Vocab, Vocabularies
from docgraph.persistence.checkpoint import CheckpointError, checkpoint_bytes
from docgraph.persistence.locate import read_model_files
from docgraph.persistence.manifest import PACK_FORMAT, PACK_VERSION, file_sha256
from docgraph.persistence.model_dir import ModelOverrides, load_model_dir
from docgraph.persistence.quantize import quantized_state
from docgraph.persistence.shipped import MANIFEST, SPEEDS_FILE
from docgraph.runtime.integrity import read_json_file, seal

_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
_EMBEDDING = "word_embedding.weight"


@dataclass(frozen=True)
class PackSummary:
    """What :func:`pack_model_dir` wrote.

    Args:
        directory: The packed model directory.
        words: Word-vocabulary entries kept (specials included).
        dropped_words: Entries left out (their rows are their pretrained vectors).
        dtype: The storage type of the floating-point tensors.
        bytes: Total size of the directory's files.
    """

    directory: Path
    words: int
    dropped_words: int
    dtype: str
    bytes: int


def pretrained_rows(vocab: Vocab, weight: torch.Tensor, words: Sequence[str],
                    matrix: np.ndarray) -> list[int]:
    """The entries of ``vocab`` whose row of ``weight`` is exactly the pretrained vector the
    open vocabulary would give them (their first
    :func:`~docgraph.data.vocab.lookup_keys` hit in ``words``); specials never are."""
    table = PretrainedTable(lambda: (words, matrix))
    specials = {vocab.pad_index, vocab.unk_index}
    out = []
    for i, token in enumerate(vocab):
        if i in specials:
            continue
        row = table.row(token)
        if row is not None and torch.equal(weight[i], torch.from_numpy(
                np.array(matrix[row], dtype=np.float32))):
            out.append(i)
    return out


def _stored(state: dict[str, torch.Tensor], dtype: torch.dtype,
            keep_float32: Sequence[str]) -> dict[str, torch.Tensor]:
    return {key: (value.to(dtype) if value.is_floating_point()
                  and not any(fnmatch(key, pattern) for pattern in keep_float32) else value
                  ).contiguous()
            for key, value in state.items()}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _packed_config(source: Path) -> str:
    """``config.json`` of ``source`` without the corpus directory of the machine it was
    trained on (a packed model reads a corpus from ``--data-dir`` or ``DOCGRAPH_DATA_DIR``)."""
    config = read_json_file(source / "config.json")
    config["data_dir"] = None
    return json.dumps(seal(config), indent=2) + "\n"


def pack_model_dir(source: str | Path, target: str | Path, dtype: str = "float16",
                   keep_float32: Sequence[str] = (), int8_embeddings: bool = False
                   ) -> PackSummary:
    """Write a packed copy of the model directory ``source`` to ``target`` (see the module
    docstring). ``target`` appears whole or not at all (written beside it, then renamed); an
    existing ``target`` is replaced.

    Args:
        source: A model directory written by ``train.py`` (not itself packed).
        target: The packed directory.
        dtype: ``"float16"``, ``"bfloat16"`` or ``"float32"``: how floating-point tensors are
            stored.
        keep_float32: ``fnmatch`` patterns of state-dict keys stored as they are
            (e.g. ``"crf.*"``).
        int8_embeddings: Store the word embedding as 8-bit rows.

    Raises:
        CheckpointError: ``source`` is not a model directory, is packed already, or its
            pretrained vectors cannot be read.
        ValueError: An unknown ``dtype``.
    """
    if dtype not in _DTYPES:
        raise ValueError(f"dtype {dtype!r}: expected one of {', '.join(_DTYPES)}")
    source, target = Path(source), Path(target)
    files = read_model_files(source)
    if files.packed:
        raise CheckpointError(f"{source}: already packed")
    model, vocabs, config = load_model_dir(files, overrides=ModelOverrides(open_vocabulary=False))
    state = model.state_dict()
    weight = state[_EMBEDDING]
    try:
        table = load_embeddings(config.embeddings)
    except (OSError, ImportError, ValueError) as err:
        raise CheckpointError(f"{source}: cannot read its pretrained vectors "
                              f"{config.embeddings!r} ({err})") from None
    dropped = set() if table is None else set(pretrained_rows(vocabs.words, weight, *table))
    kept = [i for i in range(len(vocabs.words)) if i not in dropped]
    words = Vocab(vocabs.words.lookup(kept), pad_token=vocabs.words.pad_token,
                  unk_token=vocabs.words.unk_token)
    state[_EMBEDDING] = weight[torch.tensor(kept, dtype=torch.long)]
    packed = Vocabularies(words, vocabs.chars, vocabs.labels)

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        staging.chmod(0o777 & ~_umask())
        packed.save(staging)
        (staging / "config.json").write_text(_packed_config(source), encoding="utf-8")
        for name in ("lm.json", SPEEDS_FILE):
            if (source / name).is_file():
                shutil.copyfile(source / name, staging / name)
        stored = _stored(state, _DTYPES[dtype], keep_float32)
        if int8_embeddings:
            stored = quantized_state({**stored, _EMBEDDING: state[_EMBEDDING]}, (_EMBEDDING,))
        (staging / "model.pt").write_bytes(checkpoint_bytes({"model": stored}))
        files = sorted(p.name for p in staging.iterdir())
        manifest = {
            "format": PACK_FORMAT, "version": PACK_VERSION, "run": source.resolve().name,
            "dtype": dtype,
            "keep_float32": list(keep_float32), "embeddings": config.embeddings,
            **({"int8_rows": [_EMBEDDING]} if int8_embeddings else {}),
            "words": len(words), "dropped_words": len(dropped),
            "files": {name: file_sha256(staging / name) for name in files},
        }
        (staging / MANIFEST).write_text(json.dumps(seal(manifest), indent=2) + "\n",
                                        encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    size = sum(p.stat().st_size for p in target.iterdir())
    return PackSummary(target, len(words), len(dropped), dtype, size)


__all__ = ["PackSummary", "pack_model_dir", "pretrained_rows"]
