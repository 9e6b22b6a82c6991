"""Approvals, audit records and cached permissions: the same promises on Redis and in memory."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import redis

from bot.approvals.approval import Approval, Fingerprint
from bot.approvals.seen import SHOWN_KEPT, ShownCheck
from bot.forges.base import Permission
from bot.state import keys
from bot.state.base import PERMISSION_TTL, AuditLog, AuditRecord, StateStore, pull_key
from bot.state.memory import MemoryAudit, MemoryPermissions, memory_state
from bot.state.redis_state import RedisAudit, redis_state
from tests.support.clock import ManualClock
from tests.support.redis_url import SHARED_REDIS_URL

A = Fingerprint("apps/v1 Deployment prod/web", "a" * 64)
B = Fingerprint("v1 ConfigMap prod/settings", "b" * 64)


def approval(approver: str, *prints: Fingerprint, head: str = "1" * 40) -> Approval:
    return Approval(approver, head, frozenset(prints), source=f"comment-{approver}")


@pytest.fixture(params=["redis", "memory"])
def state(request: pytest.FixtureRequest) -> Iterator[tuple[StateStore, str]]:
    pull = pull_key("github", f"octo/{uuid.uuid4().hex[:8]}", 7)
    if request.param == "memory":
        yield memory_state(), pull
        return
    connection = redis.Redis.from_url(SHARED_REDIS_URL)
    yield redis_state(connection), pull
    connection.delete(keys.approvals(pull), keys.shown(pull))
    connection.close()


def test_nothing_recorded_differs_from_no_approvals(state: tuple[StateStore, str]) -> None:
    store, pull = state
    assert store.approvals.approvals(pull) is None
    store.approvals.restore(pull, [])
    assert store.approvals.approvals(pull) == ()


def test_one_approval_per_approver_the_newest_last(state: tuple[StateStore, str]) -> None:
    store, pull = state
    store.approvals.record(pull, approval("maria", A))
    store.approvals.record(pull, approval("lee", B))
    store.approvals.record(pull, approval("maria", A, B, head="2" * 40))
    got = store.approvals.approvals(pull)
    assert got is not None
    assert [(a.approver, a.head_sha) for a in got] == [("lee", "1" * 40), ("maria", "2" * 40)]
    assert got[1].fingerprints == frozenset({A, B})


def test_withdraw_returns_what_it_removed(state: tuple[StateStore, str]) -> None:
    store, pull = state
    store.approvals.record(pull, approval("maria", A))
    assert store.approvals.withdraw(pull, "lee") is None
    removed = store.approvals.withdraw(pull, "maria")
    assert removed is not None and removed.fingerprints == frozenset({A})
    assert store.approvals.approvals(pull) == ()


def test_shown_checks_nothing_recorded_then_oldest_first_and_trimmed(
    state: tuple[StateStore, str],
) -> None:
    store, pull = state
    assert store.shown.shown(pull) is None
    start = datetime(2026, 12, 4, 20, 0, tzinfo=UTC)
    checks = [
        ShownCheck(f"{n:040x}", start + timedelta(seconds=n), frozenset({A} if n % 2 else set()))
        for n in range(SHOWN_KEPT + 3)
    ]
    for check in checks:
        store.shown.record_shown(pull, check)
    assert store.shown.shown(pull) == tuple(checks[3:])


def test_a_damaged_shown_record_shows_nothing() -> None:
    connection = redis.Redis.from_url(SHARED_REDIS_URL)
    pull = pull_key("github", f"octo/{uuid.uuid4().hex[:8]}", 7)
    try:
        store = redis_state(connection).shown
        good = ShownCheck("1" * 40, datetime(2026, 12, 4, tzinfo=UTC), frozenset({B}))
        connection.rpush(keys.shown(pull), "not json", '{"head_sha": "x"}')
        store.record_shown(pull, good)
        assert store.shown(pull) == (good,)
    finally:
        connection.delete(keys.shown(pull))
        connection.close()


def test_restore_replaces_everything(state: tuple[StateStore, str]) -> None:
    store, pull = state
    store.approvals.record(pull, approval("maria", A))
    store.approvals.restore(pull, [approval("lee", B), approval("kim", A)])
    got = store.approvals.approvals(pull)
    assert got is not None and [a.approver for a in got] == ["lee", "kim"]


def record(minute: int, repo: str = "octo/widgets", verb: str = "approve") -> AuditRecord:
    at = datetime(2026, 12, 1, 12, minute, tzinfo=UTC)
    return AuditRecord(at, "github", repo, "maria", verb, "done", number=7, target="prod")


@pytest.fixture(params=["redis", "memory"])
def audit(request: pytest.FixtureRequest) -> Iterator[AuditLog]:
    if request.param == "memory":
        yield MemoryAudit(kept=5)
        return
    connection = redis.Redis.from_url(SHARED_REDIS_URL)
    stream = f"ichor:test-audit:{uuid.uuid4().hex}"
    yield RedisAudit(connection, stream=stream, max_len=5)
    connection.delete(stream)
    connection.close()


def test_audit_is_newest_first_filtered_and_capped(audit: AuditLog) -> None:
    for minute in range(3):
        audit.append(record(minute))
    audit.append(record(3, repo="octo/other", verb="recheck"))
    got = audit.recent()
    assert [r.time.minute for r in got] == [3, 2, 1, 0]
    assert got[0] == record(3, repo="octo/other", verb="recheck")  # every field survives
    assert [r.time.minute for r in audit.recent(repo="octo/widgets")] == [2, 1, 0]
    since = datetime(2026, 12, 1, 12, 1, tzinfo=UTC)
    assert [r.time.minute for r in audit.recent(since=since)] == [3, 2, 1]
    assert len(audit.recent(limit=2)) == 2


def test_the_memory_audit_keeps_only_the_newest() -> None:
    audit = MemoryAudit(kept=5)
    for minute in range(8):
        audit.append(record(minute))
    assert [r.time.minute for r in audit.recent()] == [7, 6, 5, 4, 3]


def test_permissions_are_kept_at_most_the_ttl() -> None:
    clock = ManualClock(1000.0)
    cache = MemoryPermissions(clock)
    assert cache.get("github", "o/r", "maria") is None
    cache.put("github", "o/r", "maria", Permission.WRITE)
    clock.advance(PERMISSION_TTL - 1)
    assert cache.get("github", "o/r", "maria") is Permission.WRITE
    assert cache.get("github", "o/r", "lee") is None
    clock.advance(1)
    assert cache.get("github", "o/r", "maria") is None


def test_redis_permissions_expire_within_the_ttl() -> None:
    connection = redis.Redis.from_url(SHARED_REDIS_URL)
    store = redis_state(connection)
    repo = f"o/{uuid.uuid4().hex[:8]}"
    store.permissions.put("gitlab", repo, "maria", Permission.MAINTAIN)
    assert store.permissions.get("gitlab", repo, "maria") is Permission.MAINTAIN
    ttl = connection.ttl(f"ichor:permission:gitlab:{repo}:maria")
    assert 0 < int(ttl) <= PERMISSION_TTL
    connection.delete(f"ichor:permission:gitlab:{repo}:maria")
    connection.close()
    assert timedelta(seconds=PERMISSION_TTL) == timedelta(minutes=1)
