"""Ctrl-C and SIGTERM, stopped at a safe point: the one place that handles them.

Raising from a signal handler stops the program wherever it happens to be. Inside a library
that is handing work to a thread at that moment (tensorboardX's event queue, a data loader's
queues) that thread can be left waiting, and the exit then waits forever on it. So while training,
a signal only sets a flag; the training loop calls :func:`check` between batches and epochs, and
that raises :class:`Interrupted` there, where every writer can be closed. A second signal (while
waiting for that point, or while closing up after it) raises at once, and a third ends the
process with the signal's default action. A repeat within :data:`SAME_REQUEST_S` seconds of the
first counts as the same request: Slurm signals every process of a job and a sweep passes the
signal on to its cells, so a cell commonly receives one request twice. Before anything that
needs care has started (reading the data, checking the command line) signals raise at once, as
Python's own Ctrl-C does::

    with handle_interrupts():           # SIGINT and SIGTERM raise Interrupted
        load_data()
        with deferred():                # ... now they only set the flag
            for batch in batches:
                check()                 # raises Interrupted if a signal came

Exit codes: 130 after SIGINT, 143 after SIGTERM (``128 + signal number``, the shell's way).
Data-loader worker processes ignore both signals (:func:`ignore_in_worker`; Slurm signals every
process of a job): the main process shuts its workers down when it stops. Any other forked child
(a multiprocessing pool building superpixel graphs) ends on a signal as it would by default:
``Pool.terminate()`` relies on that. A worker dying of the
signal instead would make torch raise an error in the main process wherever it happens to be.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

SIGNALS = (signal.SIGINT, signal.SIGTERM)
SAME_REQUEST_S = 2.0


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or SIGTERM (``kill``, a Slurm time limit).

    ``run_dir``: the run folder holding what was finished, once the runner has made one."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)
        self.run_dir = None

    @property
    def word(self) -> str:
        """``terminated`` (SIGTERM) or ``interrupted`` (Ctrl-C)."""
        return "terminated" if self.signum == signal.SIGTERM else "interrupted"


def as_interrupted(err: KeyboardInterrupt) -> Interrupted:
    """``err`` as an :class:`Interrupted` (a plain ``KeyboardInterrupt`` is Ctrl-C)."""
    return err if isinstance(err, Interrupted) else Interrupted(signal.SIGINT)


def exit_code(err: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 143 for SIGTERM."""
    return 128 + as_interrupted(err).signum


class _State:
    owner: int | None = None  # the process that installed the handlers (not its forks)
    defer = False  # inside deferred(): signals set `pending` instead of raising
    pending: int | None = None  # the signal waiting for the next check()
    first: float | None = None  # when the first signal arrived (time.monotonic)


def _handler(signum: int, frame) -> None:
    if os.getpid() != _State.owner:
        # A forked child that kept the inherited handler (a multiprocessing pool worker; data-
        # loader workers replace it, see ignore_in_worker): end as the signal's default would.
        # Pool.terminate() stops its workers with SIGTERM and waits for them to end.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    now = time.monotonic()
    if _State.first is None:
        _State.first = now
        if _State.defer:
            _State.pending = signum
            return
    elif now - _State.first < SAME_REQUEST_S:
        return  # the first request, delivered twice
    else:  # a second request (the first may be stuck in cleanup): raise now; a third kills
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
    _State.pending = None
    raise Interrupted(signum)


def _defaults_in_child() -> None:
    """In a child forked while the handlers are installed, right after the fork: the signals'
    default actions back. ``_handler`` would end such a child too, but only once the child runs
    Python again; a child forked while another thread held a lock (a compiler's or a writer's
    thread) may never do so, and with a Python-level handler SIGTERM could not end it."""
    if _State.owner is not None and _State.owner != os.getpid():
        for sig in SIGNALS:
            if signal.getsignal(sig) is _handler:
                signal.signal(sig, signal.SIG_DFL)


os.register_at_fork(after_in_child=_defaults_in_child)


def ignore_in_worker(worker_id: int = 0) -> None:
    """A data-loader ``worker_init_fn``: the worker ignores SIGINT and SIGTERM (it runs after
    torch's own worker handlers, which would end the worker on SIGTERM)."""
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def check() -> None:
    """Raise :class:`Interrupted` if a signal arrived since the last call (a safe point)."""
    signum = _State.pending
    if signum is not None:
        _State.pending = None
        raise Interrupted(signum)


def pending() -> bool:
    """Whether a signal waits for the next :func:`check`."""
    return _State.pending is not None


@contextmanager
def handle_interrupts() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` inside this block (the previous handlers
    come back after it). Outside the main thread, where Python cannot install handlers, the
    block runs with the handlers as they are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _handler) for sig in SIGNALS}
    saved = (_State.owner, _State.defer, _State.pending, _State.first)
    _State.owner, _State.defer, _State.pending, _State.first = os.getpid(), False, None, None
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _State.owner, _State.defer, _State.pending, _State.first = saved


@contextmanager
def deferred() -> Iterator[None]:
    """Inside this block a (first) signal only sets the flag that :func:`check` raises on.

    A signal still waiting when the block ends stays for the next :func:`check` (the work it
    would have stopped is done)."""
    outer = _State.defer
    _State.defer = True
    try:
        yield
    finally:
        _State.defer = outer


def _raise_at_once(signum: int, frame) -> None:
    raise Interrupted(signum)


@contextmanager
def startup(note: str) -> Iterator[None]:
    """Ctrl-C or SIGTERM while an entry point imports its libraries (its first seconds): one
    line, ``interrupted: <note>`` or ``terminated: <note>``, and exit code 130 / 143, instead of
    Python's traceback from deep inside an import (or a silent SIGTERM). This module imports
    only the standard library, so it can come first."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_at_once) if main else None
    try:
        yield
    except KeyboardInterrupt as err:
        print(f"{as_interrupted(err).word}: {note}", file=sys.stderr)
        raise SystemExit(exit_code(err)) from None
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
