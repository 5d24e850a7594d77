"""Process-group set-up for ``torchrun`` (gloo on CPU, nccl on GPU)."""

from __future__ import annotations

import os

import torch
import torch.distributed as dist


def init_distributed(device: str = "auto") -> None:
    """Initialise the default process group from the ``torchrun`` environment."""
    if dist.is_initialized():
        return
    use_cuda = device != "cpu" and torch.cuda.is_available()
    backend = "nccl" if use_cuda else "gloo"
    if use_cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend=backend)


def cleanup_distributed() -> None:
    """Destroy the process group if one is up."""
    if dist.is_initialized():
        dist.destroy_process_group()
