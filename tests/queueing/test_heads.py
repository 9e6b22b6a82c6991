"""The newest head received for a pull request is recorded at submission, on both queues, in
the state store each queue is given."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from bot.queueing.base import DeliveryQueue, QueuedDelivery, pull_key
from bot.queueing.inprocess import InProcessDeliveryQueue
from bot.queueing.redis_queue import RedisDeliveryQueue, marker_key
from bot.state import keys
from bot.state.base import HeadStore
from bot.state.memory import MemoryHeads
from bot.state.redis_state import RedisHeads
from tests.support.redis_url import SHARED_REDIS_URL

Queued = tuple[DeliveryQueue, HeadStore]


def change(repo: str, number: int, sha: str, delivery: str) -> QueuedDelivery:
    event: dict[str, Any] = {
        "type": "change_request",
        "repo": {"full_name": repo},
        "number": number,
        "head_sha": sha,
    }
    return QueuedDelivery("github", delivery, "pull_request", event)


def _refuse(forge: str, delivery_id: str, event: dict[str, Any]) -> None:
    raise ValueError("a made-up event")  # its job fails, as the real job would on this event


@pytest.fixture(params=["redis", "in-process"])
def queued(request: pytest.FixtureRequest) -> Iterator[Queued]:
    if request.param == "in-process":
        heads = MemoryHeads()
        q: DeliveryQueue = InProcessDeliveryQueue(_refuse, heads)
        yield q, heads
        q.close()
        return
    name = f"heads-{uuid.uuid4().hex[:8]}"
    rq = RedisDeliveryQueue(SHARED_REDIS_URL, name)
    yield rq, RedisHeads(rq.redis)
    keys = [rq.queue.key, *rq.redis.keys(f"ichor:*{name}*")]
    rq.redis.delete(*keys)
    rq.close()


def test_newest_head_wins_and_redelivery_does_not_rewind(queued: Queued) -> None:
    queue, heads = queued
    repo = f"octo/{uuid.uuid4().hex[:8]}"
    pull = pull_key("github", repo, 7)
    assert heads.latest_head(pull) is None
    ids = [uuid.uuid4().hex for _ in range(3)]
    queue.submit_many([change(repo, 7, "a" * 40, ids[0]), change(repo, 7, "b" * 40, ids[1])])
    assert heads.latest_head(pull) == "b" * 40
    # The first delivery's job failed and a person redelivers it (same delivery id): the same
    # old event again, so the newer head stays the newest.
    _fail(queue, f"github-{ids[0]}")
    assert queue.submit_many([change(repo, 7, "a" * 40, ids[0])])[0].value == "requeued"
    assert heads.latest_head(pull) == "b" * 40
    # A new delivery for a head seen before (a force-push back to it) makes it the newest.
    queue.submit_many([change(repo, 7, "a" * 40, ids[2])])
    assert heads.latest_head(pull) == "a" * 40
    assert heads.latest_head(pull_key("github", repo, 8)) is None
    if isinstance(queue, RedisDeliveryQueue):
        jobs = [f"github-{i}" for i in ids]
        queue.redis.delete(
            keys.head(pull), *(marker_key(j) for j in jobs), *(f"rq:job:{j}" for j in jobs)
        )


def _fail(queue: DeliveryQueue, job_id: str) -> None:
    """Mark a job failed, as a worker would."""
    if isinstance(queue, RedisDeliveryQueue):
        queue.redis.hset(f"rq:job:{job_id}", "status", "failed")
        return
    assert isinstance(queue, InProcessDeliveryQueue)
    queue.wait(job_id, timeout=120)  # its (made-up) event fails in the job thread
    queue._set(job_id, "failed")
