"""Hands deliveries from request handlers to the queue, many per round trip.

One task on the event loop takes everything pending (up to a batch), drains the spool first
so arrival order is kept, and submits the rest in one call. Under load the next batch forms
while the previous one is in flight; when idle, a single delivery goes through at once. It
runs on the event loop itself: a thread would contend with the handlers for the GIL.

Every wait on Redis is bounded by ``timeout``: a submit that gets no answer in time is spooled
(the queue's dedupe settles it if it did arrive). After a failure, deliveries are spooled at
once, without waiting on Redis, for the next ``DRAIN_INTERVAL_SECONDS``; then one batch tries
again (a drain of the spool first, to keep arrival order). A drain still in flight — a hung
Redis holds its thread until the socket times out — is never waited for twice.
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
    def __init__(self, queue: DeliveryQueue, spool: Spool, timeout: float) -> None:
        self.queue = queue
        self.spool = spool
        self.timeout = timeout
        self._pending: asyncio.Queue[_Pending] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._spooled = bool(spool.files())
        self._drain: asyncio.Future[tuple[int, bool]] | None = None
        self._down_until = 0.0  # loop time before which Redis is not waited on

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="ichor-submitter")

    async def submit(self, delivery: QueuedDelivery) -> Outcome:
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        await self._pending.put((delivery, future))
        return await future

    async def _run(self) -> None:
        await self._drain_spool()  # what an earlier run left, first (bounded: it may go on)
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
        """True when the spool is empty afterwards (within ``timeout``)."""
        if not self._spooled:
            return True
        if self._drain is not None and not self._drain.done():
            return False  # the last drain still waits on Redis: do not queue up behind it
        self._drain = asyncio.ensure_future(asyncio.to_thread(self._drain_and_look))
        try:
            moved, left = await asyncio.wait_for(asyncio.shield(self._drain), self.timeout)
        except TimeoutError:
            self._set_down()
            return False
        except Exception:
            log.exception("draining the spool failed")
            self._set_down()
            return False
        if moved:
            log.info("drained %d spooled deliveries into the queue", moved)
        self._spooled = left
        return not left

    def _drain_and_look(self) -> tuple[int, bool]:
        """(deliveries moved, whether any are left); in a thread: disk and synchronous Redis."""
        moved = self.spool.drain(self.queue)
        return moved, bool(self.spool.files())

    def _set_down(self) -> None:
        self._down_until = asyncio.get_running_loop().time() + DRAIN_INTERVAL_SECONDS

    async def _submit(self, batch: list[_Pending]) -> None:
        deliveries = [d for d, _ in batch]
        resting = asyncio.get_running_loop().time() < self._down_until
        try:
            if resting:
                raise QueueUnavailableError("it failed moments ago")
            if not await self._drain_spool():
                raise QueueUnavailableError("spool not yet drained")  # keep arrival order
            async with asyncio.timeout(self.timeout):  # no task per batch, unlike wait_for
                outcomes = await self.queue.asubmit_many(deliveries)
        except (QueueUnavailableError, TimeoutError) as exc:
            if not resting:  # once per try, not for every batch spooled behind it
                why = str(exc) or f"no answer in {self.timeout:g} s"
                log.warning("queue unavailable (%s): spooling %d deliveries", why, len(batch))
                self._set_down()
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

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
