"""Locks by key that exist only while someone holds or waits for them.

A worker lives for days and sees a new key (a pull request, a sha) for almost every job: a map
that kept every lock it ever made would grow for the worker's whole life.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Hashable, Iterator


class KeyedLocks:
    """Jobs of one process that use the same key take turns; different keys never wait."""

    def __init__(self) -> None:
        self._locks: dict[Hashable, tuple[threading.Lock, list[int]]] = {}
        self._guard = threading.Lock()  # the map itself, between threads

    def __len__(self) -> int:
        """How many keys are held or awaited right now."""
        return len(self._locks)

    @contextlib.contextmanager
    def hold(self, key: Hashable) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.setdefault(key, (threading.Lock(), [0]))
            users[0] += 1
        try:
            with lock:
                yield
        finally:
            with self._guard:
                users[0] -= 1
                if not users[0]:
                    del self._locks[key]
