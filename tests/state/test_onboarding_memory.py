"""Both stores remember onboarding proposals the same way: once proposed, once declined."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis

from bot.state import keys
from bot.state.base import OnboardingMemory, onboarding_key
from bot.state.memory import memory_state
from bot.state.redis_state import redis_state
from tests.support.redis_url import SHARED_REDIS_URL


@pytest.fixture(params=["redis", "memory"])
def memory(request: pytest.FixtureRequest) -> Iterator[tuple[OnboardingMemory, str]]:
    key = onboarding_key("github", f"octo/{uuid.uuid4().hex[:8]}")
    if request.param == "memory":
        yield memory_state().onboarding, key
        return
    connection = redis.Redis.from_url(SHARED_REDIS_URL)
    yield redis_state(connection).onboarding, key
    connection.delete(keys.onboarding_proposed(key), keys.onboarding_declined(key))
    connection.close()


def test_proposed_and_declined_are_remembered_per_repository(
    memory: tuple[OnboardingMemory, str],
) -> None:
    store, key = memory
    assert not store.proposed(key) and not store.declined(key)
    store.remember_proposed(key)
    assert store.proposed(key) and not store.declined(key)
    store.remember_declined(key)
    assert store.declined(key)
    assert not store.proposed(key + "x") and not store.declined(key + "x")


def test_forgetting_a_decline_keeps_the_proposal(memory: tuple[OnboardingMemory, str]) -> None:
    store, key = memory
    store.remember_proposed(key)
    store.remember_declined(key)
    store.forget_declined(key)
    assert not store.declined(key) and store.proposed(key)
    store.forget_declined(key)  # forgetting nothing is fine
    assert not store.declined(key)
