"""The tools' ``argparse`` types: a bad value is one line, ``error: ...``, exit code 2, while
the command line is parsed (:class:`~train.errors.ArgumentParser`); after it, a tool raises
:class:`~train.errors.UsageError`, which :func:`~train.errors.run_tool` says in one line.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from data.files import output_problem
from train.config import MAX_SEED, in_range, parse_split_ratio, range_text
from train.errors import ArgumentParser as ArgumentParser  # the tools take it from here
from train.errors import ConfigError, UsageError

# Sizes a tool may be asked for. Bounds that stop a typo from exhausting memory or time, far
# above any sensible value; each tool's --help states the ones it uses.
MAX_PLOT_POINTS = 100_000  # points of a frequency-response curve (201 by default)
MAX_CHEB_ORDER = 10_000  # Chebyshev moments of a spectral-density estimate (default 300)
MAX_EPOCHS = 100_000
MAX_BATCH_SIZE = 1_000_000
MAX_RUNS = 10_000
MAX_GRAPHS = 10_000_000  # graphs per split
MAX_WORKERS = 1_024
PLOT_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg")
# What Ctrl-C leaves of generated or cached data: files are written atomically, the metadata
# that marks a complete set last.
DATA_INTERRUPTED = "incomplete data files are never used; rerun the same command to finish"

_DEVICE = re.compile(r"(cpu|cuda)(:(\d+))?")


# ----------------------------------------------------------------------------- numbers
def _number_in(kind: type, low: float | None = None, high: float | None = None,
               inclusive: tuple[bool, bool] = (True, True)) -> Callable[[str], Any]:
    """An ``argparse`` type: a finite ``kind`` (int or float) in the range, either bound open
    (``None``) or excluded where ``inclusive`` says so. ``--points -1`` with ``int_in(2,
    100000)`` exits 2 with ``error: --points: must be >= 2 and <= 100000, got -1``."""
    article, name = ("an", "integer") if kind is int else ("a", "number")

    def check(text: str) -> Any:
        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"expected {article} {name}, got {text!r}") from None
        if (kind is float and not math.isfinite(value)) or \
                not in_range(value, low, high, inclusive):
            what = range_text(low, high, inclusive) or "finite"
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value

    check.__name__ = name
    return check


int_in: Callable[..., Callable[[str], int]] = partial(_number_in, int)
float_in: Callable[..., Callable[[str], float]] = partial(_number_in, float)
seed_int = int_in(0, MAX_SEED)


# ----------------------------------------------------------------------------- devices and splits
def cuda_device_count() -> int:
    """The CUDA GPUs this process can use (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def device_name(text: str) -> str:
    """An ``argparse`` type: ``cpu``, ``cuda`` or ``cuda:N``, usable on this machine (an absent
    GPU is an error here, not after the data has loaded)."""
    name = text.strip().lower()
    match = _DEVICE.fullmatch(name)
    if match is None or (match.group(1) == "cpu" and match.group(2)):
        raise argparse.ArgumentTypeError(f"must be cpu, cuda or cuda:N, got {text!r}")
    count = None if match.group(1) == "cpu" else cuda_device_count()
    if count == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: no CUDA device is available here "
                                         "(use cpu)")
    if count is not None and int(match.group(3) or 0) >= count:
        raise argparse.ArgumentTypeError(
            f"{text!r}: this machine has {count} visible GPU(s) (cuda:0 to cuda:{count - 1})")
    return name


def split_ratio(text: str) -> list[float]:
    """An ``argparse`` type: train/val/test fractions, parsed as ``data.split_ratio`` is."""
    try:
        return parse_split_ratio(text, where="--split_ratio")
    except ConfigError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--split_ratio: ")) from None


# ----------------------------------------------------------------------------- outputs
def check_output(path: str | os.PathLike, kind: str, option: str = "--out",
                 suffixes: Sequence[str] | None = None) -> Path:
    """``path`` (``~`` expanded) if a ``kind`` can be written there, else a UsageError."""
    problem = output_problem(path, kind, suffixes)
    if problem:
        raise UsageError(f"{option}: {problem}")
    return Path(os.path.expanduser(os.fspath(path)))


def path_type(kind: str, suffixes: Sequence[str] | None = None,
              writable: bool = True) -> Callable[[str], Path]:
    """An ``argparse`` type: a writable ``kind`` (file or folder; ``~`` expanded)."""

    def check(text: str) -> Path:
        problem = output_problem(text, kind, suffixes, writable)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return Path(os.path.expanduser(text))

    check.__name__ = "path"
    return check


# A data folder is read, and written (generated or downloaded data) only when the data is not
# there yet: whether it may be written is left to the loader.
data_folder = path_type("folder", writable=False)


def split_extra(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """A tool's own arguments and those after ``--`` (passed on to every cell's main script)."""
    argv = list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    return argv[:cut], argv[cut + 1:]
