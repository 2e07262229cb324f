"""Choosing the device from the config: CUDA when asked for and usable, CPU otherwise."""

from __future__ import annotations

import logging

import torch

log = logging.getLogger(__name__)


class DeviceError(RuntimeError):
    """CUDA was requested but cannot be used with this installation."""


def dgl_has_cuda() -> bool:
    """Whether the installed DGL build can place graphs on a GPU."""
    import dgl

    try:
        dgl.graph(([0], [0])).to("cuda:0")
    except Exception:  # DGL raises DGLError (or others) when built without CUDA
        return False
    return True


def select_device(use_gpu: bool, gpu_id: int) -> torch.device:
    """``cuda:<gpu_id>`` when requested and available, else CPU (with one log line).

    Raises :class:`DeviceError` when a GPU exists but DGL is a CPU-only build.
    """
    if not use_gpu:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        log.warning("CUDA requested (gpu.use=true) but no GPU is available: running on CPU")
        return torch.device("cpu")
    if not 0 <= gpu_id < torch.cuda.device_count():
        # The authors' ZINC config names GPU 1; run it unchanged on a one-GPU machine.
        log.warning("GPU %d does not exist (%d visible): using GPU 0", gpu_id,
                    torch.cuda.device_count())
        gpu_id = 0
    torch.cuda.set_device(gpu_id)
    if not dgl_has_cuda():
        raise DeviceError(
            "CUDA requested but the installed DGL has no CUDA support: install DGL's CUDA wheel "
            "(see README, 'GPU'), or run on CPU with --use_gpu False"
        )
    return torch.device(f"cuda:{gpu_id}")
