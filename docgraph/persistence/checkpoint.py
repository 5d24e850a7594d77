"""Atomic, safe persistence: checkpoints are written to a temporary file and renamed, and
read back with ``torch.load(..., weights_only=True)`` so no arbitrary object is ever unpickled."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from docgraph.persistence.archive import CheckpointError, damage_message
from docgraph.runtime.atomic import (  # noqa: F401 - re-exported for callers
    atomic_write,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
)

FORMAT_VERSION = 1


def checkpoint_bytes(state: dict[str, Any]) -> bytes:
    """The bytes :func:`save_checkpoint` writes for ``state``: equal states give equal bytes
    (``torch.save`` to a file would name the archive's root folder after the file's random
    temporary name)."""
    buffer = io.BytesIO()
    torch.save({"format_version": FORMAT_VERSION, **state}, buffer)
    return buffer.getvalue()


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """Atomically save a dictionary of tensors and plain Python values with ``torch.save``."""
    atomic_write_bytes(path, checkpoint_bytes(state))


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Load a checkpoint written by :func:`save_checkpoint`, safely (``weights_only=True``).

    Raises:
        CheckpointError: The file is missing, corrupt, not a docgraph checkpoint, or was
            written by an incompatible format version.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: checkpoint not found")
    damage = damage_message(path)
    if damage is not None:
        raise CheckpointError(damage)
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:
        raise CheckpointError(f"{path}: not a readable docgraph checkpoint "
                              f"({_first_sentence(err)})") from err
    if not isinstance(state, dict) or "format_version" not in state:
        raise CheckpointError(f"{path}: not a docgraph checkpoint (no format_version)")
    if state["format_version"] != FORMAT_VERSION:
        raise CheckpointError(
            f"{path}: checkpoint format {state['format_version']} is not supported "
            f"(this docgraph reads format {FORMAT_VERSION})"
        )
    return state


def _first_sentence(err: BaseException) -> str:
    """The first sentence of an error message (PyTorch's go on about their internals)."""
    text = " ".join(str(err).split()) or type(err).__name__
    head, dot, _ = text.partition(". ")
    return head + ("." if dot else "")


#: The key of a tensor stored by the rows that differ from a reference (:func:`changed_rows`).
ROWS = "changed_rows"


def changed_rows(tensor: Tensor, reference: Tensor | None = None) -> Tensor | dict[str, Any]:
    """``tensor`` as a checkpoint stores it: a 2-D tensor of which fewer than half the rows
    differ from ``reference`` (zeros when ``None``) as those rows and their indices
    (``{ROWS: shape, "index": ..., "values": ...}``); any other tensor as it is. The rows of
    an embedding that a run never reads stay its starting rows, and their optimiser state
    zeros."""
    if tensor.dim() != 2 or tensor.size(0) < 2 or not tensor.is_floating_point():
        return tensor
    if reference is None:
        differ = tensor.ne(0).any(dim=1)
    elif reference.shape != tensor.shape or reference.dtype != tensor.dtype:
        return tensor
    else:
        differ = tensor.ne(reference).any(dim=1)
    index = differ.nonzero().squeeze(1)
    if 2 * index.numel() >= tensor.size(0):
        return tensor
    return {ROWS: list(tensor.shape), "index": index, "values": tensor[index].clone()}


def full_rows(value: Any, reference: Tensor | None = None) -> Any:
    """The tensor that :func:`changed_rows` stored as ``value`` (``value`` itself when it is
    not such a record), rebuilt on ``reference`` (zeros when ``None``).

    Raises:
        CheckpointError: The record does not fit ``reference``.
    """
    if not (isinstance(value, dict) and ROWS in value):
        return value
    shape = tuple(value[ROWS])
    values = value["values"]
    if reference is None:
        out = values.new_zeros(shape)
    elif tuple(reference.shape) != shape:
        raise CheckpointError(f"a tensor stored by its changed rows has shape {list(shape)}, "
                              f"but the run's starting one {list(reference.shape)}")
    else:
        out = reference.detach().clone().to(values.dtype)
    out[value["index"]] = values
    return out
