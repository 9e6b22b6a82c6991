"""The web process's record of every delivery it answered, kept for the status page.

``note`` is what a handler calls: it appends to a bounded buffer and returns, so a delivery's
answer never waits on the history store. The buffer is written in batches off the event loop
shortly after; when the store is down the oldest unwritten entries are dropped, never queued
without bound.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable

from bot.state.history import DeliveryEntry, HistoryStore

log = logging.getLogger("ichor.web")
_BUFFER = 1_000
_BATCH_DELAY_SECONDS = 0.05  # collects a burst of deliveries into one write


class DeliveryLog:
    def __init__(
        self,
        store: HistoryStore,
        *,
        timeout: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.timeout = timeout
        self.clock = clock
        self._pending: deque[DeliveryEntry] = deque(maxlen=_BUFFER)
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def note(
        self,
        forge: str,
        status: int,
        outcome: str,
        reason: str = "",
        *,
        event: str = "-",
        repository: str = "-",
        delivery_id: str = "-",
        job_id: str | None = None,
    ) -> None:
        entry = DeliveryEntry(
            self.clock(), forge, status, outcome, reason, event, repository, delivery_id, job_id
        )
        self._pending.append(entry)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush_soon())

    async def _flush_soon(self) -> None:
        await asyncio.sleep(_BATCH_DELAY_SECONDS)
        await self.flush()

    async def flush(self, *, wait: bool = True) -> None:
        """Write what is buffered (a page calls this first, so it shows the newest).

        ``wait=False`` returns at once while another write is under way: a page must not queue
        behind a store that hangs.
        """
        if not wait and self._lock.locked():
            return
        async with self._lock:
            batch = list(self._pending)
            self._pending.clear()
            if not batch:
                return
            try:
                await asyncio.wait_for(
                    asyncio.to_thread(self.store.add_deliveries, batch), self.timeout
                )
            except Exception as exc:  # the answer was sent; only the page misses the entries
                log.warning("could not keep %d deliveries for the status page: %s", len(batch), exc)
