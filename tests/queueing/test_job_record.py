"""The queue's one write of RQ's keys (the submit script) against RQ's contract: the job it
leaves is the one RQ would enqueue, read back through RQ's public API."""

from __future__ import annotations

import uuid

from rq.job import Job, JobStatus

from bot.queueing.base import JOB_FUNCTION, QueuedDelivery
from bot.queueing.redis_queue import (
    RESULT_TTL_SECONDS,
    RETRY,
    RedisDeliveryQueue,
    job_record,
    marker_key,
)
from tests.support.redis_url import SHARED_REDIS_URL

EVENT = {"type": "ping", "forge": "github", "hook_id": None}


def test_a_submitted_delivery_is_a_queued_rq_job_with_its_retries() -> None:
    queue = RedisDeliveryQueue(SHARED_REDIS_URL, f"record-{uuid.uuid4().hex[:8]}")
    delivery = QueuedDelivery("github", f"d-{uuid.uuid4().hex[:8]}", "ping", EVENT)
    try:
        assert [o.value for o in queue.submit_many([delivery])] == ["queued"]
        job = Job.fetch(delivery.job_id, connection=queue.redis)
        assert job.func_name == JOB_FUNCTION
        assert list(job.args) == [delivery.forge, delivery.delivery_id, EVENT]
        assert job.get_status() == JobStatus.QUEUED
        assert job.origin == queue.queue.name
        assert (job.retries_left, job.retry_intervals) == (RETRY.max, RETRY.intervals)
        assert job.result_ttl == job.failure_ttl == RESULT_TTL_SECONDS
        assert job.timeout == queue.job_timeout
        assert queue.queue.job_ids == [delivery.job_id]
        assert queue.queue.key.encode() in queue.redis.smembers(queue.queue.redis_queues_keys)
    finally:
        queue.redis.delete(
            Job.key_for(delivery.job_id), queue.queue.key, marker_key(delivery.job_id)
        )
        queue.redis.srem(queue.queue.redis_queues_keys, queue.queue.key)
        queue.close()


def test_the_record_is_rqs_own_serialization() -> None:
    queue = RedisDeliveryQueue(SHARED_REDIS_URL, "record-test")
    delivery = QueuedDelivery("github", "d-1", "ping", EVENT)
    try:
        data, fields = job_record(delivery, "record-test", queue.redis)
    finally:
        queue.close()
    assert fields["status"] == JobStatus.QUEUED
    assert data and "data" not in fields and "" not in fields.values()
