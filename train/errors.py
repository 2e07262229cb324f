"""The project's errors, their one-line form and the one mapping to exit codes, used by every
entry point (:func:`run_tool`): 0 success; 2 bad input (:data:`BAD_INPUT`), one line ``error:
...``; 1 a failure, in one line (``AUTOGCN_TRACEBACK=1``: the traceback); 130 Ctrl-C, 143 SIGTERM.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from data.common import DataError
from data.files import FULL_DISK, WriteError
from train import interrupts
from train.interrupts import Interrupted, as_interrupted, handle_interrupts


class UsageError(ValueError):
    """A bad value, an output folder that cannot be written or a device that cannot be used."""


class ConfigError(ValueError):
    """A configuration problem, with a message naming the offending key or value."""


class CheckpointError(ValueError):
    """A file that is not a usable checkpoint of this project; the message says why."""


class TrainingError(RuntimeError):
    """Training cannot go on; the message says why and what to change."""


class Diverged(TrainingError):
    """A loss became NaN or infinite (a failure, exit code 1)."""


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line, ``error: ... (see --help)``."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument "):  # "argument --points: ..." -> "--points: ..."
            message = message[len("argument "):]
        message = " ".join(message.split())
        if message.endswith("expected one argument"):  # also "--weight_decay -1e-9"
            option = message.split(":")[0]
            message += f" (a value that starts with - is written {option}=VALUE)"
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


BAD_INPUT = (UsageError, ConfigError, DataError, CheckpointError, TrainingError)


def one_line(err: BaseException) -> str:
    """An exception's message on one line (its type when it has none)."""
    return " ".join(str(err).split()) or type(err).__name__


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (its type when it has none)."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def failure_line(err: OSError) -> str:
    """One line for a failed write or read: a full disk names the folder."""
    if isinstance(err, WriteError):  # already names the file and its folder
        return one_line(err)
    where = err.filename or err.filename2
    if err.errno in FULL_DISK:
        what = "no space left on device" if err.errno == errno.ENOSPC else "disk quota exceeded"
        if where:
            folder = os.path.dirname(os.path.abspath(os.fsdecode(where)))
            return f"{what} writing in {folder}: free some space there and rerun"
        return f"{what}: free some space and rerun"
    return f"{os.fsdecode(where)}: {err.strerror or err}" if where else one_line(err)


def exit_code(err: BaseException) -> int:
    """The process exit code for ``err`` ending an entry point."""
    if isinstance(err, KeyboardInterrupt):
        return interrupts.exit_code(err)
    if isinstance(err, BAD_INPUT) and not isinstance(err, Diverged):
        return 2
    return 1


def run_tool(main: Callable[[Sequence[str] | None], Any], argv: Sequence[str] | None = None,
             interrupted: str | Callable[[Interrupted], str | None] | None = None) -> int:
    """Run ``main(argv)``; the exit code. ``interrupted``: what an interrupt leaves (or the
    function giving it from the interrupt), said after ``interrupted:`` / ``terminated:``."""
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
        stop = as_interrupted(exc)
        note = interrupted(stop) if callable(interrupted) else interrupted
        print(f"{stop.word}: {note}" if note else stop.word, file=sys.stderr)
        return exit_code(stop)
    except Exception as exc:
        code = exit_code(exc)
        if isinstance(exc, BAD_INPUT):
            line = one_line(exc)
        elif os.environ.get("AUTOGCN_TRACEBACK"):
            raise
        elif isinstance(exc, OSError):
            line = failure_line(exc)
        else:
            line = (f"{type(exc).__name__}: {one_line(exc)} (set AUTOGCN_TRACEBACK=1 for the "
                    "traceback)")
        print(f"error: {line}", file=sys.stderr)
        return code
