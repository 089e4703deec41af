"""The interrupt guard: a signal or a deadline that lands in a finaliser is not lost."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from pisa_mm.runner.guard import Interrupted, OutOfTime, interruptible, limited

_HOOK = sys.unraisablehook  # pytest's own, put back after each deadline


class _SignalsInItsFinaliser:
    def __del__(self) -> None:
        # the handler runs here, where Python would print and drop what it raises
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass


def test_a_signal_delivered_inside_a_finaliser_still_stops_the_run() -> None:
    with pytest.raises(Interrupted) as caught, interruptible():
        _SignalsInItsFinaliser()  # dropped at once: its __del__ runs now
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            time.sleep(0.01)
    assert caught.value.signum == signal.SIGTERM


class _BusyFinaliser:
    def __del__(self) -> None:
        # the deadline fires here, where Python would print and drop the OutOfTime
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            pass


def test_a_deadline_delivered_inside_a_finaliser_still_stops_the_test() -> None:
    reached_the_end = False
    with pytest.raises(OutOfTime), limited(0.05, None):
        _BusyFinaliser()  # dropped at once: its __del__ outlasts the budget
        end = time.monotonic() + 5
        while time.monotonic() < end:
            pass
        reached_the_end = True
    assert not reached_the_end
    assert sys.unraisablehook is _HOOK


def test_no_redelivery_outlives_the_deadline() -> None:
    with pytest.raises(OutOfTime), limited(0.05, None):
        _BusyFinaliser()
    time.sleep(0.2)  # a redelivery that escaped stop() would raise here
