"""The manifest flow's states: once, briefly, in the browser that started it, bounded."""

from __future__ import annotations

from bot.web.setup_states import SetupStates


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_state_is_used_once() -> None:
    states = SetupStates(Clock())
    state = states.issue("https://bot.example")
    pending = states.consume(state, state)
    assert pending is not None and pending.base_url == "https://bot.example"
    assert states.consume(state, state) is None


def test_a_state_expires() -> None:
    clock = Clock()
    states = SetupStates(clock, ttl=60)
    early, late = states.issue("b"), None
    clock.now = 30
    late = states.issue("b")
    clock.now = 60
    assert states.consume(early, early) is None
    assert states.consume(late, late) is not None
    assert len(states) == 0


def test_the_browser_copy_must_match() -> None:
    states = SetupStates(Clock())
    state, other = states.issue("b"), states.issue("b")
    assert states.consume(state, None) is None
    assert states.consume(other, state) is None
    assert len(states) == 0  # a refused state is spent


def test_pending_states_are_bounded() -> None:
    states = SetupStates(Clock(), capacity=3)
    first = states.issue("b")
    issued = [states.issue("b") for _ in range(50)]
    assert len(states) == 3
    assert states.consume(first, first) is None
    assert states.consume(issued[-1], issued[-1]) is not None


def test_states_are_unguessable_and_url_safe() -> None:
    states = SetupStates(Clock())
    values = {states.issue("b") for _ in range(50)}
    assert len(values) == 50
    assert all(len(v) >= 40 and v.replace("-", "").replace("_", "").isalnum() for v in values)
