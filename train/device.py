"""Choosing the device: CUDA when asked for and usable, the CPU otherwise (with one log line)."""

from __future__ import annotations

import logging

import torch

from train.errors import DeviceError, first_line

log = logging.getLogger(__name__)


def select_device(use_gpu: bool, gpu_id: int, from_command_line: bool = False) -> torch.device:
    """``cuda:<gpu_id>`` when requested and usable, else the CPU (one warning). A GPU id that
    does not exist is an error from ``--gpu_id``, GPU 0 with a warning from a config file (the
    authors' ZINC config names GPU 1). No CUDA context is created here: :func:`check_device`."""
    if not use_gpu:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        log.warning("CUDA requested (gpu.use=true) but no GPU is available: running on CPU")
        return torch.device("cpu")
    count = torch.cuda.device_count()
    if gpu_id >= count:
        if from_command_line:
            raise DeviceError(f"--gpu_id {gpu_id}: this machine has {count} visible GPU(s) "
                              f"(ids 0-{count - 1}; CUDA_VISIBLE_DEVICES may hide others)")
        log.warning("the config asks for GPU %d but %d is/are visible: using GPU 0", gpu_id,
                    count)
        gpu_id = 0
    return torch.device("cuda", gpu_id)


def check_device(device: torch.device) -> None:
    """Run one small kernel on ``device``: a torch build without kernels for this GPU fails
    here, in one line, not deep inside training."""
    if device.type != "cuda":
        return
    try:
        torch.cuda.set_device(device)
        (torch.ones(2, device=device) * 2).sum().item()
    except (RuntimeError, AssertionError) as err:
        raise DeviceError(f"{device} ({torch.cuda.get_device_name(device)}) cannot run this "
                          f"torch build ({torch.__version__}): {first_line(err)}") from None
