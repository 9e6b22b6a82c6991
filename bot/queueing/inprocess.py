"""The embedded default: the same job functions, run by a thread of the web process.

No Redis, no durability across restarts — for ``make run`` and for trying the bot. Dedupe
and "a failed job may run again" behave as on Redis. The job function comes in already bound
to the worker's context; heads are recorded in the state store it is given, as the Redis
queue records them with each job.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from bot.queueing.base import JobEndedError, Outcome, QueuedDelivery
from bot.state.base import HeadStore

log = logging.getLogger("ichor.queue")
# What runs a delivery: ``workers.jobs.handle_delivery``'s arguments, its context bound.
JobRunner = Callable[[str, str, dict[str, Any]], Any]


class InProcessDeliveryQueue:
    def __init__(self, run: JobRunner, heads: HeadStore) -> None:
        self._run_job = run
        self._heads = heads
        self._states: dict[str, str] = {}
        self._results: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  # a job finished or failed
        self._pending: queue.Queue[QueuedDelivery | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="ichor-jobs", daemon=True)
        self._thread.start()

    def submit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        outcomes = []
        with self._lock:
            for delivery in deliveries:
                state = self._states.get(delivery.job_id)
                if state is None or state == "failed":
                    outcomes.append(Outcome.QUEUED if state is None else Outcome.REQUEUED)
                    if (head := delivery.head) is not None:
                        self._heads.record_head(*head, redelivery=state is not None)
                    self._states[delivery.job_id] = "queued"
                    self._pending.put(delivery)
                else:
                    outcomes.append(Outcome.DUPLICATE)
        return outcomes

    async def asubmit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        return self.submit_many(deliveries)  # a dict and a queue.Queue: never blocks for long

    def _run(self) -> None:
        function = self._run_job
        while (delivery := self._pending.get()) is not None:
            self._set(delivery.job_id, "started")
            try:
                result = function(delivery.forge, delivery.delivery_id, delivery.event)
            except JobEndedError as exc:  # failed on purpose, with its reason: no traceback
                log.error("job %s failed: %s", delivery.job_id, exc)
                self._set(delivery.job_id, "failed")
            except Exception:
                log.exception("job %s failed", delivery.job_id)
                self._set(delivery.job_id, "failed")
            else:
                with self._lock:
                    self._results[delivery.job_id] = result
                self._set(delivery.job_id, "finished")

    def _set(self, job_id: str, state: str) -> None:
        with self._lock:
            self._states[job_id] = state
            self._settled.notify_all()

    def wait(self, job_id: str, timeout: float) -> str | None:
        """The job's state once it has finished or failed, waiting up to ``timeout`` seconds
        for that (for ``make run``'s demo and tests: an event, not a poll)."""
        with self._lock:
            self._settled.wait_for(
                lambda: self._states.get(job_id) in ("finished", "failed"), timeout
            )
            return self._states.get(job_id)

    def job_state(self, job_id: str) -> str | None:
        with self._lock:
            return self._states.get(job_id)

    def job_result(self, job_id: str) -> Any:
        with self._lock:
            return self._results.get(job_id)

    def depth(self) -> int:
        return self._pending.qsize()

    def states(self) -> dict[str, int]:
        with self._lock:
            return dict(Counter(self._states.values()))

    def ping(self) -> bool:
        return self._thread.is_alive()

    def close(self) -> None:
        self._pending.put(None)
        self._thread.join(timeout=5)
