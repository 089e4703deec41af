"""The interrupt guard: a signal that lands in a finaliser is not lost."""

from __future__ import annotations

import os
import signal
import time

import pytest

from pisa_mm.runner.guard import Interrupted, interruptible


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
