"""A worker's liveness and readiness probe: ``python -m bot.cli.probe FILE SECONDS`` exits 0
when ``FILE`` (``ICHOR_WORKER_ALIVE_FILE``) was touched within ``SECONDS``, else 1 with why.

It imports nothing of the bot, so a probe every few seconds costs an interpreter's start and
one ``stat``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence


def problem(path: str, seconds: float, now: float) -> str | None:
    """Why ``path`` does not show a live worker, or None when it does."""
    try:
        age = now - os.stat(path).st_mtime
    except OSError as exc:
        return f"{path}: {exc.strerror or exc} (the worker has not started its heartbeat)"
    if age > seconds:
        return f"{path} was last touched {age:.0f}s ago (the limit is {seconds:g}s)"
    return None


def main(argv: Sequence[str], clock: Callable[[], float] = time.time) -> int:
    if len(argv) != 2:
        print("usage: python -m bot.cli.probe FILE SECONDS", file=sys.stderr)
        return 2
    try:
        seconds = float(argv[1])
    except ValueError:
        print(f"SECONDS must be a number, not {argv[1]!r}", file=sys.stderr)
        return 2
    why = problem(argv[0], seconds, clock())
    if why is not None:
        print(why, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
