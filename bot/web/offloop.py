"""Blocking calls (synchronous Redis) made from request handlers without blocking the loop.

Each call runs on a small pool of its own and is waited for at most ``timeout`` seconds; past
that, or when every thread is still busy with earlier calls (a hung Redis holds a thread until
its socket times out), the handler gets ``default`` at once. So a page that needs Redis
answers in bounded time, and a hung Redis costs at most ``threads`` threads, never a queue of
work that grows with each request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger("ichor.web")


class OffLoop:
    def __init__(self, timeout: float, threads: int = 4, name: str = "ichor-look") -> None:
        self.timeout = timeout
        self.threads = threads
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)
        self._in_flight = 0

    @property
    def busy(self) -> bool:
        return self._in_flight >= self.threads

    async def call(self, fn: Callable[[], T], default: T) -> T:
        if self.busy:
            return default
        self._in_flight += 1
        loop = asyncio.get_running_loop()
        future: Future[T] = self._pool.submit(fn)
        future.add_done_callback(lambda _: self._finished_from(loop))
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout)
        except TimeoutError:
            return default
        except Exception:  # a page shows "unknown" rather than failing
            log.exception("a look-up for a page failed")
            return default

    def _finished_from(self, loop: asyncio.AbstractEventLoop) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed at shutdown
            loop.call_soon_threadsafe(self._finished)

    def _finished(self) -> None:
        self._in_flight -= 1

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
