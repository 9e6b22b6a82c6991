"""A merge group's check is one job per head, whichever of its deliveries comes first (the
``merge_group`` event or the push of its branch), and a destroyed group's end is recorded as
the delivery is queued, on both queues."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from bot.queueing.base import (
    DeliveryQueue,
    Outcome,
    QueuedDelivery,
    delivery_job_id,
    job_id_of,
)
from bot.queueing.inprocess import InProcessDeliveryQueue
from bot.queueing.redis_queue import RedisDeliveryQueue, marker_key
from bot.repos import ForgeKind, RepoRef
from bot.state import keys
from bot.state.base import GROUP_ENDED, HeadStore, group_ended, merge_group_key
from bot.state.memory import MemoryHeads
from bot.state.redis_state import RedisHeads
from bot.webhooks import MergeGroupAction, MergeGroupEvent, PushEvent, event_to_dict
from tests.support.redis_url import SHARED_REDIS_URL

HEAD, BASE = "a" * 40, "b" * 40
Queued = tuple[DeliveryQueue, HeadStore]
SUBMITTED: list[QueuedDelivery] = []  # what to clean from Redis after each test


def group(
    repo: str, action: MergeGroupAction, head: str = HEAD, delivery: str | None = None
) -> QueuedDelivery:
    event = MergeGroupEvent(
        RepoRef(ForgeKind.GITHUB, repo),
        action,
        head,
        f"refs/heads/gh-readonly-queue/main/pr-7-{BASE}",
        "main",
        BASE,
        (7,),
        42,
    )
    name = "push" if delivery == "push" else "merge_group"
    queued = QueuedDelivery("github", uuid.uuid4().hex, name, event_to_dict(event))
    SUBMITTED.append(queued)
    return queued


@pytest.fixture(params=["redis", "in-process"])
def queued(request: pytest.FixtureRequest) -> Iterator[Queued]:
    if request.param == "in-process":
        heads = MemoryHeads()
        release = threading.Event()

        def hold(forge: str, delivery_id: str, event: dict[str, Any]) -> None:
            release.wait(60)  # the job stays started while the test submits again

        q: DeliveryQueue = InProcessDeliveryQueue(hold, heads)
        yield q, heads
        release.set()
        q.close()
        return
    name = f"groups-{uuid.uuid4().hex[:8]}"
    rq = RedisDeliveryQueue(SHARED_REDIS_URL, name)
    SUBMITTED.clear()
    yield rq, RedisHeads(rq.redis)
    jobs = {d.job_id for d in SUBMITTED}
    repos = {d.event["repo"]["full_name"] for d in SUBMITTED}
    made: list[Any] = [marker_key(j) for j in jobs] + [f"rq:job:{j}" for j in jobs]
    for repo in repos:
        made += rq.redis.keys(keys.head(merge_group_key("github", repo, "*")))
    rq.redis.delete(rq.queue.key, *made)
    rq.close()


@pytest.mark.parametrize("first", ["merge_group", "push"])
def test_the_event_and_the_push_of_one_head_are_one_job(queued: Queued, first: str) -> None:
    queue, _ = queued
    repo = f"octo/{uuid.uuid4().hex[:8]}"
    second = "push" if first == "merge_group" else "merge_group"
    one, two = (
        group(repo, "checks_requested", delivery=first),
        group(repo, "checks_requested", delivery=second),
    )
    assert one.delivery_id != two.delivery_id and one.job_id == two.job_id
    assert queue.submit_many([one]) == [Outcome.QUEUED]
    assert queue.submit_many([two]) == [Outcome.DUPLICATE]


def test_each_head_and_each_repository_has_its_own_job() -> None:
    jobs = {
        group("octo/a", "checks_requested").job_id,
        group("octo/a", "checks_requested", head="c" * 40).job_id,
        group("octo/b", "checks_requested").job_id,
    }
    assert len(jobs) == 3
    # GitHub's names are case-insensitive: one repository however a payload spells it.
    assert group("Octo/A", "checks_requested").job_id == group("octo/a", "checks_requested").job_id


def test_a_rerun_and_the_groups_end_are_jobs_of_their_own_delivery() -> None:
    for action in ("rerequested", "destroyed"):
        delivery = group("octo/a", action)
        assert delivery.job_id == job_id_of("github", delivery.delivery_id)
    push = PushEvent(
        RepoRef(ForgeKind.GITHUB, "octo/a"), "refs/heads/x", BASE, HEAD, False, False, None, 1
    )
    assert delivery_job_id("github", "d-1", event_to_dict(push)) == job_id_of("github", "d-1")


def test_destroyed_records_the_groups_end_for_good(queued: Queued) -> None:
    queue, heads = queued
    repo = f"octo/{uuid.uuid4().hex[:8]}"
    key = merge_group_key("github", repo, HEAD)
    queue.submit_many([group(repo, "checks_requested")])
    assert heads.latest_head(key) is None and not group_ended(heads, key)
    queue.submit_many([group(repo, "destroyed")])
    assert heads.latest_head(key) == GROUP_ENDED and group_ended(heads, key)
    # A delivery that comes late (the push after the end) does not bring the group back.
    queue.submit_many([group(repo, "checks_requested", delivery="push")])
    assert group_ended(heads, key)
    assert not group_ended(heads, merge_group_key("github", repo, "c" * 40))


def test_an_end_delivered_before_the_check_still_ends_it(queued: Queued) -> None:
    queue, heads = queued
    repo = f"octo/{uuid.uuid4().hex[:8]}"
    queue.submit_many([group(repo, "destroyed"), group(repo, "checks_requested")])
    assert group_ended(heads, merge_group_key("github", repo, HEAD))
