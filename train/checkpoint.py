"""Checkpoints and run states (``state.pt``): the one place that encodes and reads them. Both
are plain values and tensors, loaded with ``torch.load(weights_only=True)``: no code is
unpickled. Where they are written: :mod:`train.run_folder`.
"""

from __future__ import annotations

import io as _io
import os
import pickle
import random
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from nets.gnn_net import NetIO
from nets.registry import build_net
from train.config import apply_overrides
from train.errors import CheckpointError, first_line

REQUIRED = ("state_dict", "config", "io")


def to_bytes(obj: dict[str, Any]) -> bytes:
    """``torch.save`` in memory, for one atomic write (not a failure inside torch's zip writer)."""
    buffer = _io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _load(path: str | os.PathLike) -> Any:
    with warnings.catch_warnings():  # torch warns about foreign pickles before refusing them
        warnings.simplefilter("ignore")
        return torch.load(path, map_location="cpu", weights_only=True)


def checkpoint_bytes(weights: dict[str, torch.Tensor], cfg: dict[str, Any], io: NetIO,
                     seed: int, run: int, epoch: int) -> bytes:
    """A checkpoint of the net's ``state_dict`` ``weights``, encoded."""
    return to_bytes({"state_dict": weights, "config": cfg, "io": io.as_dict(), "seed": seed,
                     "run": run, "epoch": epoch})


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """The checkpoint dict at ``path``, on the CPU; :class:`CheckpointError` if it is not one."""
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"{path} is a directory, not a checkpoint file")
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        ckpt = _load(path)
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
    """The checkpoint's net with its weights loaded (CPU, eval mode), for data of sizes ``io``.
    Its config is read by the current schema: a key added since takes its default, which is
    the behaviour from before the key existed."""
    cfg = apply_overrides(ckpt["config"], {}, "the checkpoint's config", recorded=True)
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


# ----------------------------------------------------------------------------- run state
#: The state file of a run folder: what an unfinished run needs to continue.
STATE_FILE = "state.pt"
#: Version of the state file's layout; a state of another version is refused, not guessed at.
STATE_FORMAT = 1


class ResumeError(CheckpointError):
    """A run folder that cannot be continued (another config, other data, a damaged state)."""


def state_bytes(state: dict[str, Any]) -> bytes:
    """A run's state encoded with its format version and a digest: torch checks no checksum on
    reading, so a flipped byte would otherwise load silently."""
    return to_bytes({"format": STATE_FORMAT, "digest": state_digest(state), "state": state})


def load_state(path: str | os.PathLike) -> dict[str, Any]:
    """The state saved at ``path`` (on the CPU); :class:`ResumeError` if it is not whole."""
    try:
        saved = _load(path)
    except Exception as err:  # a truncated or garbled zip fails in many ways, all meaning "no"
        raise ResumeError(f"the run state {path} is damaged or truncated "
                          f"({first_line(err)[:120]})") from None
    if not isinstance(saved, dict) or not {"format", "digest", "state"} <= set(saved):
        raise ResumeError(f"{path} is not a run state of this project")
    if saved["format"] != STATE_FORMAT:
        raise ResumeError(f"the run state {path} has format {saved['format']}, this code reads "
                          f"format {STATE_FORMAT}")
    if saved["digest"] != state_digest(saved["state"]):
        raise ResumeError(f"the run state {path} is damaged (its contents do not match its "
                          "digest)")
    return saved["state"]


def state_digest(obj: Any) -> str:
    """A CRC-32 (it tells damage, not tampering) of nested dicts, lists, scalars and tensors,
    independent of dict order."""
    crc, todo = 0, [obj]
    while todo:  # depth first, in order
        value = todo.pop()
        if isinstance(value, torch.Tensor):
            flat = value.detach().cpu().contiguous().reshape(-1)
            crc = zlib.crc32(f"T{value.dtype}{tuple(value.shape)}".encode(), crc)
            if flat.numel():
                crc = zlib.crc32(flat.view(torch.uint8).numpy(), crc)
        elif isinstance(value, dict):
            crc = zlib.crc32(f"D{len(value)}".encode(), crc)
            todo += reversed([x for key in sorted(value, key=repr) for x in (key, value[key])])
        elif isinstance(value, (list, tuple)):
            crc = zlib.crc32(f"L{len(value)}".encode(), crc)
            todo += reversed(value)
        else:
            crc = zlib.crc32(f"V{value!r};".encode(), crc)
    return f"crc32:{crc:08x}"


def rng_state(generator: torch.Generator | None = None) -> dict[str, Any]:
    """The random states a run draws from (torch, CUDA, numpy, ``random``, ``generator``)."""
    _, keys, pos, has_gauss, gauss = np.random.get_state()
    version, internal, gauss_next = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        # only where CUDA is in use: asking starts it on every visible device
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else [],
        "numpy": [torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss),
                  float(gauss)],
        "python": [version, list(internal), gauss_next],
        "loader": generator.get_state() if generator is not None else None,
    }


def set_rng_state(state: dict[str, Any], generator: torch.Generator | None = None) -> None:
    """Put back what :func:`rng_state` saved."""
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    keys, pos, has_gauss, gauss = state["numpy"]
    np.random.set_state(("MT19937", keys.numpy().astype(np.uint32), pos, has_gauss, gauss))
    version, internal, gauss_next = state["python"]
    random.setstate((version, tuple(internal), gauss_next))
    if generator is not None and state["loader"] is not None:
        generator.set_state(state["loader"])


@dataclass
class Progress:
    """What a seed's epoch loop carries besides the modules (``epoch``: the last finished)."""

    epoch: int = -1
    best_epoch: int = -1
    best_state: dict[str, torch.Tensor] | None = None
    epoch_times: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0
    stop_reason: str | None = None  # set once the run has decided to stop (early stop, min_lr)
    scalars: list[dict[str, float]] = field(default_factory=list)  # tensorboard's, per epoch
    # [device, first epoch] per stretch of epochs on one device: a run resumed elsewhere (a GPU
    # call's state continued on a CPU) says so in its record
    devices: list[list] = field(default_factory=list)

    def on_device(self, device: str, epoch: int) -> None:
        if not self.devices or self.devices[-1][0] != device:
            self.devices.append([device, epoch])

    def device_text(self) -> str:
        """``cpu``, or ``cuda:0 (epochs 0-41), then cpu (from epoch 42)``."""
        if len(self.devices) == 1:
            return self.devices[0][0]
        parts = [f"{dev} (epochs {first}-{nxt[1] - 1})"
                 for (dev, first), nxt in zip(self.devices, self.devices[1:])]
        return ", then ".join([*parts, f"{self.devices[-1][0]} (from epoch {self.devices[-1][1]})"])
