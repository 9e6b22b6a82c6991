"""The sweep is queued by one worker of all, once an interval: the worker that takes the
interval's lock (Redis at 127.0.0.1:6379, only read and written)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis
from rq import Queue

from bot.queueing.base import SWEEP_FUNCTION
from bot.queueing.worker import IchorWorker, SweepTimer, Timings, worker_connection
from bot.state import keys
from tests.support.redis_url import SHARED_REDIS_URL


@pytest.fixture
def queue() -> Iterator[Queue]:
    connection = worker_connection(SHARED_REDIS_URL, outage_seconds=1)
    made = Queue(f"sweep-timer-{uuid.uuid4().hex[:8]}", connection=connection)
    yield made
    made.empty()  # type: ignore[no-untyped-call]
    connection.delete(keys.sweep_lock(made.name))
    connection.close()


def worker(queue: Queue, interval: float) -> IchorWorker:
    connection: redis.Redis = queue.connection
    return IchorWorker(
        [queue],
        connection=connection,
        timings=Timings(1.0, 5, 1.0),
        sweep=SweepTimer(interval, 60),
    )


def test_one_worker_queues_the_sweep_once_an_interval(queue: Queue) -> None:
    first, second = worker(queue, 300), worker(queue, 300)
    assert first.queue_sweep()
    assert not second.queue_sweep() and not first.queue_sweep()
    (job,) = queue.get_jobs()
    assert job.func_name == SWEEP_FUNCTION and job.timeout == 60
    ttl = queue.connection.ttl(keys.sweep_lock(queue.name))
    assert 0 < int(ttl) <= 300
    queue.connection.delete(keys.sweep_lock(queue.name))  # the interval is over
    assert second.queue_sweep() and len(queue.get_jobs()) == 2


def test_no_sweep_when_turned_off(queue: Queue) -> None:
    assert not worker(queue, 0).queue_sweep()
    none = IchorWorker([queue], connection=queue.connection, timings=Timings(1.0, 5, 1.0))
    assert not none.queue_sweep() and queue.get_jobs() == []
