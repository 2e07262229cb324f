"""Command-line parsing and exit codes shared by every entry point and tool.

The conventions (the main scripts' ones, here in one place for the tools):

* bad input is one line on stderr, ``error: <what is wrong and what to do>``, exit code 2, and is
  found before any work is done or any file written: value checkers for ``argparse``
  (:func:`int_in`, :func:`float_in`, :func:`device_name`, :func:`split_ratio`,
  :func:`out_file`, :func:`out_folder`) reject a value while the command line is parsed;
* :func:`run_tool` runs a tool's ``main`` and maps what escapes it to the same exit codes as the
  main scripts (``train/runner.py``): 2 bad input, 1 failure (one line, a full disk naming the
  folder), 130 Ctrl-C, 143 SIGTERM.

This module imports nothing heavy at the top: the data modules' command lines use it, and the
config imports those modules.
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

# Sizes a tool may be asked for. Bounds that stop a typo from exhausting memory or time, far
# above any sensible value; each tool's --help states the ones it uses.
MAX_PLOT_POINTS = 100_000  # points of a frequency-response curve (201 by default)
MAX_CHEB_ORDER = 10_000  # Chebyshev moments of a spectral-density estimate (default 300)
MAX_EPOCHS = 100_000
MAX_BATCH_SIZE = 1_000_000
MAX_RUNS = 10_000
MAX_GRAPHS = 10_000_000  # graphs per split
MAX_WORKERS = 1_024
MAX_SEED = 2**32 - 1  # numpy's seeds are 32-bit
PLOT_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg")
# What Ctrl-C leaves of generated or cached data: files are written atomically, the metadata
# that marks a complete set last.
DATA_INTERRUPTED = "incomplete data files are never used; rerun the same command to finish"

_DEVICE = re.compile(r"(cpu|cuda)(:(\d+))?")


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line, ``error: ... (see --help)``,
    exit code 2, instead of the usage block followed by the error."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument "):  # "argument --points: ..." -> "--points: ..."
            message = message[len("argument "):]
        message = " ".join(message.split())
        if message.endswith("expected one argument"):  # also "--weight_decay -1e-9"
            option = message.split(":")[0]
            message += f" (a value that starts with - is written {option}=VALUE)"
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


class UsageError(ValueError):
    """A bad value found after parsing (e.g. a default derived from another argument); the
    message names the option. :func:`run_tool` exits 2."""


class OutputPathError(UsageError):
    """An output path that cannot be written; the message names it and says why."""


# ----------------------------------------------------------------------------- numbers
def _int(text: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _num(value: float) -> str:
    """An integer in full (``4294967295``), a float short (``1e-05``)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def _bounds_text(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"between {_num(low)} and {_num(high)}"
    return f">= {_num(low)}" if low is not None else f"<= {_num(high)}"


def range_problem(value: float, low: float | None, high: float | None) -> str | None:
    """``must be between low and high, got value`` when ``value`` is outside, else ``None``."""
    if (low is not None and value < low) or (high is not None and value > high):
        return f"must be {_bounds_text(low, high)}, got {value}"
    return None


def require_in(option: str, value: int, low: int | None = None,
               high: int | None = None) -> int:
    """``value`` if within the bounds, else :class:`UsageError` naming ``option`` — the check
    of :func:`int_in` for values that reach a function without the command line."""
    problem = range_problem(value, low, high)
    if problem:
        raise UsageError(f"{option}: {problem}")
    return value


def int_in(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An ``argparse`` type: an integer in ``[low, high]`` (either bound may be left open).

    ``--points -1`` with ``int_in(2, 100000)`` exits 2 with
    ``error: --points: must be between 2 and 100000, got -1``."""

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
        low_ok = low is None or (value >= low if inclusive[0] else value > low)
        high_ok = high is None or (value <= high if inclusive[1] else value < high)
        if not math.isfinite(value) or not (low_ok and high_ok):
            parts = []
            if low is not None:
                parts.append(f"{'>=' if inclusive[0] else '>'} {_num(low)}")
            if high is not None:
                parts.append(f"{'<=' if inclusive[1] else '<'} {_num(high)}")
            what = " and ".join(parts) if parts else "finite"
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value

    check.__name__ = "number"
    return check


positive_int = int_in(1)
seed_int = int_in(0, MAX_SEED)


# ----------------------------------------------------------------------------- devices
def device_name(text: str) -> str:
    """An ``argparse`` type: ``cpu``, ``cuda`` or ``cuda:N``, usable on this machine.

    Returns the name (``torch.device(name)`` builds it); a GPU that is absent or out of range is
    an error here rather than a failure after the data has been loaded."""
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
    from train.config import ConfigError, parse_split_ratio

    try:
        return parse_split_ratio(text, where="--split_ratio")
    except ConfigError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--split_ratio: ")) from None


# ----------------------------------------------------------------------------- outputs
def _limit(path: Path, name: str, default: int) -> int:
    try:
        return int(os.pathconf(path, name))
    except (OSError, ValueError):
        return default


def _nearest_existing(path: Path) -> Path:
    existing = path
    while not os.path.exists(existing) and existing != existing.parent:  # never raises
        existing = existing.parent
    return existing


def broken_link(path: Path) -> Path | None:
    """The first symbolic link on the way up from ``path`` (``path`` included) that cannot be
    followed, a loop or a link to nothing, or None. Such a path does not "exist", so without this
    check it passes as a folder to be created and ``mkdir`` then fails with "File exists"."""
    p = path
    while not os.path.exists(p) and p != p.parent:
        if os.path.islink(p):
            return p
        p = p.parent
    return None


def link_problem(path: Path) -> str | None:
    """Why ``path`` cannot be reached through a symbolic link on its way (:func:`broken_link`):
    the link and the system's reason, or None."""
    link = broken_link(path)
    if link is None:
        return None
    try:
        os.stat(link)
        return None  # repaired meanwhile
    except OSError as err:
        if err.errno == errno.ELOOP:
            return f"{link} is a symbolic link loop ({err.strerror})"
        return (f"{link} is a symbolic link to {os.readlink(link)}, which cannot be followed "
                f"({err.strerror})")


def output_problem(path: str | os.PathLike, kind: str, suffixes: Sequence[str] | None = None,
                   writable: bool = True) -> str | None:
    """Why a ``kind`` (``"file"`` or ``"folder"``) cannot be written at ``path``, or ``None``.

    Nothing is created: the check looks at the nearest existing folder on the way (``~`` is
    expanded). Empty names, names longer than the file system allows, a folder given for a file
    (or a file for a folder), a file on the way, and (``writable``) unwritable folders are
    problems."""
    text = os.fspath(path)
    if not text.strip():
        return "must not be empty"
    if "\0" in text:
        return "contains a NUL character"
    out = Path(os.path.expanduser(text)).absolute()
    link = link_problem(out)
    if link:
        return link if Path(text) == out else f"{text}: {link}"
    # a file's folder must be one; the file itself may exist (it is replaced)
    existing = _nearest_existing(out.parent if kind == "file" else out)
    name_max = _limit(existing, "PC_NAME_MAX", 255)
    long = [p for p in out.parts if len(os.fsencode(p)) > name_max]
    if long:
        return (f"the name {long[0][:40]}... is longer than the {name_max} bytes a file name may "
                "have here")
    if len(os.fsencode(str(out))) >= _limit(existing, "PC_PATH_MAX", 4096):
        return f"the path is too long ({len(str(out))} characters)"
    if kind == "file":
        if os.path.isdir(out) or text.endswith(("/", os.sep)):
            example = "out" + (suffixes[0] if suffixes else "")
            return f"{text} is a folder; give a file name, e.g. {Path(text) / example}"
        if suffixes and out.suffix.lower() not in suffixes:
            return f"{text}: the file name must end in {', '.join(suffixes)}"
    elif os.path.exists(out) and not os.path.isdir(out):
        return f"{text} is a file, not a folder"
    if not os.path.isdir(existing):
        return f"{text}: {existing} is a file, not a folder"
    if not writable:
        return None
    if kind == "file" and os.path.exists(out):
        return None if os.access(out, os.W_OK) else f"{text} exists and is not writable"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{text} is not writable" + ("" if existing == out else
                                            f" (its folder {existing} is not writable)")
    return None


def check_output(path: str | os.PathLike, kind: str, option: str = "--out",
                 suffixes: Sequence[str] | None = None) -> Path:
    """``path`` (``~`` expanded) when a ``kind`` can be written there (see
    :func:`output_problem`), else :class:`OutputPathError` naming ``option``."""
    problem = output_problem(path, kind, suffixes)
    if problem:
        raise OutputPathError(f"{option}: {problem}")
    return Path(os.path.expanduser(os.fspath(path)))


def out_file(suffixes: Sequence[str] | None = None) -> Callable[[str], Path]:
    """An ``argparse`` type: a file that can be written (see :func:`output_problem`)."""

    def check(text: str) -> Path:
        problem = output_problem(text, "file", suffixes)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return Path(os.path.expanduser(text))

    check.__name__ = "path"
    return check


def out_folder(text: str) -> Path:
    """An ``argparse`` type: a folder that can be created or written into."""
    problem = output_problem(text, "folder")
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return Path(os.path.expanduser(text))


def data_folder(text: str) -> Path:
    """An ``argparse`` type: a data folder, read or (for generated or downloaded data) written
    by the loader. Not empty (that would mean the working folder), not a file, names the file
    system can hold; whether it may be written is left to the loader, which needs to only when
    the data is not there yet."""
    problem = output_problem(text, "folder", writable=False)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return Path(os.path.expanduser(text))


# ----------------------------------------------------------------------------- exit codes
def _bad_input_errors() -> tuple[type[BaseException], ...]:
    """The exception types that mean "bad input" (exit 2), imported when needed (see the
    module docstring)."""
    from data.common import DataError
    from train.checkpoint import CheckpointError
    from train.config import ConfigError
    from train.device import DeviceError
    from train.results import OutputError

    return (UsageError, ConfigError, DataError, DeviceError, OutputError, CheckpointError)


def one_line(err: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(err).split()) or type(err).__name__


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (the exception's type when it has none): for
    messages that go on with detail (torch's, the compiler's) quoted inside a line of ours."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def failure_line(err: OSError) -> str:
    """One line for a failed write or read: a full disk names the folder."""
    from train.results import WriteError

    if isinstance(err, WriteError):  # already names the file and its folder
        return one_line(err)
    where = err.filename or err.filename2
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "no space left on device" if err.errno == errno.ENOSPC else "disk quota exceeded"
        if where:
            folder = os.path.dirname(os.path.abspath(os.fsdecode(where)))
            return f"{what} writing in {folder}: free some space there and rerun"
        return f"{what}: free some space and rerun"
    return f"{os.fsdecode(where)}: {err.strerror or err}" if where else one_line(err)


def run_tool(main: Callable[[Sequence[str] | None], Any], argv: Sequence[str] | None = None,
             interrupted: str | Callable[[], str | None] | None = None) -> int:
    """Run ``main(argv)`` and return the process exit code, the same way for every tool and as
    ``train/runner.py`` does for the main scripts.

    * 0: success (``main`` returning ``None`` or 0; ``--help``);
    * 2: bad input — argparse, :class:`UsageError`, ``ConfigError``, ``DataError``,
      ``DeviceError``, ``OutputError``, ``CheckpointError`` — one line ``error: ...``;
    * 1: any other failure, one line (a full disk names the folder; ``AUTOGCN_TRACEBACK=1``
      shows the traceback instead);
    * 130 Ctrl-C, 143 SIGTERM (:mod:`train.interrupts`): one line, ``interrupted`` or
      ``terminated``, then ``: <interrupted>`` when that text (or the function giving it, e.g.
      naming a run folder only when one exists) says something.
    """
    from train.interrupts import as_interrupted, exit_code, handle_interrupts

    try:
        with handle_interrupts():
            code = main(argv)
        return 0 if code is None else int(code)
    except SystemExit as exc:  # argparse (--help 0, errors 2) or a tool's own exit
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        note = interrupted() if callable(interrupted) else interrupted
        word = as_interrupted(exc).word
        print(f"{word}: {note}" if note else word, file=sys.stderr)
        return exit_code(exc)
    except Exception as exc:
        if isinstance(exc, _bad_input_errors()):
            print(f"error: {one_line(exc)}", file=sys.stderr)
            return 2
        if os.environ.get("AUTOGCN_TRACEBACK"):
            raise
        if isinstance(exc, OSError):
            print(f"error: {failure_line(exc)}", file=sys.stderr)
        else:
            print(f"error: {type(exc).__name__}: {one_line(exc)} (set AUTOGCN_TRACEBACK=1 for "
                  "the traceback)", file=sys.stderr)
        return 1
