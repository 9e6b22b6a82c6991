"""A clock a test sets by hand, for code and fakes that take one instead of reading the time."""

from __future__ import annotations

import time


class ManualClock:
    """Seconds since the epoch that change only when the test says so.

    It starts at the current whole second by default: a token signed at this time must still
    be accepted by a library that checks it against the real clock.
    """

    def __init__(self, start: float | None = None) -> None:
        self.now = float(int(time.time())) if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
