"""Deliveries as RQ jobs on Redis, deduplicated by delivery id, two round trips per batch.

A marker ``ichor:delivery:<job id>`` is set with ``SET NX``; only the delivery that sets it is
enqueued. A marker whose job is gone (a crash between the two writes) or whose job failed
(a person clicked "redeliver") lets the delivery through again.

The web process submits from its event loop (``asubmit_many``, redis.asyncio): a second
thread doing the Redis work would fight the request handlers for the GIL, and every handover
costs a switch interval. Job records are RQ's own (``Job.create(...).to_dict()``), written
with a hash set and a queue push — what ``Job.save`` and ``Queue.push_job_id`` do.
"""

from __future__ import annotations

from typing import Any

import redis
import redis.asyncio
from rq import Queue, Retry
from rq.job import Job, JobStatus
from rq.utils import now

from bot.queueing.base import JOB_FUNCTION, Outcome, QueuedDelivery, QueueUnavailableError

MARKER_TTL_SECONDS = 7 * 24 * 3600
# Job hashes outlive their markers, so a marker always finds its job's state.
RESULT_TTL_SECONDS = MARKER_TTL_SECONDS + 3600
RETRY = Retry(max=3, interval=[10, 60, 300])
_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def marker_key(job_id: str) -> str:
    return f"ichor:delivery:{job_id}"


class RedisDeliveryQueue:
    def __init__(self, url: str, queue_name: str = "ichor") -> None:
        self.url = url
        self.redis = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)
        self.queue = Queue(queue_name, connection=self.redis)
        self._async: redis.asyncio.Redis | None = None

    # -- submitting ---------------------------------------------------------------------------
    def submit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        try:
            check = self.redis.pipeline(transaction=False)
            self._queue_checks(check, deliveries)
            outcomes, to_enqueue = self._decide(deliveries, check.execute())
            if to_enqueue:
                write = self.redis.pipeline()
                self._queue_writes(write, to_enqueue, outcomes)
                write.execute()
        except _DOWN as exc:
            raise QueueUnavailableError(str(exc)) from exc
        return outcomes

    async def asubmit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        if self._async is None:  # bound to the running loop on first use
            self._async = redis.asyncio.Redis.from_url(
                self.url, socket_timeout=5, socket_connect_timeout=2
            )
        try:
            check = self._async.pipeline(transaction=False)
            self._queue_checks(check, deliveries)
            outcomes, to_enqueue = self._decide(deliveries, await check.execute())
            if to_enqueue:
                write = self._async.pipeline()
                self._queue_writes(write, to_enqueue, outcomes)
                await write.execute()
        except _DOWN as exc:
            raise QueueUnavailableError(str(exc)) from exc
        return outcomes

    @staticmethod
    def _queue_checks(pipe: Any, deliveries: list[QueuedDelivery]) -> None:
        for delivery in deliveries:
            pipe.set(marker_key(delivery.job_id), "1", nx=True, ex=MARKER_TTL_SECONDS)
            pipe.hget(Job.key_for(delivery.job_id), "status")

    @staticmethod
    def _decide(
        deliveries: list[QueuedDelivery], replies: list[Any]
    ) -> tuple[list[Outcome], list[QueuedDelivery]]:
        outcomes: list[Outcome] = []
        to_enqueue: list[QueuedDelivery] = []
        seen_in_batch: set[str] = set()
        for index, delivery in enumerate(deliveries):
            fresh, status = replies[2 * index], replies[2 * index + 1]
            if delivery.job_id in seen_in_batch:
                outcomes.append(Outcome.DUPLICATE)
            elif fresh or status is None:
                outcomes.append(Outcome.QUEUED)
                to_enqueue.append(delivery)
            elif status.decode() == JobStatus.FAILED.value:
                outcomes.append(Outcome.REQUEUED)
                to_enqueue.append(delivery)
            else:
                outcomes.append(Outcome.DUPLICATE)
            seen_in_batch.add(delivery.job_id)
        return outcomes, to_enqueue

    def _queue_writes(
        self, pipe: Any, deliveries: list[QueuedDelivery], outcomes: list[Outcome]
    ) -> None:
        if Outcome.REQUEUED in outcomes:
            for delivery in deliveries:
                # A failed job sits in the failed registry: take it out before re-creating.
                pipe.zrem(self.queue.failed_job_registry.key, delivery.job_id)
        for delivery in deliveries:
            job = self._job(delivery)
            # Empty fields are left out: RQ reads a missing field as unset, and every field
            # costs encoding time in the web process.
            mapping = {k: v for k, v in job.to_dict().items() if v != ""}
            pipe.hset(job.key, mapping=mapping)
            pipe.rpush(self.queue.key, job.id)
        pipe.sadd(Queue.redis_queues_keys, self.queue.key)

    def _job(self, delivery: QueuedDelivery) -> Job:
        job = Job.create(
            JOB_FUNCTION,
            args=(delivery.forge, delivery.delivery_id, delivery.event),
            id=delivery.job_id,
            connection=self.redis,
            result_ttl=RESULT_TTL_SECONDS,
            failure_ttl=RESULT_TTL_SECONDS,
            description=f"{delivery.forge} {delivery.event_name} {delivery.delivery_id}",
            origin=self.queue.name,
            status=JobStatus.QUEUED,
        )
        job.retries_left = RETRY.max
        job.retry_intervals = RETRY.intervals
        job.enqueued_at = now()
        return job

    # -- looking -------------------------------------------------------------------------------
    def job_state(self, job_id: str) -> str | None:
        try:
            status = self.redis.hget(Job.key_for(job_id), "status")
        except _DOWN:
            return None
        return status.decode() if isinstance(status, bytes) else None

    def depth(self) -> int:
        try:
            return int(self.queue.count)
        except _DOWN:
            return -1

    def states(self) -> dict[str, int]:
        try:
            return {
                "queued": int(self.queue.count),
                "started": len(self.queue.started_job_registry),
                "finished": len(self.queue.finished_job_registry),
                "failed": len(self.queue.failed_job_registry),
                "scheduled": len(self.queue.scheduled_job_registry),
            }
        except _DOWN:
            return {}

    def ping(self) -> bool:
        try:
            return bool(self.redis.ping())
        except _DOWN:
            return False

    def close(self) -> None:
        self.redis.close()
