"""The rate budget: the same store in Redis and the data dir, when a limit runs low, and the
recorder that keeps what the adapters report without a write per request."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.state.rates import BUDGET_CAP, FileRates, RateBudget, RateRecorder, RateStore, RedisRates
from tests.support.clock import ManualClock
from tests.web.conftest import SHARED_REDIS

NOW = 1_700_000_000.0


@pytest.fixture(params=["redis", "files"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RateStore]:
    if request.param == "files":
        yield FileRates(tmp_path / "history")
        return
    redis_store = RedisRates(SHARED_REDIS, f"test-{uuid.uuid4().hex[:12]}")
    try:
        yield redis_store
    finally:
        redis_store.redis.delete(redis_store.key)
        redis_store.close()


def budget(bucket: str, remaining: int = 4000, at: float = NOW, **kw: object) -> RateBudget:
    values: dict[str, object] = {"limit": 5000, "reset": NOW + 600, **kw}
    return RateBudget("github", bucket, remaining, at=at, **values)  # type: ignore[arg-type]


def test_the_newest_report_of_each_bucket_is_kept(store: RateStore) -> None:
    store.put(budget("installation 1", 4000))
    store.put(budget("installation 1", 3990))
    store.put(budget("app", 4999))
    store.put(RateBudget("gitlab", "", 1999, 2000, NOW + 60, NOW))
    assert store.budget("github", "installation 1") == budget("installation 1", 3990)
    assert store.budget("github", "installation 2") is None
    assert [(b.forge, b.shown, b.remaining) for b in store.budgets()] == [
        ("github", "app", 4999),
        ("github", "installation 1", 3990),
        ("gitlab", "token", 1999),
    ]


def test_the_least_recently_seen_buckets_go_past_the_cap(store: RateStore) -> None:
    for n in range(BUDGET_CAP + 3):
        store.put(budget(f"installation {n}", at=NOW + n))
    kept = {b.bucket for b in store.budgets()}
    assert len(kept) == BUDGET_CAP
    assert "installation 0" not in kept and f"installation {BUDGET_CAP + 2}" in kept


def test_a_limit_is_low_under_the_reserve_until_its_window_resets() -> None:
    assert not budget("b", 1001).low(0.2, NOW)
    assert budget("b", 999).low(0.2, NOW)
    assert not budget("b", 999).low(0.2, NOW + 600)  # reset since: the budget is back
    assert not budget("b", 0).low(0.0, NOW + 600)
    unknown = RateBudget("gitea", "", 3, None, None, NOW)
    assert not unknown.low(0.2, NOW) and RateBudget("gitea", "", 0, None, None, NOW).low(0.2, NOW)


class CountingStore(FileRates):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.writes = 0

    def put(self, budget: RateBudget) -> None:
        self.writes += 1
        super().put(budget)


def test_the_recorder_writes_what_moved_enough_to_matter(tmp_path: Path) -> None:
    store = CountingStore(tmp_path)
    clock = ManualClock(NOW)
    recorder = RateRecorder(store, "github", clock)
    for remaining in (5000, 4990, 4960):  # 1% of 5000 is 50 requests
        recorder.saw("installation 1", remaining, 5000, NOW + 600)
    assert store.writes == 1
    recorder.saw("installation 1", 4950, 5000, NOW + 600)
    assert store.writes == 2 and store.budget("github", "installation 1") is not None
    recorder.saw("installation 1", 4949, 5000, NOW + 4200)  # a new window
    clock.advance(10)
    recorder.saw("installation 1", 4948, 5000, NOW + 4200)  # and time passed
    recorder.saw("installation 2", 10, 5000, NOW + 600)  # another bucket
    assert store.writes == 5
    found = store.budget("github", "installation 1")
    assert found is not None and (found.remaining, found.at) == (4948, NOW + 10)


def test_the_recorder_never_raises_and_writes_again_after_a_failure(tmp_path: Path) -> None:
    class Broken(CountingStore):
        def put(self, budget: RateBudget) -> None:
            self.writes += 1
            raise OSError("disk full")

    store = Broken(tmp_path)
    recorder = RateRecorder(store, "gitlab", ManualClock(NOW))
    recorder.saw("", 10, 2000, None)
    recorder.saw("", 10, 2000, None)  # the failed write is not taken for written
    assert store.writes == 2
