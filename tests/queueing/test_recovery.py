"""The reaper and the submit script on real Redis, job by job: which jobs of dead workers go
back on the queue, which stay, and what a redelivery of a stuck job gets."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import redis
from rq.job import Job

from bot.queueing.base import ABANDONED_FUNCTION, Outcome, QueuedDelivery
from bot.queueing.recovery import reap_abandoned, running_key
from bot.queueing.redis_queue import RedisDeliveryQueue
from tests.support.redis_url import SHARED_REDIS_URL

REDIS_URL = SHARED_REDIS_URL


@pytest.fixture
def queue() -> Iterator[RedisDeliveryQueue]:
    q = RedisDeliveryQueue(REDIS_URL, f"reap-{uuid.uuid4().hex[:10]}")
    yield q
    client = q.redis
    keys = list(client.scan_iter(f"*{q.queue.name}*"))
    keys += [k for k in client.scan_iter("ichor:*") if q.queue.name in k.decode()]
    if keys:
        client.delete(*keys)
    q.close()


def _submit(queue: RedisDeliveryQueue, delivery: str | None = None) -> QueuedDelivery:
    d = QueuedDelivery(
        "github",
        delivery or f"{queue.queue.name}-{uuid.uuid4().hex[:8]}",
        "ping",
        {"type": "ping", "forge": "github", "hook_id": None},
    )
    assert queue.submit_many([d]) == [Outcome.QUEUED]
    return d


def _start(queue: RedisDeliveryQueue, job_id: str, *, leased: bool) -> str:
    """What a worker writes when it starts a job: off the queue, ``started``, in the registry,
    and (while it lives) its lease."""
    client: redis.Redis = queue.redis
    client.lrem(queue.queue.key, 1, job_id)
    client.hset(Job.key_for(job_id), "status", "started")
    entry = f"{job_id}:{uuid.uuid4().hex[:8]}"
    client.zadd(queue.queue.started_job_registry.key, {entry: time.time() + 600})
    if leased:
        client.set(running_key(job_id), "worker", px=60_000)
    return entry


def _reap(queue: RedisDeliveryQueue, grace: float = 30.0) -> tuple[list[str], list[str]]:
    queue.redis.delete(f"ichor:reaper:{queue.queue.name}")
    reaped = reap_abandoned(queue.redis, queue.queue, lock_seconds=0.01, grace_seconds=grace)
    return list(reaped.requeued), list(reaped.failed)


def _reap_after_grace(queue: RedisDeliveryQueue) -> tuple[list[str], list[str]]:
    """A missing lease is only noted at first (a live worker may be about to renew it)."""
    assert _reap(queue, grace=0.05) == ([], [])
    time.sleep(0.1)
    return _reap(queue, grace=0.05)


def test_a_started_job_without_its_lease_goes_back_to_the_front_of_the_queue(
    queue: RedisDeliveryQueue,
) -> None:
    waiting = _submit(queue).job_id
    dead = _submit(queue).job_id
    _start(queue, dead, leased=False)
    assert _reap_after_grace(queue) == ([dead], [])
    assert queue.queue.job_ids == [dead, waiting]
    record = queue.redis.hgetall(Job.key_for(dead))
    assert (record[b"status"], record[b"retries_left"]) == (b"queued", b"2")
    assert len(queue.queue.started_job_registry) == 0


def test_a_leased_job_is_left_alone(queue: RedisDeliveryQueue) -> None:
    alive = _submit(queue).job_id
    _start(queue, alive, leased=True)
    assert _reap_after_grace(queue) == ([], [])
    assert queue.job_state(alive) == "started"
    assert len(queue.queue.started_job_registry) == 1


def test_a_job_abandoned_with_no_retries_left_fails_and_a_report_takes_its_place(
    queue: RedisDeliveryQueue,
) -> None:
    dead = _submit(queue).job_id
    queue.redis.hset(Job.key_for(dead), "retries_left", 0)
    _start(queue, dead, leased=False)
    assert _reap_after_grace(queue) == ([], [dead])
    assert queue.job_state(dead) == "failed"
    assert dead in queue.queue.failed_job_registry.get_job_ids(cleanup=False)
    report = Job.fetch(f"{dead}-abandoned", connection=queue.redis)
    assert report.func_name == ABANDONED_FUNCTION
    assert report.args == Job.fetch(dead, connection=queue.redis).args


def test_a_job_taken_off_the_queue_but_never_leased_goes_back_after_the_grace(
    queue: RedisDeliveryQueue,
) -> None:
    job = _submit(queue).job_id
    client = queue.redis
    client.lmove(queue.queue.key, queue.queue.intermediate_queue_key)  # a worker took it, died
    assert _reap(queue, grace=0.05) == ([], [])  # seen: a live worker may be about to lease it
    time.sleep(0.1)
    assert _reap(queue, grace=0.05) == ([job], [])
    assert queue.queue.job_ids == [job]
    assert client.llen(queue.queue.intermediate_queue_key) == 0


def test_a_lease_renewed_within_the_grace_keeps_the_job(queue: RedisDeliveryQueue) -> None:
    job = _submit(queue).job_id
    _start(queue, job, leased=False)  # lapsed, as every lease does in a Redis outage
    assert _reap(queue, grace=0.05) == ([], [])
    queue.redis.set(running_key(job), "worker", px=60_000)  # its worker is back
    time.sleep(0.1)
    assert _reap(queue, grace=0.05) == ([], [])
    assert queue.job_state(job) == "started"


def test_a_redelivery_of_a_stuck_job_is_requeued_and_of_a_live_one_a_duplicate(
    queue: RedisDeliveryQueue,
) -> None:
    live, stuck = _submit(queue), _submit(queue)
    _start(queue, live.job_id, leased=True)
    _start(queue, stuck.job_id, leased=False)
    assert queue.submit_many([live, stuck]) == [Outcome.DUPLICATE, Outcome.REQUEUED]
    assert queue.queue.job_ids == [stuck.job_id]
    assert queue.job_state(stuck.job_id) == "queued"


def test_runs_of_a_job_are_counted(queue: RedisDeliveryQueue) -> None:
    job = f"github-{queue.queue.name}"
    assert [queue.begin_attempt(job) for _ in range(3)] == [1, 2, 3]


# -- why not RQ's own handling: what StartedJobRegistry.cleanup does, measured -----------------


def test_rq_cleanup_would_run_a_live_job_twice_after_an_outage(queue: RedisDeliveryQueue) -> None:
    """After a Redis outage longer than a heartbeat, the registry entry of a job that is still
    running has expired. RQ's cleanup takes it for abandoned and queues it again (a second run
    beside the live one), where our reaper sees the lease its worker renewed and leaves it."""
    alive = _submit(queue).job_id
    entry = _start(queue, alive, leased=True)
    queue.redis.zadd(queue.queue.started_job_registry.key, {entry: time.time() - 1})
    assert _reap_after_grace(queue) == ([], [])  # ours: alive
    queue.queue.started_job_registry.cleanup()  # RQ's
    record = queue.redis.hgetall(Job.key_for(alive))
    assert record[b"status"] != b"started"  # taken for dead while its worker still runs it
    assert record[b"retries_left"] == b"2"


def test_rq_cleanup_puts_an_abandoned_job_behind_its_retry_interval(
    queue: RedisDeliveryQueue,
) -> None:
    """RQ gives an abandoned job back through its Retry intervals (the first is 10 s), and only
    when a worker's maintenance runs (every 10 minutes by default); ours puts it at the front
    of the queue once the grace has passed."""
    dead = _submit(queue).job_id
    entry = _start(queue, dead, leased=False)
    queue.redis.zadd(queue.queue.started_job_registry.key, {entry: time.time() - 1})
    queue.queue.started_job_registry.cleanup()
    assert dead not in queue.queue.job_ids  # not on the queue: scheduled for later
    assert dead in queue.queue.scheduled_job_registry.get_job_ids()
