"""Ctrl-C and SIGTERM, stopped at a safe point: the one place that handles them. Inside
:func:`deferred` a signal sets a flag that :func:`check` (between batches and epochs) raises on;
outside it raises at once. Why, and the repeat and grace rules: docs/reproducing.md, "Signals".
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
#: Seconds a deferred signal waits for a safe point before it raises where the program is.
GRACE_S = 5.0


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or SIGTERM; ``run_dir``: the run folder, once the runner has made one."""

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
    escalate = False  # set by the grace watchdog: the next delivery raises the pending signal
    watchdog: _Watchdog | None = None


class _Watchdog:
    """Delivers a deferred signal still waiting after :data:`GRACE_S` again to the main thread.
    Started with the handlers: a signal handler must not start a thread (a lock may be held)."""

    def __init__(self) -> None:
        self.armed, self.closing = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._run, name="interrupt-grace", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.closing.is_set():
            self.armed.wait()
            self.armed.clear()
            if self.closing.wait(GRACE_S):
                return
            waiting = _State.pending
            if waiting is not None and _State.defer:
                _State.escalate = True
                signal.pthread_kill(threading.main_thread().ident, waiting)

    def close(self) -> None:
        self.closing.set()
        self.armed.set()


def _handler(signum: int, frame) -> None:
    if os.getpid() != _State.owner:
        # A forked child that kept the inherited handler (a multiprocessing pool worker; data-
        # loader workers replace it, see ignore_in_worker): end as the signal's default would.
        # Pool.terminate() stops its workers with SIGTERM and waits for them to end.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    if _State.escalate:  # the grace timer's delivery: raise if the signal still waits
        _State.escalate = False
        if _State.defer:
            check()
        return
    now = time.monotonic()
    if _State.first is None:
        _State.first = now
        if _State.defer:
            _State.pending = signum
            _State.watchdog.armed.set()
            return
    elif now - _State.first < SAME_REQUEST_S:
        return  # the first request, delivered twice
    else:  # a second request (the first may be stuck in cleanup): raise now; a third kills
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
    _State.pending = None
    raise Interrupted(signum)


def _defaults_in_child() -> None:
    """A forked child gets the default actions back: it may never run Python (a lock held)."""
    if _State.owner is not None and _State.owner != os.getpid():
        for sig in SIGNALS:
            if signal.getsignal(sig) is _handler:
                signal.signal(sig, signal.SIG_DFL)


os.register_at_fork(after_in_child=_defaults_in_child)


def ignore_in_worker(worker_id: int = 0) -> None:
    """A data-loader ``worker_init_fn``: the worker ignores SIGINT and SIGTERM (after torch's)."""
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
    """SIGINT and SIGTERM raise :class:`Interrupted` inside this block (in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = (_State.owner, _State.defer, _State.pending, _State.first, _State.watchdog)
    _State.owner, _State.defer, _State.pending, _State.first = os.getpid(), False, None, None
    _State.watchdog = _Watchdog()
    previous = {sig: signal.signal(sig, _handler) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _State.watchdog.close()  # after the handlers: none can arm it while it closes
        (_State.owner, _State.defer, _State.pending, _State.first, _State.watchdog) = saved
        _State.escalate = False


@contextmanager
def deferred() -> Iterator[None]:
    """Inside this block a (first) signal only sets the flag that :func:`check` raises on."""
    outer = _State.defer
    _State.defer = True
    try:
        yield
    finally:
        _State.defer = outer


def _raise_at_once(signum: int, frame) -> None:
    raise Interrupted(signum)


@contextmanager
def startup(note: str = "nothing was written") -> Iterator[None]:
    """Ctrl-C or SIGTERM while an entry point imports: ``interrupted: <note>``, not a traceback."""
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
