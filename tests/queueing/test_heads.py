"""The newest head received for a pull request is recorded at submission, on both queues."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from bot.queueing.base import DeliveryQueue, QueuedDelivery, pull_key
from bot.queueing.inprocess import InProcessDeliveryQueue
from bot.queueing.redis_queue import RedisDeliveryQueue, head_key, marker_key


def change(repo: str, number: int, sha: str, delivery: str) -> QueuedDelivery:
    event: dict[str, Any] = {
        "type": "change_request",
        "repo": {"full_name": repo},
        "number": number,
        "head_sha": sha,
    }
    return QueuedDelivery("github", delivery, "pull_request", event)


@pytest.fixture(params=["redis", "in-process"])
def queue(request: pytest.FixtureRequest) -> Iterator[DeliveryQueue]:
    if request.param == "in-process":
        q: DeliveryQueue = InProcessDeliveryQueue()
        yield q
        q.close()
        return
    name = f"heads-{uuid.uuid4().hex[:8]}"
    rq = RedisDeliveryQueue("redis://127.0.0.1:6379/0", name)
    yield rq
    keys = [rq.queue.key, *rq.redis.keys(f"ichor:*{name}*")]
    rq.redis.delete(*keys)
    rq.close()


def test_newest_head_wins_and_redelivery_does_not_rewind(queue: DeliveryQueue) -> None:
    repo = f"octo/{uuid.uuid4().hex[:8]}"
    pull = pull_key("github", repo, 7)
    assert queue.latest_head(pull) is None
    ids = [uuid.uuid4().hex for _ in range(3)]
    queue.submit_many([change(repo, 7, "a" * 40, ids[0]), change(repo, 7, "b" * 40, ids[1])])
    assert queue.latest_head(pull) == "b" * 40
    # The first event comes again under a new delivery id (a person redelivers it): the
    # newer head stays the newest.
    queue.submit_many([change(repo, 7, "a" * 40, ids[2])])
    assert queue.latest_head(pull) == "b" * 40
    assert queue.latest_head(pull_key("github", repo, 8)) is None
    if isinstance(queue, RedisDeliveryQueue):
        jobs = [f"github-{i}" for i in ids]
        queue.redis.delete(
            head_key(pull), *(marker_key(j) for j in jobs), *(f"rq:job:{j}" for j in jobs)
        )
