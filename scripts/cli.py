"""The tools' ``argparse`` types: a bad value is one line, ``error: ...``, exit code 2, while
the command line is parsed (:class:`~train.errors.ArgumentParser`; after it, the tool raises
:class:`~train.errors.UsageError` and :func:`~train.errors.run_tool` says it in one line).
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

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
def _int(text: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def range_problem(value: float, low: float | None, high: float | None) -> str | None:
    """``must be >= low and <= high, got value`` when ``value`` is outside, else ``None``."""
    return None if in_range(value, low, high) else f"must be {range_text(low, high)}, got {value}"


def require_in(option: str, value: int, low: int | None = None,
               high: int | None = None) -> int:
    """:func:`int_in`'s check for a value that comes without the command line."""
    problem = range_problem(value, low, high)
    if problem:
        raise UsageError(f"{option}: {problem}")
    return value


def int_in(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An ``argparse`` type: an integer in ``[low, high]`` (either bound may be left open).

    ``--points -1`` with ``int_in(2, 100000)`` exits 2 with
    ``error: --points: must be >= 2 and <= 100000, got -1``."""

    def check(text: str) -> int:
        value = _int(text)
        problem = range_problem(value, low, high)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return value

    check.__name__ = "integer"
    return check


def float_in(low: float | None = None, high: float | None = None,
             inclusive: tuple[bool, bool] = (True, True)) -> Callable[[str], float]:
    """An ``argparse`` type: a finite float in the range (bounds excluded where ``inclusive``
    says so)."""

    def check(text: str) -> float:
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or not in_range(value, low, high, inclusive):
            what = range_text(low, high, inclusive) or "finite"
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value

    check.__name__ = "number"
    return check


positive_int = int_in(1)
seed_int = int_in(0, MAX_SEED)


# ----------------------------------------------------------------------------- devices
def device_name(text: str) -> str:
    """An ``argparse`` type: ``cpu``, ``cuda`` or ``cuda:N``, usable on this machine (an absent
    GPU is an error here, not after the data has loaded)."""
    name = text.strip().lower()
    match = _DEVICE.fullmatch(name)
    if match is None or (match.group(1) == "cpu" and match.group(2)):
        raise argparse.ArgumentTypeError(f"must be cpu, cuda or cuda:N, got {text!r}")
    if match.group(1) == "cpu":
        return name
    import torch

    if not torch.cuda.is_available():
        raise argparse.ArgumentTypeError(f"{text!r}: no CUDA device is available here "
                                         "(use cpu)")
    index = int(match.group(3) or 0)
    count = torch.cuda.device_count()
    if index >= count:
        raise argparse.ArgumentTypeError(
            f"{text!r}: this machine has {count} visible GPU(s) (cuda:0 to cuda:{count - 1})")
    return name


# ----------------------------------------------------------------------------- split ratio
def split_ratio(text: str) -> list[float]:
    """An ``argparse`` type: train/val/test fractions, parsed as the config's
    ``data.split_ratio`` is (``0.6,0.2,0.2`` or ``60/20/20``)."""
    try:
        return parse_split_ratio(text, where="--split_ratio")
    except ConfigError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--split_ratio: ")) from None


# ----------------------------------------------------------------------------- outputs
def check_output(path: str | os.PathLike, kind: str, option: str = "--out",
                 suffixes: Sequence[str] | None = None) -> Path:
    """``path`` (``~`` expanded) when a ``kind`` can be written there (see
    :func:`output_problem`), else :class:`~train.errors.UsageError` naming ``option``."""
    problem = output_problem(path, kind, suffixes)
    if problem:
        raise UsageError(f"{option}: {problem}")
    return Path(os.path.expanduser(os.fspath(path)))


def _path(kind: str, suffixes: Sequence[str] | None = None,
          writable: bool = True) -> Callable[[str], Path]:
    """An ``argparse`` type: a ``kind`` (file or folder) that can be written (see
    :func:`~data.files.output_problem`); ``~`` is expanded."""

    def check(text: str) -> Path:
        problem = output_problem(text, kind, suffixes, writable)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return Path(os.path.expanduser(text))

    check.__name__ = "path"
    return check


def out_file(suffixes: Sequence[str] | None = None) -> Callable[[str], Path]:
    return _path("file", suffixes)


out_folder = _path("folder")
# A data folder is read, and written (generated or downloaded data) only when the data is not
# there yet: whether it may be written is left to the loader.
data_folder = _path("folder", writable=False)


def split_extra(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """A tool's own arguments and those after ``--`` (passed on to every cell's main script)."""
    argv = list(argv)
    if "--" not in argv:
        return argv, []
    i = argv.index("--")
    return argv[:i], argv[i + 1:]
