"""The per-repository lock: exclusion across threads and processes, expiry of a dead
holder's lock, and a release that never deletes someone else's. Redis at 127.0.0.1:6379 (with
keys of the test's own) and the memory lock keep the same promises."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field

import pytest
import redis

from bot.errors import IchorError
from bot.state.locks import (
    LOCK_PREFIX,
    LockTimeout,
    MemoryRepoLock,
    RedisRepoLock,
    RepoLock,
    repo_lock_key,
)
from tests.support.clock import ManualClock
from tests.support.redis_url import SHARED_REDIS_URL

REDIS_URL = SHARED_REDIS_URL


@dataclass
class Locks:
    kind: str
    key: str
    connection: redis.Redis | None = None
    created: list[RepoLock] = field(default_factory=list)

    def lock(self, clock: ManualClock | None = None) -> RepoLock:
        """A lock object (one per worker, in production); all share one store. The memory
        store is one object: the first call's clock is everyone's."""
        now: Callable[[], float] = time.monotonic if clock is None else clock
        sleep: Callable[[float], None] = time.sleep if clock is None else clock.advance
        if self.connection is not None:
            made: RepoLock = RedisRepoLock(self.connection, clock=now, sleep=sleep)
        elif self.created:
            return self.created[0]  # memory: one process, one store
        else:
            made = MemoryRepoLock(clock=now, sleep=sleep)
        self.created.append(made)
        return made


@pytest.fixture(params=["redis", "memory"])
def locks(request: pytest.FixtureRequest) -> Iterator[Locks]:
    key = repo_lock_key("github", f"test-locks/{uuid.uuid4().hex}")
    if request.param == "memory":
        yield Locks("memory", key)
        return
    connection = redis.Redis.from_url(REDIS_URL)
    yield Locks("redis", key, connection)
    connection.delete(LOCK_PREFIX + key)
    connection.close()


def test_two_holders_exclude_each_other(locks: Locks) -> None:
    one, two = locks.lock(), locks.lock()
    held, done = threading.Event(), threading.Event()
    events: list[str] = []

    def first() -> None:
        with one.hold(locks.key, ttl=30, wait=1):
            events.append("first in")
            held.set()
            done.wait(5)
            events.append("first out")

    thread = threading.Thread(target=first)
    thread.start()
    assert held.wait(5)
    with (
        pytest.raises(LockTimeout, match="stayed held") as info,
        two.hold(locks.key, ttl=30, wait=0.1),
    ):
        events.append("never")
    assert isinstance(info.value, IchorError) and locks.key in str(info.value)
    # Another repository is not held up.
    with two.hold(locks.key + "-other", ttl=30, wait=0):
        pass
    threading.Timer(0.2, done.set).start()
    with two.hold(locks.key, ttl=30, wait=5):  # waits for the first to let go
        events.append("second in")
    thread.join(5)
    assert events == ["first in", "first out", "second in"]


def test_many_threads_take_turns(locks: Locks) -> None:
    counter = {"value": 0, "inside": 0, "most": 0}

    def work() -> None:
        lock = locks.lock()
        for _ in range(5):
            with lock.hold(locks.key, ttl=30, wait=10):
                counter["inside"] += 1
                counter["most"] = max(counter["most"], counter["inside"])
                value = counter["value"]
                time.sleep(0.002)  # a lost update shows if two are ever inside at once
                counter["value"] = value + 1
                counter["inside"] -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert counter == {"value": 20, "inside": 0, "most": 1}


def test_waiting_follows_the_injected_clock(locks: Locks) -> None:
    clock = ManualClock(1000.0)
    waiter = locks.lock(clock)
    holder = locks.lock()
    with holder.hold(locks.key, ttl=60, wait=0):
        started = time.monotonic()
        with pytest.raises(LockTimeout), waiter.hold(locks.key, ttl=60, wait=3):
            pass
        assert clock.now == pytest.approx(1003.0)  # it slept exactly what it waited, and no more
        assert time.monotonic() - started < 2  # on the injected clock, not the real one
        with pytest.raises(LockTimeout), waiter.hold(locks.key, ttl=60, wait=0):  # tries once
            pass
        assert clock.now == pytest.approx(1003.0)


def test_a_lock_left_by_a_dead_holder_expires(locks: Locks) -> None:
    if locks.kind == "memory":
        clock = ManualClock(0.0)
        lock = MemoryRepoLock(clock=clock, sleep=clock.advance)
        dead = ExitStack()
        dead.enter_context(lock.hold(locks.key, ttl=5, wait=0))  # never released
        with pytest.raises(LockTimeout), lock.hold(locks.key, ttl=5, wait=4.9):
            pass
        with lock.hold(locks.key, ttl=5, wait=1):  # its five seconds are over
            assert clock.now == pytest.approx(5.0, abs=0.3)
        return
    # A worker process that takes the lock and is killed while it holds it.
    script = (
        "import sys, time, redis\n"
        "from bot.state.locks import RedisRepoLock\n"
        f"lock = RedisRepoLock(redis.Redis.from_url({REDIS_URL!r}))\n"
        f"held = lock.hold({locks.key!r}, ttl=0.6, wait=5)\n"
        "held.__enter__()  # kept referenced: only the kill ends it\n"
        "print('held', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"held\n"
        proc.kill()
        proc.wait(5)
        with pytest.raises(LockTimeout), locks.lock().hold(locks.key, ttl=5, wait=0):
            pass
        started = time.monotonic()
        with locks.lock().hold(locks.key, ttl=5, wait=2):
            assert time.monotonic() - started < 2
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()


def test_a_release_never_deletes_another_holders_lock(locks: Locks) -> None:
    clock = ManualClock(0.0)
    if locks.kind == "memory":
        lock: RepoLock = MemoryRepoLock(clock=clock, sleep=clock.advance)
        first = second = third = lock
        ttl = 1.0

        def expire() -> None:
            clock.advance(1.5)
    else:
        first, second, third = locks.lock(), locks.lock(), locks.lock()
        ttl = 0.15

        def expire() -> None:
            time.sleep(0.3)  # Redis expires keys on its own clock

    slow = ExitStack()
    slow.enter_context(first.hold(locks.key, ttl=ttl, wait=0))
    expire()  # the first holder outlived its lock
    with second.hold(locks.key, ttl=30, wait=0):
        if locks.connection is not None:
            token = locks.connection.get(LOCK_PREFIX + locks.key)
        slow.close()  # the first lets go late: the second's lock must stay
        if locks.connection is not None:
            assert locks.connection.get(LOCK_PREFIX + locks.key) == token
            assert locks.connection.pttl(LOCK_PREFIX + locks.key) > 20_000
        with pytest.raises(LockTimeout), third.hold(locks.key, ttl=30, wait=0):
            pass
    with third.hold(locks.key, ttl=30, wait=0):  # released by its own holder
        pass
    if locks.connection is not None:
        assert locks.connection.exists(LOCK_PREFIX + locks.key) == 0


def test_the_block_s_exception_passes_through_and_releases(locks: Locks) -> None:
    lock = locks.lock()
    with pytest.raises(KeyError), lock.hold(locks.key, ttl=30, wait=0):
        raise KeyError("boom")
    with lock.hold(locks.key, ttl=30, wait=0):
        pass


def test_nonsense_durations_are_refused(locks: Locks) -> None:
    lock = locks.lock()
    for ttl, wait in ((0, 1), (-1, 1), (1, -1), (float("nan"), 1)):
        with pytest.raises(ValueError), lock.hold(locks.key, ttl=ttl, wait=wait):
            pass
