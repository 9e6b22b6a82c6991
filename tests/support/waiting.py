"""Waiting for what a test cannot be told about (a server that started, a spool drained, a file
written by another process): polled, with a bound that only stops a hang. The bound is
generous so a loaded machine passes; no test asserts how long anything took."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

BOUND = 120.0  # seconds


def wait_until(
    condition: Callable[[], object], what: str, *, bound: float = BOUND, step: float = 0.02
) -> None:
    """Until ``condition()`` is true; an AssertionError naming ``what`` after ``bound`` s.
    An exception from ``condition`` counts as "not yet" (a server still starting)."""
    deadline = time.monotonic() + bound
    while True:
        with contextlib.suppress(Exception):
            if condition():
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {bound:.0f} s")
        time.sleep(step)
