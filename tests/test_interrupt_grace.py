"""A stop requested during a long phase without a safe point (the first epoch's compilation, a
long evaluation) takes effect after ``GRACE_S`` seconds, not when the phase ends; one that
reaches a safe point in time raises there and nothing later."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from train import interrupts
from train.interrupts import Interrupted, check, deferred, handle_interrupts


@pytest.fixture
def short_grace(monkeypatch):
    monkeypatch.setattr(interrupts, "GRACE_S", 0.5)


def _signal_soon(signum: int = signal.SIGTERM, after: float = 0.1) -> None:
    threading.Timer(after, os.kill, (os.getpid(), signum)).start()


def slow_phase(seconds: float) -> None:
    """A stand-in for compilation: Python and sleeps, no safe point."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(range(1000))
        time.sleep(0.01)


def test_a_stop_during_a_long_phase_raises_after_the_grace(short_grace):
    with handle_interrupts(), deferred():
        _signal_soon()
        t0 = time.monotonic()
        with pytest.raises(Interrupted) as stop:
            slow_phase(20)
        waited = time.monotonic() - t0
    assert stop.value.signum == signal.SIGTERM
    assert 0.5 <= waited < 3, waited  # the grace, not the 20-s phase


def test_a_stop_that_reaches_a_safe_point_raises_there_only(short_grace):
    with handle_interrupts(), deferred():
        _signal_soon()
        slow_phase(0.3)  # within the grace
        with pytest.raises(Interrupted):
            check()
        slow_phase(1.0)  # past the grace: the timer was stopped, nothing raises now
        check()


def test_the_grace_timer_ends_with_the_block(short_grace):
    """A signal pending when its block ends (the work it would have stopped is done) does not
    raise into whatever runs after it."""
    with handle_interrupts():
        with deferred():
            _signal_soon()
            slow_phase(0.3)
        assert interrupts.pending()
    slow_phase(1.0)
