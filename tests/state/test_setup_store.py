"""The manifest flow's states shared through Redis: a state one web replica issued is verified
and spent by another, once for all of them, and forgotten when it would have expired."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import pytest
import redis

from bot.state import keys
from bot.state.setup import RedisSetupStore, SetupStoreUnavailable
from bot.web.setup_states import SetupStates
from tests.support.clock import ManualClock
from tests.support.redis_url import SHARED_REDIS_URL


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"setup-{uuid.uuid4().hex[:10]}"
    yield name
    client = redis.Redis.from_url(SHARED_REDIS_URL)
    found = list(client.scan_iter(f"ichor:setup-*:{name}*"))
    if found:
        client.delete(*found)
    client.close()


def replica(namespace: str, clock: ManualClock) -> SetupStates:
    return SetupStates(clock, ttl=900, store=RedisSetupStore(SHARED_REDIS_URL, namespace))


def test_any_replica_answers_the_callback_once(namespace: str) -> None:
    clock = ManualClock(1_800_000_000.0)
    page, callback, third = (replica(namespace, clock) for _ in range(3))
    state = page.issue()
    assert callback.consume(state, state) is not None  # another process's key is the same
    assert third.consume(state, state) is None  # spent for every replica
    assert page.consume(state, state) is None


def test_a_spent_state_is_kept_until_it_would_have_expired(namespace: str) -> None:
    clock = ManualClock(1_800_000_000.0)
    states = replica(namespace, clock)
    state = states.issue()
    clock.advance(600)
    assert states.consume(state, state) is not None
    client = redis.Redis.from_url(SHARED_REDIS_URL)
    (spent,) = client.scan_iter(keys.setup_spent(namespace, "*"))
    assert 200_000 < client.pttl(spent) <= 300_000  # the 300 s the state had left
    client.close()


def test_other_namespaces_sign_with_other_keys(namespace: str) -> None:
    clock = ManualClock(1_800_000_000.0)
    mine, theirs = replica(namespace, clock), replica(namespace + "-other", clock)
    state = theirs.issue()
    assert mine.consume(state, state) is None
    redis.Redis.from_url(SHARED_REDIS_URL).delete(keys.setup_key(namespace + "-other"))


def test_an_unreachable_redis_is_said_in_the_stores_words() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = RedisSetupStore(f"redis://127.0.0.1:{port}/0", "setup-down", timeout=0.5)
    with pytest.raises(SetupStoreUnavailable, match="Redis"):
        store.signing_key()
    with pytest.raises(SetupStoreUnavailable, match="Redis"):
        store.spend(b"n" * 16, 60)
