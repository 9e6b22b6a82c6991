"""Both state stores keep the same promises, behind one protocol each."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis

from bot.state import keys
from bot.state.base import StateStore, pull_key
from bot.state.memory import memory_state
from bot.state.redis_state import redis_state
from tests.support.redis_url import SHARED_REDIS_URL


@pytest.fixture(params=["redis", "memory"])
def state(request: pytest.FixtureRequest) -> Iterator[tuple[StateStore, str]]:
    pull = pull_key("github", f"octo/{uuid.uuid4().hex[:8]}", 7)
    if request.param == "memory":
        yield memory_state(), pull
        return
    connection = redis.Redis.from_url(SHARED_REDIS_URL)
    yield redis_state(connection), pull
    connection.delete(keys.head(pull), keys.line_comments(pull), keys.checked(pull))
    connection.close()


def test_newest_head_wins_and_a_redelivery_never_rewinds(state: tuple[StateStore, str]) -> None:
    store, pull = state
    heads = store.heads
    assert heads.latest_head(pull) is None
    heads.record_head(pull, "a" * 40, redelivery=False)
    heads.record_head(pull, "b" * 64, redelivery=False)  # SHA-256 ids are heads too
    assert heads.latest_head(pull) == "b" * 64
    heads.record_head(pull, "a" * 40, redelivery=True)
    assert heads.latest_head(pull) == "b" * 64
    # A new delivery of a head seen before (a force-push back to it) makes it the newest.
    heads.record_head(pull, "a" * 40, redelivery=False)
    assert heads.latest_head(pull) == "a" * 40
    # A redelivery of a head never seen is still recorded.
    heads.record_head(pull, "c" * 40, redelivery=True)
    assert heads.latest_head(pull) == "c" * 40


def test_line_comment_memory(state: tuple[StateStore, str]) -> None:
    store, pull = state
    memory = store.line_comments
    assert not memory.has_line_comments(pull)
    memory.remember_line_comments(pull)
    assert memory.has_line_comments(pull)
    assert not memory.has_line_comments(pull + "0")


def test_checked_heads(state: tuple[StateStore, str]) -> None:
    store, pull = state
    checked = store.checked
    assert not checked.checked(pull, "a" * 40)
    checked.remember_checked(pull, "a" * 40)
    checked.remember_checked(pull, "b" * 40)
    assert checked.checked(pull, "a" * 40) and checked.checked(pull, "b" * 40)
    assert not checked.checked(pull, "c" * 40) and not checked.checked(pull + "0", "a" * 40)
