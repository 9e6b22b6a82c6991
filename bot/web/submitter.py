"""Hands deliveries from request handlers to the queue, many per round trip.

One task on the event loop takes everything pending (up to a batch), drains the spool first
so arrival order is kept, and submits the rest in one call. Under load the next batch forms
while the previous one is in flight; when idle, a single delivery goes through at once. It
runs on the event loop itself: a thread would contend with the handlers for the GIL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bot.queueing.base import DeliveryQueue, Outcome, QueuedDelivery, QueueUnavailableError
from bot.queueing.spool import Spool, spool_or_refuse

log = logging.getLogger("ichor.submitter")
MAX_BATCH = 256
DRAIN_INTERVAL_SECONDS = 2.0

_Pending = tuple[QueuedDelivery, "asyncio.Future[Outcome]"]


class Submitter:
    def __init__(self, queue: DeliveryQueue, spool: Spool) -> None:
        self.queue = queue
        self.spool = spool
        self._pending: asyncio.Queue[_Pending] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._spooled = bool(spool.files())

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="ichor-submitter")

    async def submit(self, delivery: QueuedDelivery) -> Outcome:
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        await self._pending.put((delivery, future))
        return await future

    async def _run(self) -> None:
        while True:
            try:
                first = await asyncio.wait_for(self._pending.get(), DRAIN_INTERVAL_SECONDS)
            except TimeoutError:
                await self._drain_spool()
                continue
            batch = [first]
            while len(batch) < MAX_BATCH and not self._pending.empty():
                batch.append(self._pending.get_nowait())
            await self._submit(batch)

    async def _drain_spool(self) -> bool:
        """True when the spool is empty afterwards."""
        if not self._spooled:
            return True
        try:
            moved = await asyncio.to_thread(self.spool.drain, self.queue)
        except Exception:
            log.exception("draining the spool failed")
            return False
        if moved:
            log.info("drained %d spooled deliveries into the queue", moved)
        self._spooled = bool(self.spool.files())
        return not self._spooled

    async def _submit(self, batch: list[_Pending]) -> None:
        deliveries = [d for d, _ in batch]
        try:
            if not await self._drain_spool():
                raise QueueUnavailableError("spool not yet drained")  # keep arrival order
            outcomes = await self.queue.asubmit_many(deliveries)
        except QueueUnavailableError as exc:
            log.warning("queue unavailable (%s): spooling %d deliveries", exc, len(batch))
            outcomes = await asyncio.to_thread(spool_or_refuse, self.spool, deliveries)
            self._spooled = True
        except Exception as exc:  # never leave a request hanging
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), outcome in zip(batch, outcomes, strict=True):
            if not future.done():
                future.set_result(outcome)

    def drain_now(self) -> int:
        """Drain the spool from the caller's thread (start-up, before serving)."""
        try:
            return self.spool.drain(self.queue)
        except Exception:
            log.exception("draining the spool failed")
            return 0
        finally:
            self._spooled = bool(self.spool.files())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
