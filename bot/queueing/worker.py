"""The RQ worker ``ichor-bot worker`` runs: RQ's ``SimpleWorker``, plus what keeps a crash from
leaving a check stuck and a Redis outage from stopping the worker.

- A ``SimpleWorker`` runs jobs in its own process (adapters, tokens and parsed facts carry from
  one job to the next), so nothing watches a job from outside: a keeper thread renews the
  running job's heartbeat every ``heartbeat`` seconds, with a lease of ``heartbeat_ttl``
  seconds, and runs the reaper (:mod:`bot.queueing.recovery`) every ``reap_interval``. A job
  whose worker dies is back on the queue within ``heartbeat_ttl + grace + 2 * reap_interval``
  seconds (under 40 s with the defaults).
- The keeper also queues the sweep (``workers.sweep``: GitHub redeliveries and the reconciler,
  design.md 7) when the worker starts and every ``ICHOR_RECONCILE_INTERVAL`` seconds: one
  worker of all does, the one that takes the interval's lock (``SET NX EX``).
- Every Redis call the worker makes is retried with backoff for up to ``redis_outage``
  seconds (redis-py reconnects on each try), so a worker that finishes a job while Redis is
  away waits, and records the result once Redis is back, instead of exiting with the job
  ``started``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.client import PubSubWorkerThread
from redis.retry import Retry
from rq import Queue, SimpleWorker
from rq.executions import Execution
from rq.job import Job
from rq.job_lifecycle import call_exception_handlers

from bot.queueing.base import SWEEP_FUNCTION, JobEndedError
from bot.queueing.recovery import reap_abandoned, running_key
from bot.settings import Settings
from bot.state import keys as key_names

log = logging.getLogger("ichor.worker")
_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
_BACKOFF_CAP = 1.0  # seconds between tries when Redis is away
_READER_JOIN = 1.0  # seconds a teardown gives the pubsub reader; it is a daemon thread
SWEEP_RESULT_TTL = 24 * 3600  # a sweep's summary is kept a day
_SAFE = re.compile(r"[^A-Za-z0-9_-]")  # what RQ takes in a job id


@dataclass(frozen=True, slots=True)
class SweepTimer:
    """How often the sweep is queued (seconds; 0: never) and how long it may run."""

    interval: float
    job_timeout: int

    @classmethod
    def from_settings(cls, settings: Settings) -> SweepTimer:
        return cls(settings.reconcile_interval, settings.job_timeout)


@dataclass(frozen=True, slots=True)
class Timings:
    heartbeat: float
    heartbeat_ttl: int
    reap_interval: float

    @property
    def grace(self) -> float:
        """How long a lease must stay missing before its job is taken for abandoned: two
        heartbeats and a reconnect, so a live worker back from a Redis outage renews first."""
        return 2 * self.heartbeat + _BACKOFF_CAP

    @classmethod
    def from_settings(cls, settings: Settings) -> Timings:
        return cls(
            settings.worker_heartbeat, settings.job_heartbeat_ttl, settings.worker_reap_interval
        )


def worker_connection(url: str, outage_seconds: float) -> redis.Redis:
    """A client whose every call rides out ``outage_seconds`` of Redis being unreachable."""
    tries = max(1, math.ceil(outage_seconds / _BACKOFF_CAP) + 5)
    retry = Retry(ExponentialWithJitterBackoff(cap=_BACKOFF_CAP, base=0.05), tries)
    return redis.Redis.from_url(
        url,
        retry=retry,
        retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError],
        socket_connect_timeout=2,
    )


class IchorWorker(SimpleWorker):
    def __init__(
        self,
        queues: list[Queue],
        *,
        connection: redis.Redis,
        timings: Timings,
        sweep: SweepTimer | None = None,
        alive_file: Path | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            queues,
            connection=connection,
            # RQ's own registry maintenance runs on the same period as the reaper, which goes
            # first (clean_registries), so RQ never retries an abandoned job on its own.
            maintenance_interval=max(1, int(timings.reap_interval)),
            **kwargs,
        )
        self.timings = timings
        self.sweep = sweep
        self.alive_file = alive_file
        self._running: tuple[Job, Execution] | None = None
        self._running_lock = threading.Lock()
        self._stop_keeper = threading.Event()
        self._burst = False  # set by work()

    # -- the running job's lease --------------------------------------------------------------
    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        # RQ's own view (its registry score); it lapses a minute after the lease, so RQ's
        # clean-up never moves a job the reaper has not judged first.
        return self.timings.heartbeat_ttl + 60

    def prepare_execution(self, job: Job) -> Execution:
        # The lease first: a registry entry without one is taken for a leftover.
        self.connection.set(running_key(job.id), self.name, px=self._lease_ms)
        execution = super().prepare_execution(job)
        with self._running_lock:
            self._running = (job, execution)
        return execution

    def execute_job(self, job: Job, queue: Queue) -> None:
        try:
            super().execute_job(job, queue)
        finally:
            with self._running_lock:
                self._running = None
                with contextlib.suppress(*_DOWN):
                    self.connection.delete(running_key(job.id))

    @property
    def _lease_ms(self) -> int:
        return self.timings.heartbeat_ttl * 1000

    def renew_lease(self) -> None:
        with self._running_lock:
            if self._running is None:
                return
            job, execution = self._running
            self.maintain_heartbeats(job, execution)
            self.connection.set(running_key(job.id), self.name, px=self._lease_ms)

    # -- abandoned jobs -----------------------------------------------------------------------
    def reap(self) -> None:
        for queue in self.queues:
            reap_abandoned(
                self.connection,
                queue,
                lock_seconds=self.timings.reap_interval * 0.8,
                grace_seconds=self.timings.grace,
            )

    def clean_registries(self) -> None:
        self.reap()
        super().clean_registries()  # type: ignore[no-untyped-call]

    # -- the sweep ------------------------------------------------------------------------
    def queue_sweep(self) -> bool:
        """Queue the sweep, unless another worker did within the interval; whether queued."""
        sweep = self.sweep
        if sweep is None or sweep.interval <= 0 or not self.queues:
            return False
        queue = self.queues[0]
        lock = key_names.sweep_lock(queue.name)
        if not self.connection.set(lock, self.name, nx=True, ex=max(1, int(sweep.interval))):
            return False
        queue.enqueue(
            SWEEP_FUNCTION,
            job_id=f"sweep-{_SAFE.sub('-', queue.name)}-{uuid.uuid4().hex[:12]}",
            job_timeout=sweep.job_timeout,
            result_ttl=SWEEP_RESULT_TTL,
            failure_ttl=SWEEP_RESULT_TTL,
            description="sweep: GitHub redeliveries and the reconciler",
        )
        log.info("worker %s queued the sweep", self.name)
        return True

    # -- failed jobs ----------------------------------------------------------------------
    def handle_exception(self, job: Job, *exc_info: Any) -> None:
        if isinstance(exc_info[1], JobEndedError):
            # A failure the job chose, with its reason: one line, no traceback.
            log.error("job %s failed: %s", job.id, exc_info[1])
            call_exception_handlers(self._exc_handlers, job, *exc_info)
            return
        super().handle_exception(job, *exc_info)

    # -- the pubsub reader ---------------------------------------------------------------------
    def unsubscribe(self) -> None:
        # RQ sends UNSUBSCRIBE, then stops its reader, and redis-py's stop() joins it with no
        # timeout. A reader that takes the reply before the stop flag is down goes back to wait,
        # for RQ's 60 s poll, on a subscription that never comes: every exit hung a minute.
        # Down with the flag first, then UNSUBSCRIBE: the reply wakes the reader, which quits.
        # RQ annotates the reader as None (it is set in subscribe()).
        thread: PubSubWorkerThread | None = getattr(self, "pubsub_thread", None)
        pubsub = self.pubsub
        if thread is None or pubsub is None:
            return
        log.debug("worker %s: unsubscribing from %s", self.name, self.pubsub_channel_name)
        thread.stop(timeout=0)  # the flag only; the reader is a daemon, never waited out
        with contextlib.suppress(*_DOWN):
            pubsub.unsubscribe()  # type: ignore[no-untyped-call]
        thread.join(timeout=_READER_JOIN)
        if not thread.is_alive():
            pubsub.close()

    # -- the loop -----------------------------------------------------------------------------
    def run_maintenance_tasks(self) -> None:
        # RQ 3.0 starts its scheduler here whenever none runs, in burst mode too: a process
        # forked from this one while the pubsub reader and the keeper are running, which can
        # inherit a lock one of them held and never stop, and the worker then waits for it at
        # exit (a `worker --burst` hung past two minutes). A burst worker enqueued the scheduled
        # jobs when it started and ends with the queue: it only cleans the registries.
        if self._burst:
            self.clean_registries()
            self.clean_group_registries()  # type: ignore[no-untyped-call]
            return
        super().run_maintenance_tasks()  # type: ignore[no-untyped-call]

    def work(self, *args: Any, **kwargs: Any) -> bool:
        self._burst = bool(kwargs.get("burst", False))
        try:
            self.queue_sweep()  # at start-up: what was missed while no worker ran
        except Exception:  # the worker's own jobs come first; the keeper tries again
            log.exception("worker %s: the sweep could not be queued", self.name)
        keeper = threading.Thread(target=self._keep, name="ichor-keeper", daemon=True)
        keeper.start()
        try:
            return bool(super().work(*args, **kwargs))
        finally:
            self._stop_keeper.set()
            keeper.join(timeout=5)

    def _say_alive(self) -> None:
        """Touch the probe's file (a round that waits on Redis touches it late)."""
        if self.alive_file is None:
            return
        try:
            self.alive_file.touch()
        except OSError as exc:
            log.warning("worker %s: cannot touch %s: %s", self.name, self.alive_file, exc)

    def _keep(self) -> None:
        period = min(self.timings.heartbeat, self.timings.reap_interval)
        next_reap = time.monotonic()
        interval = self.sweep.interval if self.sweep is not None else 0.0
        next_sweep = time.monotonic() + interval
        self._say_alive()
        while not self._stop_keeper.wait(period):
            self._say_alive()
            try:
                self.renew_lease()
                if time.monotonic() >= next_reap:
                    next_reap = time.monotonic() + self.timings.reap_interval
                    self.reap()
                if interval > 0 and time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + interval
                    self.queue_sweep()
            except Exception:  # the keeper must outlive any one failure; the log says why
                log.exception("worker %s: heartbeat or reaper failed", self.name)
