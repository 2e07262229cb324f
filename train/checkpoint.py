"""Checkpoints: the one place that writes and reads them.

A checkpoint is a ``torch.save`` of a plain dict — ``state_dict`` (the net's weights),
``config`` (the resolved experiment config), ``io`` (the net's input/output sizes, see
:class:`~nets.gnn_net.NetIO`), ``seed``, ``run`` and ``epoch`` — so it loads with
``torch.load(weights_only=True)``: no code is unpickled, whichever torch wrote it.
"""

from __future__ import annotations

import io as _io
import os
import pickle
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from nets.gnn_net import NetIO
from nets.registry import build_net
from train.cli import first_line
from train.results import write_atomic

REQUIRED = ("state_dict", "config", "io")


class CheckpointError(ValueError):
    """A file that is not a usable checkpoint of this project; the message says why."""


def save_checkpoint(path: str | os.PathLike, model: nn.Module, cfg: dict[str, Any], io: NetIO,
                    seed: int, run: int, epoch: int) -> None:
    """Write atomically: a crash or a full disk mid-write leaves the previous checkpoint in
    place and no temporary file (:class:`~data.files.WriteError` names the folder).

    The checkpoint is serialised in memory first, so a failed write is a plain ``OSError`` of
    the file, not one of torch's own errors from inside its zip writer."""
    buffer = _io.BytesIO()
    torch.save({"state_dict": model.state_dict(), "config": cfg, "io": io.as_dict(),
                "seed": seed, "run": run, "epoch": epoch}, buffer)
    write_atomic(path, buffer.getvalue())


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """The checkpoint dict at ``path``, on the CPU; :class:`CheckpointError` if it is not one."""
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"{path} is a directory, not a checkpoint file")
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        with warnings.catch_warnings():  # torch warns about foreign pickles before refusing them
            warnings.simplefilter("ignore")
            ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise CheckpointError(f"{path} is not a readable checkpoint (not written by torch.save, "
                              "or it holds objects other than tensors and plain values)") from None
    except Exception as err:  # garbage makes torch.load fail in many ways, all meaning "no"
        raise CheckpointError(f"{path} is not a readable checkpoint "
                              f"({first_line(err)[:160]})") from None
    if not isinstance(ckpt, dict) or not set(REQUIRED) <= set(ckpt):
        what = "a plain state dict" if isinstance(ckpt, dict) and ckpt and all(
            isinstance(v, torch.Tensor) for v in ckpt.values()) else type(ckpt).__name__
        raise CheckpointError(
            f"{path} holds {what}, not a checkpoint of this project (a dict with "
            f"{', '.join(REQUIRED)}, written by the main scripts)")
    wrong = [key for key in REQUIRED if not isinstance(ckpt[key], dict)]
    if wrong or not isinstance(ckpt["config"].get("model"), str):
        what = f"its {wrong[0]} is {type(ckpt[wrong[0]]).__name__}" if wrong else \
            "its config names no model"
        raise CheckpointError(f"{path} is not a usable checkpoint of this project: {what}, not "
                              "what the main scripts write")
    return ckpt


def model_from_checkpoint(ckpt: dict[str, Any], io: NetIO | None = None) -> nn.Module:
    """The checkpoint's net with its weights loaded (CPU, eval mode).

    ``io``: the sizes of the data it will be used on; a mismatch with the checkpoint's is a
    :class:`CheckpointError`.
    """
    cfg = ckpt["config"]
    try:
        saved = NetIO.from_dict(ckpt["io"])
    except TypeError as err:  # sizes missing: another program's "io"
        raise CheckpointError(f"the checkpoint's input/output sizes are incomplete ({err})"
                              ) from None
    if io is not None and io != saved:
        raise CheckpointError(f"the data does not match the checkpoint: the data gives {io}, "
                              f"the checkpoint was trained on {saved}")
    try:
        net = build_net(cfg["model"], saved, cfg["net_params"])
        net.load_state_dict(ckpt["state_dict"])
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
        detail = " ".join(lines[1:2] or lines[:1])  # the first mismatch, not the heading
        raise CheckpointError(f"the checkpoint's weights do not fit its model "
                              f"{cfg.get('model')!r}: {detail[:200]}") from None
    return net.eval()
