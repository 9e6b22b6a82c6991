"""What the sweeps keep: the same promises from Redis and from memory."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis

from bot.forges.base import PullRequestRef
from bot.state import keys
from bot.state.sweeps import (
    REPOSITORY_CAP,
    Listing,
    MemorySweeps,
    RedisSweeps,
    RepoReconciled,
    SweepRun,
    SweepStore,
)
from tests.support.redis_url import SHARED_REDIS_URL


@pytest.fixture(params=["redis", "memory"])
def store(request: pytest.FixtureRequest) -> Iterator[SweepStore]:
    if request.param == "memory":
        yield MemorySweeps()
        return
    connection = redis.Redis.from_url(SHARED_REDIS_URL)
    sweeps = RedisSweeps(connection, f"test-{uuid.uuid4().hex[:12]}")
    try:
        yield sweeps
    finally:
        connection.delete(*sweeps.keys)
        sweeps.close()


def test_the_latest_look_at_each_repository(store: SweepStore) -> None:
    store.record_repo(RepoReconciled(1.0, "github", "o/a", open=3, done=3))
    store.record_repo(RepoReconciled(2.0, "gitlab", "o/a", note="left for later"))
    store.record_repo(RepoReconciled(3.0, "github", "o/a", open=2, queued=1, unchanged=True))
    assert [(r.forge, r.at, r.queued) for r in store.repos()] == [
        ("github", 3.0, 1),
        ("gitlab", 2.0, 0),
    ]
    assert store.last_reconciled("github", ["o/a", "o/b"]) == {"o/a": 3.0}
    assert store.last_reconciled("gitlab", []) == {}


def test_the_least_recently_looked_at_go_past_the_cap(store: SweepStore) -> None:
    for n in range(REPOSITORY_CAP + 2):
        store.record_repo(RepoReconciled(float(n), "gitea", f"o/r{n}"))
        if n < 2:
            store.keep_listing("gitea", f"o/r{n}", Listing("t"))
    assert len(store.repos(limit=REPOSITORY_CAP * 2)) == REPOSITORY_CAP
    assert store.last_reconciled("gitea", ["o/r0", "o/r2"]) == {"o/r2": 2.0}
    assert store.listing("gitea", "o/r0") is None  # its listing went with it


def test_a_listing_is_kept_whole(store: SweepStore) -> None:
    pull = PullRequestRef(
        7, "https://x/7", "a" * 40, "b" * 40, "main", author="al", head_ref="f", from_fork=True
    )
    kept = Listing('W/"abc"', (pull, PullRequestRef(8, "")), {7: ("a" * 40, 5.0)})
    store.keep_listing("github", "o/a", kept)
    assert store.listing("github", "o/a") == kept
    assert store.listing("github", "o/b") is None


def test_runs_counts_and_asked_deliveries(store: SweepStore) -> None:
    store.record_run(SweepRun(1.0, "github", 4, 3, 1, 2, 5, 2, {"processed": 3}))
    store.record_run(SweepRun(2.0, "gitea", problem="Gitea GET /user/repos: 401"))
    assert [(r.forge, r.queued, r.not_redelivered, r.problem) for r in store.runs()] == [
        ("gitea", 0, {}, "Gitea GET /user/repos: 401"),
        ("github", 2, {"processed": 3}, ""),
    ]
    store.count("github", "queued", 2)
    store.count("github", "queued")
    store.count("github", "redelivered", 0)
    store.count("github", "bogus")  # stored, never shown
    assert store.counts() == {("github", "queued"): 3}
    guid = str(uuid.uuid4())
    assert store.asked([guid]) == set()
    store.remember_asked(guid, 60)
    assert store.asked([guid, "other"]) == {guid}


def test_a_damaged_record_is_skipped() -> None:
    connection = redis.Redis.from_url(SHARED_REDIS_URL)
    namespace = f"test-{uuid.uuid4().hex[:12]}"
    sweeps = RedisSweeps(connection, namespace)
    try:
        connection.hset(keys.reconciled(namespace), "github|o/a", "{not json")
        connection.hset(keys.reconcile_listings(namespace), "github|o/a", '{"pulls": [{}]}')
        assert sweeps.repos() == [] and sweeps.listing("github", "o/a") is None
    finally:
        connection.delete(*sweeps.keys)
        sweeps.close()
