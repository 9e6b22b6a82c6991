"""Locks by key that exist only while someone holds or waits for them.

A worker lives for days and sees a new key (a pull request, a sha) for almost every job: a map
that kept every lock it ever made would grow for the worker's whole life.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Hashable


class KeyedLocks:
    """Jobs of one process that use the same key take turns; different keys never wait."""

    def __init__(self) -> None:
        self._locks: dict[Hashable, tuple[asyncio.Lock, list[int]]] = {}

    def __len__(self) -> int:
        """How many keys are held or awaited right now."""
        return len(self._locks)

    @contextlib.asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        lock, users = self._locks.setdefault(key, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[key]
