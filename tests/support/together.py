"""Calls made at the same moment from threads of their own, as jobs of one process would."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def together(*calls: Callable[[], T]) -> list[T]:
    """Each call on its own thread, all started at once; their results in order (the first
    exception, if any, is raised)."""
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        futures = [pool.submit(call) for call in calls]
        return [f.result() for f in futures]
